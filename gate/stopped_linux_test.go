package gate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

// mknod makes a character device node (major, minor) at path: /dev/zero is
// 1,5 and /dev/urandom 1,9. It needs root; the test is skipped without, or
// fails when the run requires root (GATEHOUSE_REQUIRE=root,
// internal/testenv).
func mknod(t *testing.T, path string, major, minor uint32) {
	t.Helper()
	err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor)))
	testenv.Require(t, "root", err == nil, fmt.Sprintf("cannot make a device node here: %v", err))
}

// plainWaitsOnFIFO starts plain git with args in dir and waits until the
// kernel says it sleeps opening a FIFO: the stall shown without gatehouse.
// It skips the test where /proc does not name the wait.
func plainWaitsOnFIFO(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { cmd.Process.Kill(); <-done }()
	for range 400 {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("not reproduced: plain git %v finished (%v)", args, err)
		case <-time.After(25 * time.Millisecond):
		}
		if waitingOnFIFO(cmd.Process.Pid) {
			return
		}
	}
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", cmd.Process.Pid))
	t.Skipf("this kernel does not name the wait of plain git %v (wchan %q)", args, wchan)
}

// eachWall runs f with Landlock on and off: what is shown here never
// depends on the kernel wall.
func eachWall(t *testing.T, f func(t *testing.T, landlockOff bool)) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("landlockOff=%v", off), func(t *testing.T) { f(t, off) })
	}
}

// A FIFO named .gitignore or .gitattributes blocks git's open of it until
// a writer comes, which none does: every status, diff and stage waited for
// the deadline and said only "took too long". git is now stopped as soon as
// the kernel shows it waiting on a FIFO (errFIFOWait, not the deadline),
// and the sentence names the file.
func TestFIFOInTheTreeStopsGitAndIsNamed(t *testing.T) {
	for _, c := range []struct {
		name, fifo string
		op         func(r *Repo, tr trust.Trust) error
		plain      []string
	}{
		{name: ".gitignore in a folder", fifo: "src/.gitignore", plain: []string{"status", "--porcelain"},
			op: func(r *Repo, tr trust.Trust) error { _, err := r.Status(ctx, tr); return err }},
		{name: ".gitattributes at the top", fifo: ".gitattributes", plain: []string{"diff"},
			op: func(r *Repo, tr trust.Trust) error {
				_, err := r.Diff(ctx, tr, trust.Full, DiffOptions{})
				return err
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachWall(t, func(t *testing.T, landlockOff bool) {
				gittest.Home(t, "")
				dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "src/main.go": "package main\n"})
				write(t, dir, map[string]string{"a.txt": "changed\n"})
				if err := mkfifo(filepath.Join(dir, c.fifo)); err != nil {
					t.Fatal(err)
				}
				plainWaitsOnFIFO(t, dir, c.plain...)
				for _, tr := range []trust.Trust{desktop, closed} {
					r := open(t, dir)
					r.wall.landlockOffForTest = landlockOff
					err := c.op(r, tr)
					wantRefusal(t, err, ErrTimeout, c.fifo+" in this checkout is a FIFO", "Replace it with a regular file")
					if !errors.Is(err, errFIFOWait) {
						t.Fatalf("%v: git ran to its deadline: %v", tr, err)
					}
				}
			})
		})
	}
}

// A device named .gitattributes (/dev/zero's kind) is read without end:
// git's line reader grows until the memory bound stops it, and the phone
// was told the repository may hold a huge object. The sentence now names
// the device.
func TestDeviceAttributesAreNamedNotAHugeObject(t *testing.T) {
	eachWall(t, func(t *testing.T, landlockOff bool) {
		gittest.Home(t, "")
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		// The same size: status reads the file, and so its attributes.
		write(t, dir, map[string]string{"a.txt": "b\n"})
		mknod(t, filepath.Join(dir, ".gitattributes"), 1, 5)
		plain := exec.Command("sh", "-c", "ulimit -v 1048576; exec git status --porcelain")
		plain.Dir = dir
		if out, _ := plain.CombinedOutput(); !strings.Contains(string(out), "Out of memory") {
			t.Fatalf("not reproduced: plain git under 1 GiB did not run out of memory:\n%s", out)
		}
		r := open(t, dir)
		r.wall.landlockOffForTest = landlockOff
		_, err := r.Status(ctx, closed)
		wantRefusal(t, err, ErrOutOfMemory, ".gitattributes in this checkout is a character device", "1 GiB", "Replace it with a regular file")
		if s := refusal.Sentence(err); strings.Contains(s, "huge object") {
			t.Fatalf("still blamed on a huge object: %q", s)
		}
	})
}

// A device git reads without end that takes no memory (/dev/urandom's
// kind: its lines are parsed and dropped) runs git to its deadline; the
// sentence names it there too.
func TestDeadlineNamesTheDevice(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"docs/a.txt": "a\n"})
	write(t, dir, map[string]string{"docs/a.txt": "changed\n"})
	mknod(t, filepath.Join(dir, "docs", ".gitattributes"), 1, 9)
	r := open(t, dir)
	r.maxTime = 2 * time.Second
	_, err := r.Diff(ctx, desktop, trust.Full, DiffOptions{})
	wantRefusal(t, err, ErrTimeout, "docs/.gitattributes in this checkout is a character device", "git reads it without end")
	if errors.Is(err, errFIFOWait) {
		t.Fatal("a device read was taken for a FIFO wait")
	}
}

// Stopped for no file git reads, git keeps the sentences it had.
func TestStoppedWithNothingToNameKeepsItsSentence(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil { // a FIFO git only lstats
		t.Fatal(err)
	}
	r := open(t, dir)
	err := r.whyStopped(fmt.Errorf("git status: %w", ErrTimeout), false)
	if refusal.Sentence(err) != ErrTimeout.Sentence() {
		t.Fatalf("got %q", refusal.Sentence(err))
	}
	if _, err := r.Status(ctx, closed); err != nil {
		t.Fatalf("a FIFO git does not open: %v", err)
	}
}
