package rpc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// monitoredTarget serves a fresh checkout with a running watcher and the
// status monitor (gate/fsmonitor.go), whose hook is this test binary
// (TestMain answers it); plain is the same checkout served without either,
// whose status is git's own full look.
func monitoredTarget(t *testing.T, files map[string]string) (tg, plain *Target, w *watcher, dir string) {
	t.Helper()
	gittest.Home(t, "")
	dir = gittest.Init(t, files)
	exe, err := os.Executable()
	noErr(t, err)
	exe, err = filepath.EvalSymlinks(exe)
	noErr(t, err)
	targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{Monitor: exe})
	t.Cleanup(targets.Close)
	tg, err = targets.Add(dir, trust.Served, "")
	noErr(t, err)
	others := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
	t.Cleanup(others.Close)
	plain, err = others.Add(dir, trust.Served, "")
	noErr(t, err)
	w = startWatcher(tg, func() {})
	if w == nil {
		t.Fatal("no watcher")
	}
	t.Cleanup(w.stop)
	return tg, plain, w, dir
}

var closedPhone = trust.Phone(false)

// sameStatus asks both targets and fails on any difference.
func sameStatus(t *testing.T, tg, plain *Target, step string) {
	t.Helper()
	got, err := tg.Repo.Status(context.Background(), closedPhone)
	if err != nil {
		t.Fatalf("after %s: monitored status: %v", step, err)
	}
	want, err := plain.Repo.Status(context.Background(), closedPhone)
	if err != nil {
		t.Fatalf("after %s: plain status: %v", step, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after %s: the monitored status differs from git's\n got %+v\nwant %+v", step, *got, *want)
	}
}

// TestMonitoredStatusMatchesGit makes random creates, deletes, renames,
// folder moves, .gitignore and exclude edits, content and mode changes,
// and git runs at the desk (add, commit, branch switches, stash) between
// calls, and compares every monitored status with git's full one. Most
// answers must have named the changed paths, or the comparison proves
// nothing of the monitor.
func TestMonitoredStatusMatchesGit(t *testing.T) {
	// 300 steps take about 12 s (more under -race); the longer runs
	// BENCHMARKS.md reports set GATEHOUSE_MONITOR_STEPS.
	n := 300
	if s, err := strconv.Atoi(os.Getenv("GATEHOUSE_MONITOR_STEPS")); err == nil && s > 0 {
		n = s
	} else if testing.Short() {
		n = 100
	}
	tg, plain, _, dir := monitoredTarget(t, map[string]string{
		"a/one.go": "one\n", "a/b/two.go": "two\n", "c/three.go": "three\n", "d/e/f/four.txt": "four\n",
		".gitignore": "*.log\nbuild/\n",
	})
	gittest.Git(t, dir, "branch", "other")
	outside := t.TempDir()
	excludes := filepath.Join(t.TempDir(), "global-ignore")
	rng := rand.New(rand.NewPCG(28, 2027))
	for i := range n {
		sameStatus(t, tg, plain, deskOrTree(t, rng, dir, outside, excludes, i))
	}
	all, precise := tg.Repo.MonitoredStatuses()
	t.Logf("%d statuses with the monitor, %d of them naming the changed paths", all, precise)
	if all != uint64(n) || precise < uint64(n)/3 {
		t.Fatalf("the monitor answered %d of %d statuses, %d precisely", all, n, precise)
	}
}

// deskOrTree makes one random change: one of mutate's (watcher_test.go),
// or a change of a file's mode, or a git run at the desk.
func deskOrTree(t *testing.T, rng *rand.Rand, dir, outside, excludes string, i int) string {
	t.Helper()
	files := treeFiles(t, dir)
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	switch rng.IntN(20) {
	case 0:
		gittest.Git(t, dir, "add", "-A")
		return "git add -A"
	case 1:
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
		return "git commit"
	case 2:
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
		gittest.Git(t, dir, "stash", "clear")
		cur := gittest.Git(t, dir, "branch", "--show-current")
		to := "other"
		if cur == "other\n" {
			to = "main"
			if gittest.Git(t, dir, "branch", "--list", "main") == "" {
				to = "master"
			}
		}
		if out, err := deskGit(dir, "switch", "-q", to); err != nil {
			return "git switch " + to + ", which failed: " + out
		}
		return "git switch " + to
	case 3:
		if out, err := deskGit(dir, "stash", "-q", "-u"); err != nil {
			return "git stash -u, which failed: " + out
		}
		return "git stash -u"
	case 4:
		// A pop may stop on a conflict, which the next statuses show
		// (and the next git add -A resolves).
		if out, err := deskGit(dir, "stash", "pop", "-q"); err != nil {
			return "git stash pop, which failed: " + out
		}
		return "git stash pop"
	case 5:
		name := pick(files)
		info, err := os.Lstat(filepath.Join(dir, name))
		noErr(t, err)
		if !info.Mode().IsRegular() {
			return "nothing"
		}
		noErr(t, os.Chmod(filepath.Join(dir, name), info.Mode().Perm()^0o100))
		return "chmod file " + name
	case 6:
		name := pick(files)
		noErr(t, os.Symlink(filepath.Base(name), filepath.Join(dir, filepath.Dir(name), fmt.Sprintf("l%d", i))))
		return "symlink to " + name
	default:
		return mutate(t, rng, dir, outside, excludes, i)
	}
}

// deskGit runs git at the desk where it may fail (a conflict): its output
// goes into the step's name.
func deskGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// settled makes a file until the monitor answers with the changed paths:
// a checkout made within the racy window of its index is copied afresh
// at each call (gate/fsmonitor.go).
func settled(t *testing.T, tg, plain *Target, dir string) {
	t.Helper()
	_, before := tg.Repo.MonitoredStatuses()
	for i := range 2000 {
		gittest.Write(t, dir, map[string]string{"settle.txt": fmt.Sprint(i)})
		sameStatus(t, tg, plain, "settling")
		if _, p := tg.Repo.MonitoredStatuses(); p > before {
			return
		}
	}
	t.Fatal("the monitor never answered with the changed paths")
}

// TestMonitoredStatusFallsBack: on every doubt the monitor tells git to
// look at everything (a lost event, here a folder whose watch was dropped,
// covered by the overflow that says so), or starts from a fresh copy of
// the index (a restart: a new watcher), and the answers stay git's.
func TestMonitoredStatusFallsBack(t *testing.T) {
	tg, plain, w, dir := monitoredTarget(t, map[string]string{"a/x.go": "x\n", "b/y.go": "y\n"})
	sameStatus(t, tg, plain, "start")
	sameStatus(t, tg, plain, "nothing")
	gittest.Write(t, dir, map[string]string{"b/seen.txt": "s\n"})
	settled(t, tg, plain, dir)
	sameStatus(t, tg, plain, "nothing")
	_, precise := tg.Repo.MonitoredStatuses()

	// Events the watcher never saw: without the overflow's doubt the
	// monitor would answer "nothing changed" and git would not see the
	// file (shown first, by the same call the watcher makes).
	noErr(t, w.fw.Remove(filepath.Join(dir, "a")))
	gittest.Write(t, dir, map[string]string{"a/unseen.txt": "u\n"})
	got, err := tg.Repo.Status(context.Background(), closedPhone)
	noErr(t, err)
	for _, f := range got.Files {
		if f.Path == "a/unseen.txt" {
			t.Fatal("the lost event was seen anyway: the test shows nothing")
		}
	}
	w.fw.Errors <- fsnotify.ErrEventOverflow
	sameStatus(t, tg, plain, "overflow")
	if _, p := tg.Repo.MonitoredStatuses(); p != precise+1 {
		t.Fatalf("precise answers %d then %d: the overflow's status was not a full look", precise, p)
	}
	gittest.Write(t, dir, map[string]string{"a/after.txt": "s\n"})
	sameStatus(t, tg, plain, "a file made after the watcher's restart")

	// A restart: a new watcher, a new monitor and a fresh index copy.
	w.stop()
	w2 := startWatcher(tg, func() {})
	if w2 == nil {
		t.Fatal("no watcher")
	}
	t.Cleanup(w2.stop)
	gittest.Write(t, dir, map[string]string{"b/restart.txt": "r\n"})
	sameStatus(t, tg, plain, "restart")
	sameStatus(t, tg, plain, "after the restart")
}
