package fsguard

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// BenchmarkReadSmall compares the handle-checked read of a small file with a
// plain os.ReadFile of the same file, in one run. Target: ≤ 1.5×.
func BenchmarkReadSmall(b *testing.B) {
	base := b.TempDir()
	dir := filepath.Join(base, "root", "src", "pkg")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("package main // some source text\n", 60) // about 2 KB
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := OpenRoot(filepath.Join(base, "root"), Options{Home: "/nonexistent"})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.Run("os.ReadFile", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile(filepath.Join(dir, "main.go")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fsguard.ReadText", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.ReadText(trust.View, "src/pkg/main.go", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// grepTree returns a synthetic tree of files source-like text, made on first
// use in the benchmark cache folder ($GATEHOUSE_BENCH_DIR, else the user's
// cache folder) and kept for later runs. About one file in 500 holds the
// needle, so both greps read every file.
func grepTree(b *testing.B, files, dirs int) string {
	cache := gittest.BenchDir(b)
	root := filepath.Join(cache, fmt.Sprintf("grep-%d-%d", files, dirs))
	if _, err := os.Stat(filepath.Join(root, ".complete")); err == nil {
		return root
	}
	b.Logf("building %s (first run only)", root)
	_ = os.RemoveAll(root)
	rnd := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields("function return const let var if else for while class extends import export default async await new this typeof assert throw value result test expected actual object array string number")
	for i := range files {
		d := filepath.Join(root, fmt.Sprintf("d%02d", i%dirs/100), fmt.Sprintf("sub%04d", i%dirs))
		if i < dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		var sb strings.Builder
		for sb.Len() < 600+rnd.IntN(1800) {
			for range 8 + rnd.IntN(8) {
				sb.WriteString(words[rnd.IntN(len(words))])
				sb.WriteByte(' ')
			}
			sb.WriteString(";\n")
		}
		if i%500 == 0 {
			sb.WriteString("// zebraquokka marker line\n")
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("test%06d.js", i)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkGrep compares files.grep (every check on: secret rules, the link
// count on each opened handle, .git skipped, bounds) with ripgrep on the same
// tree, in one run. Target: ≤ 1.15× ripgrep for a literal search.
func BenchmarkGrep(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep is not installed (apt-get install ripgrep)")
	}
	for _, size := range []struct{ files, dirs int }{{57_000, 2_000}, {200_000, 2_000}} {
		tree := grepTree(b, size.files, size.dirs)
		name := fmt.Sprintf("%dk", size.files/1000)
		r, err := OpenRoot(tree, Options{Home: "/nonexistent"})
		if err != nil {
			b.Fatal(err)
		}
		want := (size.files + 499) / 500
		b.Run(name+"/ripgrep", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(rg, "-F", "--no-messages", "zebraquokka", tree)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/fsguard", func(b *testing.B) {
			for b.Loop() {
				res, err := r.Grep(context.Background(), trust.View, GrepQuery{Query: "zebraquokka", MatchCase: true}, nil)
				if err != nil || len(res.Matches) != want {
					b.Fatalf("%d matches, %v", len(res.Matches), err)
				}
			}
		})
		r.Close()
	}
}
