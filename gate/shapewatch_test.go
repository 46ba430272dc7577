//go:build linux

package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"golang.org/x/sys/unix"
)

// shapeAttack is a change to a checkout's git folder that the closed gate's
// shape check refuses, made after the gate has walked the folder.
type shapeAttack struct {
	name string
	// plant makes the change in dir's git folder (outside is a folder of
	// the same file system outside the checkout).
	plant func(t *testing.T, dir, outside string)
	want  []string // parts of the refusal's sentence
	// perCall: refused whatever the watch says, by a check the decision
	// makes at every call (the alternates files' size, the git folder's
	// path), so a watch that drops no shape lets it through too.
	perCall bool
	// closesCover: the cover can no longer vouch for the folder after it.
	closesCover bool
}

var shapeAttacks = []shapeAttack{
	{name: "a folder swapped for a symlink", want: []string{".git/refs/heads", "is a symlink"},
		plant: func(t *testing.T, dir, outside string) {
			heads := filepath.Join(outside, "heads")
			if err := os.MkdirAll(heads, 0o755); err != nil {
				t.Fatal(err)
			}
			linkOut(t, heads, filepath.Join(dir, ".git", "refs", "heads"))
		}},
	{name: "a FIFO where git reads", want: []string{".git/info/exclude", "is a FIFO"},
		plant: func(t *testing.T, dir, _ string) {
			plantFIFO(t, filepath.Join(dir, ".git", "info", "exclude"))
		}},
	{name: "a socket", want: []string{".git/info/attributes", "is a socket"},
		plant: func(t *testing.T, dir, _ string) {
			if err := unix.Mknod(filepath.Join(dir, ".git", "info", "attributes"), unix.S_IFSOCK|0o644, 0); err != nil {
				t.Fatal(err)
			}
		}},
	{name: "a device", want: []string{".git/info/sparse-checkout", "is a device"},
		plant: func(t *testing.T, dir, _ string) {
			err := unix.Mknod(filepath.Join(dir, ".git", "info", "sparse-checkout"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5)))
			if errors.Is(err, unix.EPERM) {
				t.Skip("making a device needs privileges this test does not have")
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
	{name: "a file swapped for a symlink", want: []string{".git/logs/HEAD", "is a symlink"},
		plant: func(t *testing.T, dir, outside string) {
			write(t, outside, map[string]string{"bashrc": "# mine\n"})
			linkOut(t, filepath.Join(outside, "bashrc"), filepath.Join(dir, ".git", "logs", "HEAD"))
		}},
	{name: "a hard link planted", want: []string{".git/COMMIT_EDITMSG", "hard-linked"},
		plant: func(t *testing.T, dir, outside string) {
			write(t, outside, map[string]string{"bashrc": "# mine\n"})
			msg := filepath.Join(dir, ".git", "COMMIT_EDITMSG")
			if err := os.RemoveAll(msg); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(outside, "bashrc"), msg); err != nil {
				t.Fatal(err)
			}
		}},
	{name: "a new folder holding a link", want: []string{".git/refs/heads/topic/x", "is a symlink"},
		plant: func(t *testing.T, dir, _ string) {
			topic := filepath.Join(dir, ".git", "refs", "heads", "topic")
			if err := os.Mkdir(topic, 0o755); err != nil {
				t.Fatal(err)
			}
			linkOut(t, "/etc/passwd", filepath.Join(topic, "x"))
		}},
	{name: "a folder moved in from outside", want: []string{".git/refs/remotes/origin", "is a symlink"},
		plant: func(t *testing.T, dir, outside string) {
			remotes := filepath.Join(outside, "remotes")
			if err := os.MkdirAll(remotes, 0o755); err != nil {
				t.Fatal(err)
			}
			linkOut(t, outside, filepath.Join(remotes, "origin"))
			if err := os.Rename(remotes, filepath.Join(dir, ".git", "refs", "remotes")); err != nil {
				t.Fatal(err)
			}
		}},
	{name: "a link planted in a folder of loose objects", want: []string{".git/objects/ab/cdef", "is a symlink"},
		plant: func(t *testing.T, dir, _ string) {
			linkOut(t, "/etc/passwd", filepath.Join(dir, ".git", "objects", "ab", "cdef"))
		}},
	{name: "a folder of the same file system mounted over one", want: []string{".git/refs/heads/main", "is a symlink"},
		plant: func(t *testing.T, dir, outside string) {
			heads := filepath.Join(outside, "heads")
			if err := os.MkdirAll(heads, 0o755); err != nil {
				t.Fatal(err)
			}
			linkOut(t, "/etc/passwd", filepath.Join(heads, "main"))
			mount(t, heads, filepath.Join(dir, ".git", "refs", "heads"), "", unix.MS_BIND)
		}},
	{name: "another file system mounted over a folder", want: []string{".git/refs/heads/main", "is a symlink"}, closesCover: true,
		plant: func(t *testing.T, dir, _ string) {
			heads := filepath.Join(dir, ".git", "refs", "heads")
			mount(t, "tmpfs", heads, "tmpfs", 0)
			linkOut(t, "/etc/passwd", filepath.Join(heads, "main"))
		}},
	{name: "alternates planted", want: []string{".git/objects/info/alternates", "borrows objects"}, perCall: true,
		plant: func(t *testing.T, dir, outside string) {
			write(t, dir, map[string]string{".git/objects/info/alternates": outside + "\n"})
		}},
	{name: "the git folder swapped for a link", perCall: true,
		plant: func(t *testing.T, dir, _ string) {
			other := gittest.Init(t, nil)
			if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "old-git")); err != nil {
				t.Fatal(err)
			}
			linkOut(t, filepath.Join(other, ".git"), filepath.Join(dir, ".git"))
		}},
}

