package gate

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
)

// The memory bound holds in total: closed children hold their bound from
// a budget shared by every checkout, so six at once (six git.log of a 700 MB
// commit from two devices reached 4.26 GB) run two at a time under a
// budget of two bounds, and a call that cannot get its share in its time is
// refused, busy. Shown first with a budget larger than six bounds (six run
// at once, their bounds summing past two), then held to two.
func TestTheMemoryBoundHoldsInTotal(t *testing.T) {
	for _, total := range []int{6 * 256, 2 * 256} {
		gittest.Home(t, "")
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		root, err := fsguard.OpenRoot(dir, fsguard.Options{Home: "/nonexistent-home"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		r, err := Open(root, Options{Served: []string{root.Path()}, MemoryLimitMiB: 256, Budget: NewMemoryBudget(total, 256), Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		// Each call is a closed git apply --cached reading its patch from a
		// pipe the test holds open: it runs until the pipe closes.
		var pipes []*io.PipeWriter
		done := make(chan error, 6)
		for range 6 {
			pr, pw := io.Pipe()
			pipes = append(pipes, pw)
			go func() {
				_, err := r.run(ctx, closed, openDecision, call{sub: subApply, stdin: pr})
				done <- err
			}()
		}
		running := func() int64 { return r.started.Load() }
		want := int64(total / 256)
		for deadline := time.Now().Add(20 * time.Second); running() < want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("budget %d MiB: %d of 6 calls started, want %d", total, running(), want)
			}
		}
		if total == 6*256 {
			t.Logf("with a budget of six bounds, %d closed children ran at once (%d MiB of bounds)", running(), running()*256)
		} else if running() != want {
			t.Fatalf("with a budget of two bounds, %d closed children ran at once", running())
		}
		// A call with no time left to wait for its share is refused, busy.
		if total == 2*256 {
			short, cancel := context.WithTimeout(ctx, time.Millisecond)
			_, err := r.run(short, closed, openDecision, call{sub: subRevParse, opts: []string{"HEAD"}})
			cancel()
			if !errors.Is(err, ErrMemoryBusy) {
				t.Fatalf("a call over the budget: %v", err)
			}
		}
		for _, pw := range pipes {
			pw.Close()
		}
		for range 6 {
			<-done // each ran, in turn (an empty patch is an error: that is not what is looked at)
		}
		if running() != 6 {
			t.Fatalf("%d of 6 calls ran in the end", running())
		}
	}
}
