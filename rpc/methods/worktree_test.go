package methods_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// newWorktree asks for a worktree on branch over the protocol and returns
// its target and folder.
func newWorktree(t *testing.T, h *host, dir, branch string) (id, path string) {
	t.Helper()
	var created struct{ Target string }
	h.ok(t, "worktree.create", map[string]any{"target": h.ids[dir], "branch": branch}, &created)
	tg, ok := h.Targets().Get(created.Target)
	if !ok {
		t.Fatal("the new worktree is not served")
	}
	return created.Target, tg.Root.Path()
}

func commitIn(t *testing.T, dir, name string) {
	t.Helper()
	gittest.Write(t, dir, map[string]string{name: name + "\n"})
	gittest.Git(t, dir, "add", name)
	gittest.Git(t, dir, "commit", "-qm", name)
}

// worktree.remove {deleteBranch} leaves no dead project. A branch with
// unmerged commits is refused before anything is removed, the worktree
// still served and whole; once merged it goes, project and branch. When
// the branch cannot be deleted after the worktree went (here another git
// holds the branch's lock), the answer says the branch was kept and the
// worktree is no longer served; and a worktree whose folder was deleted on
// the computer is removed on the first try.
func TestWorktreeRemoveLeavesNoDeadProject(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	h := newHost(t, trust.Full, dir)
	served := func(id string) bool { _, ok := h.Targets().Get(id); return ok }

	id, path := newWorktree(t, h, dir, "feature")
	commitIn(t, path, "w.txt")
	h.refused(t, "worktree.remove", map[string]any{"target": id, "deleteBranch": true}, rpc.CodeConflict,
		"The branch feature has 1 commit(s) not merged into main, so nothing was removed.")
	if !served(id) {
		t.Fatal("the refused removal stopped serving the worktree")
	}
	h.ok(t, "worktree.status", map[string]any{"target": id}, nil)
	h.ok(t, "worktree.merge", map[string]any{"target": id}, nil)
	h.ok(t, "worktree.remove", map[string]any{"target": id, "deleteBranch": true}, nil)
	if _, err := os.Stat(path); served(id) || !os.IsNotExist(err) || strings.Contains(gittest.Git(t, dir, "branch"), "feature") {
		t.Fatalf("after the merge: served %v, folder %v, branches %q", served(id), err, gittest.Git(t, dir, "branch"))
	}

	id, path = newWorktree(t, h, dir, "locked")
	gittest.Write(t, dir, map[string]string{".git/refs/heads/locked.lock": ""})
	h.refused(t, "worktree.remove", map[string]any{"target": id, "deleteBranch": true}, rpc.CodeRefused,
		"The worktree was removed, but its branch locked was kept")
	if _, err := os.Stat(path); served(id) || !os.IsNotExist(err) {
		t.Fatalf("a removed worktree: served %v, folder %v", served(id), err)
	}
	if err := os.Remove(filepath.Join(dir, ".git/refs/heads/locked.lock")); err != nil {
		t.Fatal(err)
	}

	id, path = newWorktree(t, h, dir, "deleted")
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	h.ok(t, "worktree.remove", map[string]any{"target": id, "deleteBranch": true}, nil)
	if served(id) || strings.Contains(gittest.Git(t, dir, "worktree", "list"), "deleted") || strings.Contains(gittest.Git(t, dir, "branch"), "deleted") {
		t.Fatalf("left: served %v, worktrees %q, branches %q", served(id), gittest.Git(t, dir, "worktree", "list"), gittest.Git(t, dir, "branch"))
	}
}
