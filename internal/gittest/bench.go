package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The benchmarks run gatehouse and raw git side by side on synthetic trees
// and repositories shaped like the spec's baseline (57,000 files in 2,000
// folders), built on first use outside CI in $GATEHOUSE_BENCH_DIR or the
// user's cache folder, and kept.

// BenchDir is the folder the benchmark fixtures live in. It skips the
// benchmark under -short (CI runs every benchmark once, without fixtures).
func BenchDir(b *testing.B) string {
	if testing.Short() {
		b.Skip("the benchmark fixtures are built outside CI (-short)")
	}
	if d := os.Getenv("GATEHOUSE_BENCH_DIR"); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		b.Skip("no cache folder for the benchmark fixtures")
	}
	return filepath.Join(c, "gatehouse-bench")
}

// MustGit runs git in dir for a benchmark fixture.
func MustGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchRepo returns a committed repository of files small source files in
// dirs folders; dirty adds 1,000 changed and 1,000 untracked files.
func BenchRepo(b *testing.B, files, dirs int, dirty bool) string {
	name := fmt.Sprintf("repo-%d-%d", files, dirs)
	if dirty {
		name += "-dirty"
	}
	dir := filepath.Join(BenchDir(b), name)
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
	MustGit(b, dir, "init", "-q")
	MustGit(b, dir, "add", "-A")
	MustGit(b, dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init")
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
	MustGit(b, dir, "status", "-s") // refresh the index once, as a user's checkout would be
	if err := os.WriteFile(filepath.Join(dir, ".git", "gatehouse-bench-complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}
