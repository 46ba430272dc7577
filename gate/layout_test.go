package gate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// escape is a git folder entry that is a link out of the checkout, and the
// operation that makes git write (or read) through it.
type escape struct {
	name string
	// plant replaces an entry of dir's git folder with a link to a file or
	// folder under outside, and returns the path git writes through it.
	plant func(t *testing.T, dir, outside string) string
	op    func(r *Repo, tr trust.Trust) error
	// entry is the refused name, as the sentence shows it.
	entry string
}

func linkOut(t *testing.T, target, link string) {
	t.Helper()
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

var escapes = []escape{
	{name: "COMMIT_EDITMSG", entry: ".git/COMMIT_EDITMSG",
		plant: func(t *testing.T, dir, outside string) string {
			f := filepath.Join(outside, "bashrc")
			write(t, outside, map[string]string{"bashrc": "# mine\n"})
			linkOut(t, f, filepath.Join(dir, ".git", "COMMIT_EDITMSG"))
			return f
		},
		op: func(r *Repo, tr trust.Trust) error {
			_, err := r.Commit(ctx, tr, "echo $(id) > /tmp/pwned", false)
			return err
		}},
	{name: "logs/HEAD", entry: ".git/logs/HEAD",
		plant: func(t *testing.T, dir, outside string) string {
			f := filepath.Join(outside, "bashrc")
			write(t, outside, map[string]string{"bashrc": "# mine\n"})
			git(t, dir, "branch", "other")
			linkOut(t, f, filepath.Join(dir, ".git", "logs", "HEAD"))
			return f
		},
		op: func(r *Repo, tr trust.Trust) error { return r.Switch(ctx, tr, "other") }},
	{name: "refs/heads", entry: ".git/refs/heads",
		plant: func(t *testing.T, dir, outside string) string {
			heads := filepath.Join(outside, "heads")
			if err := os.MkdirAll(heads, 0o755); err != nil {
				t.Fatal(err)
			}
			linkOut(t, heads, filepath.Join(dir, ".git", "refs", "heads"))
			return filepath.Join(heads, "main")
		},
		op: func(r *Repo, tr trust.Trust) error {
			_, err := r.Commit(ctx, tr, "msg", false)
			return err
		}},
	{name: "worktrees", entry: ".git/worktrees",
		plant: func(t *testing.T, dir, outside string) string {
			wt := filepath.Join(outside, "worktrees")
			if err := os.MkdirAll(wt, 0o755); err != nil {
				t.Fatal(err)
			}
			linkOut(t, wt, filepath.Join(dir, ".git", "worktrees"))
			return filepath.Join(wt, "feature", "HEAD")
		},
		op: func(r *Repo, tr trust.Trust) error {
			_, err := r.CreateWorktree(ctx, tr, "feature")
			return err
		}},
}

// Entries of the git folder that are links out of it make git write
// outside the served folder (a reflog line with the allowlisted user.name,
// a commit message, a ref, a worktree's files). The desktop's git follows
// them; the closed gate refuses the folder, naming the entry.
func TestGitFolderLinksOut(t *testing.T) {
	for _, e := range escapes {
		t.Run(e.name, func(t *testing.T) {
			gittest.Home(t, "")
			// 1. Without the rule: git writes outside.
			dir, outside := withStaged(t, "user.name", "$(touch /tmp/x)"), t.TempDir()
			target := e.plant(t, dir, outside)
			before, _ := os.ReadFile(target)
			if err := e.op(open(t, dir), desktop); err != nil {
				t.Fatalf("desktop: %v", err)
			}
			after, err := os.ReadFile(target)
			if err != nil || string(after) == string(before) {
				t.Fatalf("not reproduced: %s unchanged (%v)", target, err)
			}
			// 2. The closed gate refuses before any git call.
			dir, outside = withStaged(t, "user.name", "$(touch /tmp/x)"), t.TempDir()
			target = e.plant(t, dir, outside)
			before, _ = os.ReadFile(target)
			r := open(t, dir)
			wantRefusal(t, e.op(r, closed), ErrGitFolder, e.entry, "is a symlink")
			if after, _ := os.ReadFile(target); string(after) != string(before) {
				t.Fatalf("written outside through the closed gate: %q", after)
			}
			if n := r.started.Load(); n != 0 {
				t.Fatalf("%d git processes started before the refusal", n)
			}
		})
	}
}

// objects/pack as a link to another repository's packs lets a view device
// read that repository's commits and files by abbreviated id.
func TestGitFolderBorrowedPacks(t *testing.T) {
	gittest.Home(t, "")
	other := gittest.Init(t, map[string]string{"theirs.txt": "THEIR-SECRET\n"})
	git(t, other, "gc", "-q")
	oid := strings.TrimSpace(git(t, other, "rev-parse", "--short", "HEAD"))
	build := func() string {
		dir := gittest.Init(t, nil) // its own objects stay loose
		linkOut(t, filepath.Join(other, ".git", "objects", "pack"), filepath.Join(dir, ".git", "objects", "pack"))
		return dir
	}
	full := func(short string) string {
		return strings.TrimSpace(git(t, other, "rev-parse", short))
	}
	dir := build()
	shown, err := open(t, dir).Show(ctx, desktop, trust.Full, full(oid), "")
	if err != nil || !strings.Contains(shown.Diff, "THEIR-SECRET") {
		t.Fatalf("not reproduced: %v %+v", err, shown)
	}
	_, err = open(t, build()).Show(ctx, closed, trust.View, full(oid), "")
	wantRefusal(t, err, ErrGitFolder, ".git/objects/pack", "is a symlink")
}

// Alternates are refused for the closed gate whatever their spelling: a
// line with a trailing space or in C quotes (git keeps the space and
// unquotes), and a hop through a folder inside .git whose own alternates
// lead out (git follows them recursively). Each form is first shown to
// work with plain git.
func TestAlternatesInEverySpelling(t *testing.T) {
	gittest.Home(t, "")
	other := gittest.Init(t, map[string]string{"theirs.txt": "THEIR-SECRET\n"})
	blob := strings.TrimSpace(git(t, other, "rev-parse", "HEAD:theirs.txt"))
	objects := filepath.Join(other, ".git", "objects")
	head := strings.TrimSpace(git(t, other, "rev-parse", "HEAD"))
	for _, c := range []struct {
		name  string
		files func(t *testing.T, dir string) map[string]string
	}{
		{"trailing space", func(t *testing.T, _ string) map[string]string {
			if err := os.Rename(objects, objects+" "); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Rename(objects+" ", objects) })
			return map[string]string{".git/objects/info/alternates": objects + " \n"}
		}},
		{"C-quoted", func(*testing.T, string) map[string]string {
			return map[string]string{".git/objects/info/alternates": `"` + strings.ReplaceAll(objects, "/", `\057`) + "\"\n"}
		}},
		{"recursive through .git", func(_ *testing.T, dir string) map[string]string {
			return map[string]string{
				".git/objects/info/alternates":     filepath.Join(dir, ".git", "hop", "objects") + "\n",
				".git/hop/objects/info/alternates": objects + "\n",
				".git/hop/objects/.keep":           "",
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := gittest.Init(t, nil)
			write(t, dir, c.files(t, dir))
			if out := git(t, dir, "!", "cat-file", "-p", blob); !strings.Contains(out, "THEIR-SECRET") {
				t.Fatalf("not reproduced: %s", out)
			}
			_, err := open(t, dir).Show(ctx, closed, trust.View, head, "")
			wantRefusal(t, err, ErrGitFolder, "borrows objects")
		})
	}
}

