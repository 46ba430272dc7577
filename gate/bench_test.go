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
	"github.com/gatehouse/gatehouse/trust"
)

// The benchmarks run gatehouse and raw git side by side on synthetic
// repositories shaped like the spec's baseline (57,000 files in 2,000
// folders), built on first use outside CI in $GATEHOUSE_BENCH_DIR or the
// user's cache folder, and kept.

func benchDir(b *testing.B) string {
	if testing.Short() {
		b.Skip("the benchmark repositories are built outside CI (-short)")
	}
	if d := os.Getenv("GATEHOUSE_BENCH_DIR"); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		b.Skip("no cache folder")
	}
	return filepath.Join(c, "gatehouse-bench")
}

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

func mustGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// benchRepo returns a committed repository of files in dirs folders; dirty
// adds 1,000 changed and 1,000 untracked files.
func benchRepo(b *testing.B, files, dirs int, dirty bool) string {
	name := fmt.Sprintf("repo-%d-%d", files, dirs)
	if dirty {
		name += "-dirty"
	}
	dir := filepath.Join(benchDir(b), name)
	if _, err := os.Stat(filepath.Join(dir, ".git", "gatehouse-bench-complete")); err == nil {
		return dir
	}
	b.Logf("building %s (first run only)", dir)
	_ = os.RemoveAll(dir)
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("d%02d/sub%04d/file%06d.js", i%dirs/100, i%dirs, i))
		if i < dirs {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("// file %d\nexport const value = %d;\n", i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	mustGit(b, dir, "init", "-q")
	mustGit(b, dir, "add", "-A")
	mustGit(b, dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init")
	if dirty {
		for i := range 1000 {
			p := filepath.Join(dir, fmt.Sprintf("d%02d/sub%04d/file%06d.js", (i*37)%dirs/100, (i*37)%dirs, i*37))
			if err := os.WriteFile(p, []byte(fmt.Sprintf("// changed %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%02d/new%04d.js", i%20, i)), []byte("new\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	mustGit(b, dir, "status", "-s") // refresh the index once, as a user's checkout would be
	if err := os.WriteFile(filepath.Join(dir, ".git", "gatehouse-bench-complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
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
		dir := benchRepo(b, 57_000, 2_000, dirty)
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

// BenchmarkDecision: a cached gate decision (a few lstats) and a cold one
// (one git process).
func BenchmarkDecision(b *testing.B) {
	dir := benchRepo(b, 57_000, 2_000, false)
	r := benchOpen(b, dir)
	b.Run("cached", func(b *testing.B) {
		if _, err := r.decide(context.Background(), trust.Phone(false), readGate, "x"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := r.decide(context.Background(), trust.Phone(false), readGate, "x"); err != nil {
				b.Fatal(err)
			}
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
	dir := benchRepo(b, 57_000, 2_000, true)
	r := benchOpen(b, dir)
	reset := func(b *testing.B) {
		b.StopTimer()
		mustGit(b, dir, "reset", "-q")
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
	mustGit(b, dir, "reset", "-q")
}

// BenchmarkDiff: git.diff of the work tree with 1,000 changed and 1,000
// untracked files (previews read through fsguard, secrets filtered), against
// raw git diff plus the previews git itself would make: a temporary index
// with add -N and one git diff.
func BenchmarkDiff(b *testing.B) {
	dir := benchRepo(b, 57_000, 2_000, true)
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
}

// BenchmarkUntrackedPreviews: the previews alone, for 1,000 new files, in
// process through fsguard, against a temporary index with add -N and one
// git diff (the spec's 410 ms baseline).
func BenchmarkUntrackedPreviews(b *testing.B) {
	dir := benchRepo(b, 57_000, 2_000, true)
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
