package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// expiring is a context whose deadline passes when the test says so: the
// runner sees what a deadline gives it (DeadlineExceeded), at a moment the
// test picks by the state git is in, not by a clock.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiring(t *testing.T) *expiring {
	c := &expiring{Context: context.Background(), done: make(chan struct{})}
	t.Cleanup(c.expire)
	return c
}

func (c *expiring) Done() <-chan struct{} { return c.done }
func (c *expiring) expire()               { c.once.Do(func() { close(c.done) }) }
func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// waitFor polls until ok holds, failing the test after a minute.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// A git change stopped at its deadline cleans up after itself. The stage
// runs a clean filter (the desktop's trust, where filters run) that says it
// started and then sleeps: git update-index holds .git/index.lock from
// before the filter to the index's write. The deadline passes while the
// filter sleeps. Killed at once with SIGKILL (the old stop), git leaves
// index.lock behind and the user's own git add fails on it; stopped with
// SIGTERM first, git deletes it on the way out.
func TestStoppedChangeLeavesNoLock(t *testing.T) {
	for _, old := range []bool{true, false} {
		name := map[bool]string{true: "SIGKILL at once", false: "SIGTERM first"}[old]
		t.Run(name, func(t *testing.T) {
			gittest.Home(t, "")
			dir := gittest.Init(t, map[string]string{"a.txt": "a\n", ".gitattributes": "a.txt filter=slow\n"})
			started := filepath.Join(t.TempDir(), "filter-started")
			filter := filepath.Join(t.TempDir(), "slow-clean")
			if err := os.WriteFile(filter, []byte("#!/bin/sh\ntouch '"+started+"'\nexec sleep 600\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			git(t, dir, "config", "filter.slow.clean", filter)
			write(t, dir, map[string]string{"a.txt": "a longer line, so the size tells git it changed\n"})
			killAtOnceForTest.Store(old)
			t.Cleanup(func() { killAtOnceForTest.Store(false) })

			r := open(t, dir)
			deadline := newExpiring(t)
			done := make(chan error, 1)
			go func() {
				_, err := r.Stage(deadline, desktop, trust.Full, StageOptions{Paths: []string{"a.txt"}})
				done <- err
			}()
			waitFor(t, "the clean filter to start", func() bool { _, err := os.Stat(started); return err == nil })
			lock := filepath.Join(dir, ".git", "index.lock")
			if _, err := os.Stat(lock); err != nil {
				t.Fatalf("git runs the filter without holding index.lock: %v", err)
			}
			deadline.expire()
			if err := <-done; !errors.Is(err, ErrTimeout) {
				t.Fatalf("the stopped stage gave %v, want ErrTimeout", err)
			}

			git(t, dir, "config", "--unset", "filter.slow.clean")
			_, err := os.Stat(lock)
			if old {
				if err != nil {
					t.Fatalf("not reproduced: SIGKILL left no index.lock (%v)", err)
				}
				if out := git(t, dir, "!", "add", "a.txt"); !strings.Contains(out, "index.lock': File exists") {
					t.Fatalf("not reproduced: the user's git add after SIGKILL said %q", out)
				}
				return
			}
			if err == nil {
				t.Fatal("the stopped git left .git/index.lock")
			}
			git(t, dir, "add", "a.txt")
			write(t, dir, map[string]string{"b.txt": "b\n"})
			if _, err := r.Stage(ctx, closed, trust.Full, StageOptions{All: true}); err != nil {
				t.Fatalf("the next change: %v", err)
			}
		})
	}
}