// A FIFO or a device where git reads its state (info/exclude,
// info/attributes, info/sparse-checkout) stalls git or feeds it forever.
func TestGitFolderSpecialFiles(t *testing.T) {
	gittest.Home(t, "")
	fifo := func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, ".git", "info", "exclude"), 0o644) }
	dir := gittest.Init(t, nil)
	os.Remove(filepath.Join(dir, ".git", "info", "exclude"))
	if err := fifo(dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		t.Fatal("not reproduced: git status did not block on the FIFO")
	case <-time.After(time.Second):
		cmd.Process.Kill()
		<-done
	}
	_, err := open(t, dir).Status(ctx, closed)
	wantRefusal(t, err, ErrGitFolder, ".git/info/exclude", "is a FIFO")

	dir = gittest.Init(t, nil)
	linkOut(t, "/dev/zero", filepath.Join(dir, ".git", "info", "attributes"))
	_, err = open(t, dir).Status(ctx, closed)
	wantRefusal(t, err, ErrGitFolder, ".git/info/attributes", "is a symlink")
}

// A hard-linked file where git writes in place (a reflog line) writes into
// every name the file has; objects may be hard-linked (git clone --local
// does it).
func TestGitFolderHardLinks(t *testing.T) {
	gittest.Home(t, "")
	src := gittest.Init(t, nil)
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, "", "clone", "-q", "--local", src, clone)
	if _, err := open(t, clone).Status(ctx, closed); err != nil {
		t.Fatalf("a local clone's hard-linked objects: %v", err)
	}
	dir, outside := withStaged(t), t.TempDir()
	write(t, outside, map[string]string{"bashrc": "# mine\n"})
	logs := filepath.Join(dir, ".git", "logs", "HEAD")
	os.Remove(logs)
	if err := os.Link(filepath.Join(outside, "bashrc"), logs); err != nil {
		t.Fatal(err)
	}
	_, err := open(t, dir).Commit(ctx, closed, "msg", false)
	wantRefusal(t, err, ErrGitFolder, ".git/logs/HEAD", "hard-linked")
}

