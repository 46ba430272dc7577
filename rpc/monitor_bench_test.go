package rpc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

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
// before the monitor. gate-monitored repeats the call with nothing changed
// (the answer kept, no git); gate-monitored-one-saved saves one file before
// each call (git runs, told that one path). Target: monitored ≤ 0.3× raw.
func BenchmarkStatusMonitored(b *testing.B) {
	exe := monitorProgram(b)
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
			// One file saved before each call: git runs, told that one
			// path (the answer kept would be stale).
			saved := filepath.Join(dir, "d00", "sub0000", "saved.js")
			b.Run(name+"/gate-monitored-one-saved", func(b *testing.B) {
				_, precise := tg.Repo.MonitoredStatuses()
				i := 0
				for b.Loop() {
					i++
					if err := os.WriteFile(saved, []byte(fmt.Sprintf("// saved %d\n", i)), 0o644); err != nil {
						b.Fatal(err)
					}
					status(b, tg)
				}
				if _, p := tg.Repo.MonitoredStatuses(); p-precise < uint64(b.N) {
					b.Fatalf("%d of %d statuses ran git naming the saved file", p-precise, b.N)
				}
			})
			_ = os.Remove(saved)
			w.stop()
			targets.Close()
		}
	}
}

// BenchmarkLiveUpdate: the serve's CPU for one file saved on the computer
// with 1 and with 5 pages open: the watcher's events, its checkout.changed,
// and the git.status each page then asks for, counted as this process's
// CPU plus its children's (git, the hook), per saved file. plain is the
// status without the monitor, as before it: every page's status a full
// look. Reported as cpu-ms/save; the wall time includes the watcher's
// one-second debounce.
func BenchmarkLiveUpdate(b *testing.B) {
	exe := monitorProgram(b)
	dir := gittest.BenchRepo(b, 57_000, 2_000, true)
	saved := filepath.Join(dir, "d00", "sub0000", "file000000.js")
	original, err := os.ReadFile(saved)
	if err != nil {
		b.Fatal(err)
	}
	defer os.WriteFile(saved, original, 0o644)
	for _, monitored := range []bool{false, true} {
		for _, pages := range []int{1, 5} {
			name := fmt.Sprintf("57k-dirty/%s/%d-pages", map[bool]string{false: "plain", true: "monitored"}[monitored], pages)
			opts := gate.Options{}
			if monitored {
				opts.Monitor = exe
			}
			targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, opts)
			tg, err := targets.Add(dir, trust.Served, "")
			if err != nil {
				b.Fatal(err)
			}
			fired := make(chan struct{}, 1)
			w := startWatcher(tg, func() {
				select {
				case fired <- struct{}{}:
				default:
				}
			})
			if w == nil {
				b.Fatal("no watcher")
			}
			status := func() {
				if _, err := tg.Repo.Status(context.Background(), trust.Phone(false)); err != nil {
					b.Error(err)
				}
			}
			status()
			b.Run(name, func(b *testing.B) {
				var cpu time.Duration
				i := 0
				for b.Loop() {
					i++
					start := cpuUsed()
					if err := os.WriteFile(saved, []byte(fmt.Sprintf("// saved %d\n", i)), 0o644); err != nil {
						b.Fatal(err)
					}
					<-fired
					var wg sync.WaitGroup
					for range pages {
						wg.Go(status)
					}
					wg.Wait()
					cpu += cpuUsed() - start
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/save")
			})
			w.stop()
			targets.Close()
		}
	}
}

// cpuUsed is this process's CPU time and that of its waited-for children.
func cpuUsed() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
