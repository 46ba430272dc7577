package rpc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// BenchmarkStatusMonitored: git.status from a warm serve through the closed
// gate, with the serve's watcher and the status monitor (gate/fsmonitor.go),
// against raw git status in the same run, on the 57,000 and 200,000-file
// checkouts, clean and dirty (1,000 changed and 1,000 untracked files).
// gate-plain is the same status without a watcher: git's full look, as
// before the monitor. Target: monitored ≤ 0.3× raw.
func BenchmarkStatusMonitored(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{57_000, 200_000} {
		for _, dirty := range []bool{false, true} {
			dir := gittest.BenchRepo(b, size, 2_000, dirty)
			name := fmt.Sprintf("%dk-%s", size/1000, map[bool]string{false: "clean", true: "dirty"}[dirty])
			b.Run(name+"/raw", func(b *testing.B) {
				for b.Loop() {
					cmd := exec.Command("git", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
					cmd.Dir, cmd.Stdout = dir, io.Discard
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
			status := func(b *testing.B, tg *Target) {
				if _, err := tg.Repo.Status(context.Background(), trust.Phone(false)); err != nil {
					b.Fatal(err)
				}
			}
			plain := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
			pt, err := plain.Add(dir, trust.Served, "")
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/gate-plain", func(b *testing.B) {
				status(b, pt)
				for b.Loop() {
					status(b, pt)
				}
			})
			plain.Close()
			targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{Monitor: exe})
			tg, err := targets.Add(dir, trust.Served, "")
			if err != nil {
				b.Fatal(err)
			}
			w := startWatcher(tg, func() {})
			if w == nil {
				b.Fatal("no watcher")
			}
			b.Run(name+"/gate-monitored", func(b *testing.B) {
				status(b, tg) // the first call looks at everything and fills the copy's cache
				status(b, tg)
				all, _ := tg.Repo.MonitoredStatuses()
				for b.Loop() {
					status(b, tg)
				}
				if n, _ := tg.Repo.MonitoredStatuses(); n-all < uint64(b.N) {
					b.Fatalf("%d of %d statuses ran with the monitor", n-all, b.N)
				}
			})
			w.stop()
			targets.Close()
		}
	}
}