// plantFIFO puts a FIFO where a file may be.
func plantFIFO(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(p); err != nil {
		t.Fatal(err)
	}
}

// mount mounts source on target until the test ends, or skips the test
// where this process may not mount.
func mount(t *testing.T, source, target, fstype string, flags uintptr) {
	t.Helper()
	if err := unix.Mount(source, target, fstype, flags, ""); err != nil {
		t.Skipf("mounting needs privileges this test does not have: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(target, unix.MNT_DETACH) })
}

// shapeFixture is a committed checkout whose git folder has a reflog, a
// commit message and a folder of loose objects (objects/ab), and an outside
// folder on the same file system.
func shapeFixture(t *testing.T) (dir, outside string) {
	t.Helper()
	dir = withStaged(t)
	git(t, dir, "commit", "-q", "-m", "one")
	write(t, dir, map[string]string{".git/objects/ab/.keep": ""})
	return dir, t.TempDir()
}

// decideTwice makes a closed decision twice: the first walks the git
// folder, the second must use what it found.
func decideTwice(t *testing.T, r *Repo) {
	t.Helper()
	for range 2 {
		if _, err := r.decide(ctx, closed, readGate, "x"); err != nil {
			t.Fatalf("before the attack: %v", err)
		}
	}
}

// While a watch covers the git folder, a decision trusts the last walk
// without a stat of any folder. So each change that the shape check
// refuses, made right before a call, must still be refused by that call,
// with the same sentence as without the watch: with the watch's
// invalidation off, the change gets through (the attack works against a
// cover that trusts a stale shape); with it on, the call is refused as
// without a watch.
func TestShapeWatchRefusesAttacksMadeBeforeTheCall(t *testing.T) {
	for _, a := range shapeAttacks {
		t.Run(a.name, func(t *testing.T) {
			gittest.Home(t, "")
			// Without a watch: the sentence to match.
			dir, outside := shapeFixture(t)
			r := open(t, dir)
			decideTwice(t, r)
			a.plant(t, dir, outside)
			_, err := r.decide(ctx, closed, readGate, "x")
			wantRefusal(t, err, ErrGitFolder, a.want...)
			want := refusal.Sentence(err)

			// A watch whose events change nothing: the attack gets through
			// the shape check.
			dir, outside = shapeFixture(t)
			r = open(t, dir)
			sw := r.WatchShape()
			if sw == nil {
				t.Fatal("no cover on this file system")
			}
			sw.invalidationOffForTest = true
			decideTwice(t, r)
			if r.shape.walks != 1 || r.shape.restats != 0 {
				t.Fatalf("covered: %d walks, %d re-stats of every folder; want 1 and 0", r.shape.walks, r.shape.restats)
			}
			a.plant(t, dir, outside)
			_, err = r.decide(ctx, closed, readGate, "x")
			switch {
			case a.perCall && err == nil:
				t.Fatal("a check made at every call let the change through")
			case a.perCall:
				wantRefusal(t, err, ErrGitFolder, a.want...)
			case err != nil:
				t.Fatalf("not reproduced: refused without the watch's invalidation: %v", err)
			}

			// The watch as it is: refused exactly as without it.
			dir, outside = shapeFixture(t)
			r = open(t, dir)
			sw = r.WatchShape()
			decideTwice(t, r)
			a.plant(t, dir, outside)
			_, err = r.decide(ctx, closed, readGate, "x")
			wantRefusal(t, err, ErrGitFolder, a.want...)
			if got := refusal.Sentence(err); got != want {
				t.Errorf("sentence with the watch %q, without %q", got, want)
			}
			if sw.Covered() == a.closesCover {
				t.Errorf("covered after the attack: %v", sw.Covered())
			}
			if r.shape.restats != 0 && sw.Covered() {
				t.Errorf("%d re-stats of every folder while covered", r.shape.restats)
			}
		})
	}
}

// Events lost to a full queue (the kernel's max_queued_events) drop the
// shape like any event: a FIFO planted after the queue overflowed, whose
// own event the kernel then dropped, is refused.
func TestShapeWatchAfterOverflow(t *testing.T) {
	gittest.Home(t, "")
	queued := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		queued, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if queued <= 0 || queued > 100_000 {
		t.Skipf("max_queued_events is %d: too many files to overflow it", queued)
	}
	for _, off := range []bool{true, false} {
		dir, _ := shapeFixture(t)
		r := open(t, dir)
		sw := r.WatchShape()
		sw.invalidationOffForTest = off
		decideTwice(t, r)
		flood := filepath.Join(dir, ".git", "objects", "ab")
		for i := range queued + 100 {
			if err := os.WriteFile(filepath.Join(flood, fmt.Sprintf("o%06d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		plantFIFO(t, filepath.Join(dir, ".git", "info", "exclude"))
		_, err := r.decide(ctx, closed, readGate, "x")
		if off {
			if err != nil {
				t.Fatalf("not reproduced: refused with the watch's invalidation off: %v", err)
			}
			continue
		}
		wantRefusal(t, err, ErrGitFolder, ".git/info/exclude", "is a FIFO")
		if !sw.Covered() {
			t.Error("the cover closed after an overflow: the walk after it re-establishes it")
		}
	}
}

// A covered git folder is walked once, then only when it changes (git at
// the desk making a branch); between, no folder is stat'ed.
func TestShapeWatchWalksOnlyAfterAChange(t *testing.T) {
	gittest.Home(t, "")
	dir, _ := shapeFixture(t)
	r := open(t, dir)
	sw := r.WatchShape()
	defer sw.Close()
	for range 50 {
		if _, err := r.decide(ctx, closed, readGate, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if r.shape.walks != 1 || r.shape.restats != 0 {
		t.Fatalf("50 calls: %d walks, %d re-stats; want 1 and 0", r.shape.walks, r.shape.restats)
	}
	git(t, dir, "branch", "-q", "topic/one")
	for range 50 {
		if _, err := r.decide(ctx, closed, readGate, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if r.shape.walks != 2 || r.shape.restats != 0 {
		t.Fatalf("after a branch: %d walks, %d re-stats; want 2 and 0", r.shape.walks, r.shape.restats)
	}
	// The folder that branch made is watched now: a link planted in it
	// is refused.
	linkOut(t, "/etc/passwd", filepath.Join(dir, ".git", "refs", "heads", "topic", "two"))
	_, err := r.decide(ctx, closed, readGate, "x")
	wantRefusal(t, err, ErrGitFolder, ".git/refs/heads/topic/two", "is a symlink")
}

// Past its bound of folders, or closed, a watch no longer covers the
// folder, and every call re-stats each folder as without it.
func TestShapeWatchUncovered(t *testing.T) {
	gittest.Home(t, "")
	dir, _ := shapeFixture(t)
	r := open(t, dir)
	sw := r.WatchShape()
	sw.limit = 3
	decideTwice(t, r)
	if sw.Covered() {
		t.Fatal("still covering past its bound")
	}
	// Each call walks or re-stats (a walk when the last one was too
	// recent to trust its times: racyWindow).
	if n := r.shape.walks + r.shape.restats; n != 2 {
		t.Fatalf("two calls past the bound: %d walks and re-stats; want 2", n)
	}
	linkOut(t, "/etc/passwd", filepath.Join(dir, ".git", "refs", "heads", "x"))
	_, err := r.decide(ctx, closed, readGate, "x")
	wantRefusal(t, err, ErrGitFolder, ".git/refs/heads/x")

	dir, _ = shapeFixture(t)
	r = open(t, dir)
	sw = r.WatchShape()
	decideTwice(t, r)
	sw.Close()
	decideTwice(t, r)
	if n := r.shape.walks + r.shape.restats; sw.Covered() || n != 3 {
		t.Fatalf("closed: covered %v, %d walks and re-stats; want false and 3", sw.Covered(), n)
	}
}

// Only a file system whose every change goes through this kernel is
// covered: inotify does not hear what another machine writes to a network
// share.
func TestShapeWatchOnlyOnLocalFileSystems(t *testing.T) {
	if localFileSystem("/proc") {
		t.Error("/proc counted as a local file system")
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(t.TempDir(), &fs); err != nil {
		t.Fatal(err)
	}
	if _, ok := localFileSystems[int64(fs.Type)]; ok != localFileSystem(t.TempDir()) {
		t.Error("localFileSystem disagrees with its table")
	}
}
