package rpc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// The serve's watcher covers the git folder's shape for as long as it
// runs: a FIFO planted in the git folder right before a closed call is
// refused by that call, and the cover ends with the watcher.
func TestWatcherCoversGitFolderShape(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cover is inotify's")
	}
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
	t.Cleanup(targets.Close)
	tg, err := targets.Add(dir, trust.Served, "")
	noErr(t, err)
	w := startWatcher(tg, func() {})
	if w == nil {
		t.Fatal("no watcher")
	}
	if !w.shape.Covered() {
		t.Fatal("the watcher does not cover the git folder")
	}
	ctx := context.Background()
	for range 2 {
		_, err := tg.Repo.Status(ctx, trust.Phone(false))
		noErr(t, err)
	}
	exclude := filepath.Join(dir, ".git", "info", "exclude")
	noErr(t, os.RemoveAll(exclude))
	noErr(t, unix.Mkfifo(exclude, 0o644))
	if _, err := tg.Repo.Status(ctx, trust.Phone(false)); !errors.Is(err, gate.ErrGitFolder) {
		t.Fatalf("a FIFO planted before the call: %v, want the git folder refused", err)
	}
	if !w.shape.Covered() {
		t.Fatal("the cover closed on a refusal")
	}
	w.stop()
	for w.shape.Covered() { // the loop closes it on its way out
		time.Sleep(time.Millisecond)
	}
}
