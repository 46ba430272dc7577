package gate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// rawGit runs git the way a user would, for the baselines.
func rawGit(b *testing.B, dir string, stdin io.Reader, env []string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout = dir, stdin, io.Discard
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Run(); err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
}

func benchOpen(b *testing.B, dir string) *Repo {
	root, err := fsguard.OpenRoot(dir, fsguard.Options{Home: "/nonexistent"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	r, err := Open(root, Options{Served: []string{root.Path()}, Timeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkStatus: git.status through the gate (closed, warm decision cache)
// against raw git status --porcelain=v2. Target: ≤ 1.05× + 2 ms.
func BenchmarkStatus(b *testing.B) {
	for _, dirty := range []bool{false, true} {
		dir := gittest.BenchRepo(b, 57_000, 2_000, dirty)
		name := map[bool]string{false: "57k-clean", true: "57k-1000changed-1000untracked"}[dirty]
		r := benchOpen(b, dir)
		b.Run(name+"/raw", func(b *testing.B) {
			for b.Loop() {
				rawGit(b, dir, nil, nil, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
			}
		})
		b.Run(name+"/gate", func(b *testing.B) {
			if _, err := r.Status(context.Background(), trust.Phone(false)); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.Status(context.Background(), trust.Phone(false)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecision: a cached gate decision (a few lstats, and one fstatat
// per folder of the git folder), the same while a watch covers the git
// folder's shape (one poll instead of those fstatat: shapewatch.go), and a
// cold one (one git process). Target for the cached one: ≤ 5 µs.
func BenchmarkDecision(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, false)
	r := benchOpen(b, dir)
	cachedCall := func(b *testing.B) {
		if _, err := r.decide(context.Background(), trust.Phone(false), readGate, "x"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := r.decide(context.Background(), trust.Phone(false), readGate, "x"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(r.shape.dirs)), "folders")
	}
	b.Run("cached", cachedCall)
	b.Run("cached-watched", func(b *testing.B) {
		sw := r.WatchShape()
		if sw == nil {
			b.Skip("no cover of the git folder here")
		}
		defer sw.Close()
		cachedCall(b)
		if !sw.Covered() {
			b.Fatal("the cover closed")
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			r.mu.Lock()
			r.cache = cached{}
			r.mu.Unlock()
			if _, err := r.decide(context.Background(), trust.Phone(false), readGate, "x"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStageAll: git.stage {all} (status, secret and hard-link checks in
// Go, update-index --stdin) against git add -A. Target: ≤ 1.2×.
func BenchmarkStageAll(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, true)
	r := benchOpen(b, dir)
	reset := func(b *testing.B) {
		b.StopTimer()
		gittest.MustGit(b, dir, "reset", "-q")
		b.StartTimer()
	}
	b.Run("git-add-A", func(b *testing.B) {
		for b.Loop() {
			reset(b)
			rawGit(b, dir, nil, nil, "add", "-A")
		}
	})
	b.Run("gate", func(b *testing.B) {
		for b.Loop() {
			reset(b)
			res, err := r.Stage(context.Background(), trust.Phone(false), trust.Control, StageOptions{All: true})
			if err != nil || res.Count != 2000 {
				b.Fatalf("%+v %v", res, err)
			}
		}
	})
	b.StopTimer()
	gittest.MustGit(b, dir, "reset", "-q")
}

// BenchmarkDiff: git.diff of the work tree with 1,000 changed and 1,000
// untracked files (previews read through fsguard, secrets filtered), against
// raw git diff plus the previews git itself would make: a temporary index
// with add -N and one git diff.
func BenchmarkDiff(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, true)
	r := benchOpen(b, dir)
	b.Run("raw-diff", func(b *testing.B) {
		for b.Loop() {
			rawGit(b, dir, nil, nil, "diff")
		}
	})
	b.Run("raw-diff-with-add-N", func(b *testing.B) {
		tmp := filepath.Join(b.TempDir(), "index")
		env := []string{"GIT_INDEX_FILE=" + tmp}
		for b.Loop() {
			data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				b.Fatal(err)
			}
			rawGit(b, dir, nil, env, "add", "-N", ".")
			rawGit(b, dir, nil, env, "diff")
		}
	})
	b.Run("gate", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Diff(context.Background(), trust.Phone(false), trust.View, DiffOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// With a watcher's hold on the list cache (listcache.go), the
	// untracked list is git's answer kept from the first call. The
	// watcher's barrier is left out here (a function that says "up to
	// date"); rpc's BenchmarkWatcherSync prices it, and rpc's
	// BenchmarkDiffWatched runs the same with the real watcher.
	b.Run("gate-watched", func(b *testing.B) {
		w := r.Watch(func(context.Context) bool { return true })
		defer w.Close()
		time.Sleep(2 * racyWindow)
		diff := func() {
			if _, err := r.Diff(context.Background(), trust.Phone(false), trust.View, DiffOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		diff() // the first call asks git and keeps its answer
		for b.Loop() {
			diff()
		}
	})
}

// BenchmarkUntrackedPreviews: the previews alone, for 1,000 new files, in
// process through fsguard, against a temporary index with add -N and one
// git diff (the spec's 410 ms baseline).
func BenchmarkUntrackedPreviews(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, true)
	r := benchOpen(b, dir)
	var files []string
	for i := range 1000 {
		files = append(files, fmt.Sprintf("d%02d/new%04d.js", i%20, i))
	}
	b.Run("fsguard-previews", func(b *testing.B) {
		for b.Loop() {
			var w bytes.Buffer
			r.previews(&w, files, viewer{trust.Phone(false), trust.View})
		}
	})
}

// BenchmarkGitFolderShape: the shape check of the git folder, cached (one
// fstatat per folder) and walked afresh, on the 57k-file repository.
func BenchmarkGitFolderShape(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, false)
	r := benchOpen(b, dir)
	time.Sleep(2 * racyWindow)
	b.Run("cached", func(b *testing.B) {
		if err := r.checkLayout("x"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := r.checkLayout("x"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(r.shape.dirs)), "folders")
	})
	b.Run("cached-watched", func(b *testing.B) {
		sw := r.WatchShape()
		if sw == nil {
			b.Skip("no cover of the git folder here")
		}
		defer sw.Close()
		if err := r.checkLayout("x"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := r.checkLayout("x"); err != nil {
				b.Fatal(err)
			}
		}
		if !sw.Covered() {
			b.Fatal("the cover closed")
		}
	})
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			r.shape.dirs = nil
			if err := r.checkLayout("x"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSearchFollowingGitignore: a name search that leaves out what git
// ignores (git ls-files for the list, then the walk that skips it) against
// the plain walk of everything, in a 57k-file checkout with a 20k-file
// ignored node_modules. The list costs one git process; skipping the
// folder saves walking it.
func BenchmarkSearchFollowingGitignore(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, false)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 20_000 {
		p := filepath.Join(dir, "node_modules", fmt.Sprintf("pkg%03d", i%400), fmt.Sprintf("f%d.js", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r := benchOpen(b, dir)
	ctx := context.Background()
	b.Run("everything", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.root.Search(ctx, trust.View, "zzq", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("following-gitignore", func(b *testing.B) {
		for b.Loop() {
			ig, err := r.Ignored(ctx, trust.Phone(false))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.root.Search(ctx, trust.View, "zzq", ig); err != nil {
				b.Fatal(err)
			}
		}
	})
}
