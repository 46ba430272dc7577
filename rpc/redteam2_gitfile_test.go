package rpc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
)

// TestRedteam2StatusMissesNestedRepositoryThroughGitFile (low: bounded by
// the full look): the first red team's nested-repository fix ends the
// monitor's cover when a .git name is made below the checkout's own, and
// Root.Folders is to refuse covering a checkout that already holds one,
// but Folders looks only at folders (e.IsDir()): a .git *file* (a gitfile:
// a nested checkout made with --separate-git-dir, a linked worktree placed
// inside the checkout, a submodule's checkout left after `git rm
// --cached`) or a .git symlink is not flagged, so a checkout that holds
// one when the watcher starts (or restarts, after any watched folder is
// renamed) is covered. Whether git calls nested/ one untracked repository
// or lists its files depends on the git folder the gitfile names, which no
// event of the work tree reports, and git's untracked cache in the index
// copy keeps the root's listing. Here the nested checkout's git folder (in
// .git/modules, as a former submodule's) is removed: plain git lists
// nested/'s files, the monitored status keeps saying "nested/" until the
// next full look (git told "/" re-checks it: at most 30 s, so this is the
// hole the first fix meant to close, not one past the bound).
func TestRedteam2StatusMissesNestedRepositoryThroughGitFile(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a/x.go": "x\n"})
	gitdir := filepath.Join(dir, ".git", "modules", "nested")
	noErr(t, os.MkdirAll(filepath.Dir(gitdir), 0o755))
	gittest.Git(t, dir, "init", "-q", "--separate-git-dir", gitdir, filepath.Join(dir, "nested"))
	gittest.Write(t, dir, map[string]string{"nested/file.txt": "f\n"})
	if info, err := os.Lstat(filepath.Join(dir, "nested", ".git")); err != nil || !info.Mode().IsRegular() {
		t.Fatal("setup: nested/.git is not a gitfile")
	}

	tg, plain, _ := monitorDir(t, dir, gate.Options{})

	sameStatus(t, tg, plain, "a nested checkout with a gitfile")
	if all, _ := tg.Repo.MonitoredStatuses(); all != 0 {
		t.Fatal("a checkout holding a nested .git file was covered by the monitor")
	}

	// Its git folder goes (the leftover of a former submodule cleaned up).
	noErr(t, os.RemoveAll(gitdir))
	gittest.Write(t, dir, map[string]string{"a/x.go": "changed\n"}) // any change: git runs
	sameStatus(t, tg, plain, "the nested checkout's git folder removed")
}
