package audit

import (
	"context"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// BenchmarkAudit: the whole audit of a committed checkout of 100,000
// tracked files against its baseline, git ls-files plus one walk of the
// tree (filepath.WalkDir, skipping .git). Target: ≤ 3×.
func BenchmarkAudit(b *testing.B) {
	dir := gittest.BenchRepo(b, 100_000, 2_000, false)
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "ls-files", "-z")
			cmd.Dir, cmd.Stdout = dir, io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			n := 0
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() && d.Name() == ".git" {
					return filepath.SkipDir
				}
				n++
				return nil
			})
			if err != nil || n < 100_000 {
				b.Fatal(err, n)
			}
		}
	})
	b.Run("audit", func(b *testing.B) {
		for b.Loop() {
			r, err := Run(context.Background(), dir, Options{Home: "/nonexistent"})
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Findings) != 0 || r.Truncated {
				b.Fatalf("%+v", r)
			}
		}
	})
}