// .git/config as a symlink to a tracked file: switching branches changes
// what git reads, while a decision keyed on the link itself stays. Without
// the shape check the next status runs the new branch's filter; with it,
// the folder is refused from the first call.
func TestConfigLinkedToTrackedFile(t *testing.T) {
	build := func(t *testing.T, prog string) string {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		cfg, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, map[string]string{"cfg": string(cfg)})
		git(t, dir, "add", "cfg")
		git(t, dir, "commit", "-q", "-m", "inert config")
		git(t, dir, "switch", "-q", "-c", "evil")
		write(t, dir, map[string]string{
			"cfg":            string(cfg) + "[filter \"x\"]\n\tclean = " + prog + "\n",
			".gitattributes": "*.txt filter=x\n",
		})
		git(t, dir, "add", "cfg", ".gitattributes")
		git(t, dir, "commit", "-q", "-m", "filter")
		git(t, dir, "switch", "-q", "main")
		linkOut(t, "../cfg", filepath.Join(dir, ".git", "config"))
		return dir
	}
	gittest.Home(t, "")
	// Without the shape check: the decision made on main is reused after
	// the switch, so the filter the new config defines is not switched off
	// (the kernel wall may still stop the program itself: this shows the
	// decision's hole, not the wall).
	prog, _ := gittest.PayloadFile(t)
	dir := build(t, prog)
	r := open(t, dir)
	r.shapeOffForTest = true
	if _, err := r.Status(ctx, closed); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * racyWindow)
	if _, err := r.Status(ctx, closed); err != nil { // cached now
		t.Fatal(err)
	}
	git(t, dir, "switch", "-q", "evil")
	if !strings.Contains(git(t, dir, "config", "--local", "--list"), "filter.x.clean=") {
		t.Fatal("fixture: the switch did not change the config git reads")
	}
	d, err := r.decide(ctx, closed, readGate, "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.overrides) != 0 {
		t.Fatal("not reproduced: the decision saw the new config")
	}
	// With it: refused from the start.
	prog, marker := gittest.PayloadFile(t)
	dir = build(t, prog)
	r = open(t, dir)
	_, err = r.Status(ctx, closed)
	wantRefusal(t, err, ErrGitFolder, ".git/config", "is a symlink")
	git(t, dir, "switch", "-q", "evil")
	dirty(t, dir)
	_, err = r.Status(ctx, closed)
	wantRefusal(t, err, ErrGitFolder)
	if gittest.Fired(marker) {
		t.Fatal("the filter ran through the closed gate")
	}
}

