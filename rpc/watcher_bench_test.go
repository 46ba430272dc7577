package rpc

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

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// grepCheckout is fsguard's Grep benchmark tree (the same generator and
// seed: files of 600 to 2,400 bytes, one in 500 holding the needle) as a
// committed git checkout, plus an ignored build/ folder of 2,000 files
// that all hold the needle, so a search that did not leave it out would
// find too many. Built once in the benchmark folder.
func grepCheckout(b *testing.B, files, dirs int) string {
	root := filepath.Join(gittest.BenchDir(b), fmt.Sprintf("grepgit-%d-%d", files, dirs))
	if _, err := os.Stat(filepath.Join(root, ".git", "gatehouse-bench-complete")); err == nil {
		return root
	}
	b.Logf("building %s (first run only)", root)
	_ = os.RemoveAll(root)
	rnd := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields("function return const let var if else for while class extends import export default async await new this typeof assert throw value result test expected actual object array string number")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range files {
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
		write(filepath.Join(root, fmt.Sprintf("d%02d", i%dirs/100), fmt.Sprintf("sub%04d", i%dirs), fmt.Sprintf("test%06d.js", i)), sb.String())
	}
	write(filepath.Join(root, ".gitignore"), "build/\n*.log\n")
	gittest.MustGit(b, root, "init", "-q")
	gittest.MustGit(b, root, "add", "-A")
	gittest.MustGit(b, root, "-c", "user.name=b", "-c", "user.email=b@b", "-c", "gc.auto=0", "commit", "-q", "-m", "init")
	for i := range 2000 {
		write(filepath.Join(root, "build", fmt.Sprintf("b%02d", i%20), fmt.Sprintf("out%04d.js", i)), "// zebraquokka built\n")
	}
	gittest.MustGit(b, root, "status", "-s")
	write(filepath.Join(root, ".git", "gatehouse-bench-complete"), "")
	return root
}

// BenchmarkGrepFollowingGitignore: files.grep's work (searchTarget's
// ignored list, then fsguard's grep that skips it) through the closed
// gate, with no watcher (git lists the ignored files at every call) and
// with the serve's watcher running (the list kept between calls), against
// ripgrep following .gitignore in the same run. Target: ≤ 1.15× ripgrep.
func BenchmarkGrepFollowingGitignore(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep is not installed (apt-get install ripgrep)")
	}
	for _, size := range []struct{ files, dirs int }{{57_000, 2_000}, {200_000, 2_000}} {
		tree := grepCheckout(b, size.files, size.dirs)
		name := fmt.Sprintf("%dk", size.files/1000)
		want := (size.files + 499) / 500
		b.Run(name+"/ripgrep", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(rg, "-F", "--no-messages", "zebraquokka", tree)
				cmd.Dir = tree
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
		tg, err := targets.Add(tree, trust.Served, "")
		if err != nil {
			b.Fatal(err)
		}
		grep := func(b *testing.B) {
			skip, err := tg.Repo.Ignored(context.Background(), trust.Phone(false))
			if err != nil {
				b.Fatal(err)
			}
			res, err := tg.Root.Grep(context.Background(), trust.View, fsguard.GrepQuery{Query: "zebraquokka", MatchCase: true}, skip)
			if err != nil || len(res.Matches) != want {
				b.Fatalf("%d matches, %v", len(res.Matches), err)
			}
		}
		b.Run(name+"/gate-unwatched", func(b *testing.B) {
			for b.Loop() {
				grep(b)
			}
		})
		list := func(b *testing.B) {
			if _, err := tg.Repo.Ignored(context.Background(), trust.Phone(false)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name+"/ignored-list-unwatched", func(b *testing.B) {
			for b.Loop() {
				list(b)
			}
		})
		w := startWatcher(tg, func() {})
		b.Run(name+"/gate-watched", func(b *testing.B) {
			grep(b) // the first call asks git
			for b.Loop() {
				grep(b)
			}
		})
		b.Run(name+"/ignored-list-watched", func(b *testing.B) {
			for b.Loop() {
				list(b)
			}
		})
		w.stop()
		targets.Close()
	}
}

// BenchmarkWatcherSync: the barrier a cached list waits on (a name made
// in the watcher's private folder and its event seen by the loop).
func BenchmarkWatcherSync(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, true)
	targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
	defer targets.Close()
	tg, err := targets.Add(dir, trust.Served, "")
	if err != nil {
		b.Fatal(err)
	}
	w := startWatcher(tg, func() {})
	defer w.stop()
	for b.Loop() {
		if !w.sync(context.Background()) {
			b.Fatal("no sync")
		}
	}
}

// BenchmarkDiffWatched: git.diff with the untracked previews through the
// closed gate on the dirty 57k checkout, with the serve's watcher running
// (the untracked list kept between calls) and without, against raw git
// diff in the same run (the previews alone are gate's
// BenchmarkUntrackedPreviews).
func BenchmarkDiffWatched(b *testing.B) {
	dir := gittest.BenchRepo(b, 57_000, 2_000, true)
	b.Run("raw-diff", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "diff")
			cmd.Dir = dir
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
	defer targets.Close()
	tg, err := targets.Add(dir, trust.Served, "")
	if err != nil {
		b.Fatal(err)
	}
	diff := func(b *testing.B) {
		if _, err := tg.Repo.Diff(context.Background(), trust.Phone(false), trust.View, gate.DiffOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("gate-unwatched", func(b *testing.B) {
		for b.Loop() {
			diff(b)
		}
	})
	w := startWatcher(tg, func() {})
	defer w.stop()
	b.Run("gate-watched", func(b *testing.B) {
		diff(b)
		for b.Loop() {
			diff(b)
		}
	})
}