// The shape check costs one stat per folder once the git folder has been
// walked, and a change in any folder is seen by the next call.
func TestGitFolderShapeIsCachedByFolder(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	time.Sleep(2 * racyWindow)
	if err := r.checkLayout("x"); err != nil {
		t.Fatal(err)
	}
	walked := r.shape.dirs
	if err := r.checkLayout("x"); err != nil {
		t.Fatal(err)
	}
	if &r.shape.dirs[0] != &walked[0] {
		t.Fatal("walked again with nothing changed")
	}
	linkOut(t, "/etc/passwd", filepath.Join(dir, ".git", "refs", "heads", "deep"))
	wantRefusal(t, r.checkLayout("x"), ErrGitFolder, ".git/refs/heads/deep")

	// The git folder itself swapped for a link to another repository's,
	// after Open: the descriptor held still names the old folder, git
	// would follow the path.
	dir = gittest.Init(t, nil)
	r = open(t, dir)
	if err := r.checkLayout("x"); err != nil {
		t.Fatal(err)
	}
	other := gittest.Init(t, nil)
	if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "old-git")); err != nil {
		t.Fatal(err)
	}
	linkOut(t, filepath.Join(other, ".git"), filepath.Join(dir, ".git"))
	wantRefusal(t, r.checkLayout("x"), ErrGitFolder)
}

// The walk reads folders from the kernel's records itself (readFolder):
// what it finds must be what os.ReadDir finds, name for name and type for
// type, in the same order, across many getdents (a folder of thousands of
// loose objects, 64 KiB of records at a time), and a link, FIFO or socket among thousands of objects is
// still refused by name.
func TestGitFolderWalkSeesWhatReadDirSees(t *testing.T) {
	dir := t.TempDir()
	for i := range 1500 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d-%s", i, strings.Repeat("x", i%40))), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, inObjects := range []bool{false, true} {
		w := &layoutWalk{commonDir: dir}
		got, gone, err := w.readFolder(".", inObjects)
		if err != nil || gone {
			t.Fatalf("readFolder: %v (gone %v)", err, gone)
		}
		var wantHere []folderEntry
		for _, e := range want {
			if !inObjects || !e.Type().IsRegular() {
				wantHere = append(wantHere, folderEntry{name: e.Name(), typ: e.Type()})
			}
		}
		if !slices.Equal(got, wantHere) || w.entries != len(want) {
			t.Errorf("in objects %v: %d entries counted, %d returned; want %d counted, %d returned as os.ReadDir has them",
				inObjects, w.entries, len(got), len(want), len(wantHere))
		}
	}

	repo := gittest.Init(t, nil)
	objects := filepath.Join(repo, ".git", "objects", "ab")
	if err := os.MkdirAll(objects, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 1200 {
		if err := os.WriteFile(filepath.Join(objects, fmt.Sprintf("%038x", i)), nil, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := open(t, repo).Status(ctx, closed); err != nil {
		t.Fatalf("a folder of 1,200 objects: %v", err)
	}
	planted := filepath.Join(objects, fmt.Sprintf("%038x", 600)+"z")
	for kind, plant := range map[string]func(string) error{
		"is a symlink": func(p string) error { return os.Symlink("/dev/zero", p) },
		"is a FIFO":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		if err := plant(planted); err != nil {
			t.Fatal(err)
		}
		_, err := open(t, repo).Status(ctx, closed)
		wantRefusal(t, err, ErrGitFolder, ".git/objects/ab/"+filepath.Base(planted), kind)
		if err := os.Remove(planted); err != nil {
			t.Fatal(err)
		}
	}
}
