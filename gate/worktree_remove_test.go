package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// worktreeAhead makes a checkout with a linked worktree on branch feature
// that has one commit the main checkout lacks.
func worktreeAhead(t *testing.T) (main, wt *Repo, dir, wtPath string) {
	t.Helper()
	dir = gittest.Init(t, map[string]string{"a.txt": "a\n"})
	main = open(t, dir)
	nw, err := main.CreateWorktree(ctx, closed, "feature")
	if err != nil {
		t.Fatal(err)
	}
	write(t, nw.Path, map[string]string{"w.txt": "only in the worktree\n"})
	git(t, nw.Path, "add", "w.txt")
	git(t, nw.Path, "commit", "-qm", "unmerged work")
	return main, open(t, nw.Path, dir), dir, nw.Path
}

func hasBranch(t *testing.T, dir, name string) bool {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "branch", "--list", name)) != ""
}

func worktreeListed(t *testing.T, dir, path string) bool {
	t.Helper()
	return strings.Contains(git(t, dir, "worktree", "list", "--porcelain"), "worktree "+path+"\n")
}

// Found by a careful user: worktree.remove {deleteBranch: true} of a branch
// with unmerged commits removed the folder first, and only then did git
// branch -d refuse, so the answer was a failure with the worktree already
// gone. With the check off (the old order) the folder goes before the
// branch refuses; with it, the removal is refused before anything is
// touched, saying why and what to do, and after a merge it goes through.
func TestRemoveWorktreeRefusesAnUnmergedBranchFirst(t *testing.T) {
	gittest.Home(t, "")
	t.Run("removing first", func(t *testing.T) {
		mergedCheckOffForTest.Store(true)
		t.Cleanup(func() { mergedCheckOffForTest.Store(false) })
		main, wt, dir, wtPath := worktreeAhead(t)
		err := main.RemoveWorktree(ctx, closed, wt, true)
		if err == nil {
			t.Fatal("not reproduced: git branch -d deleted an unmerged branch")
		}
		if _, statErr := os.Stat(wtPath); !os.IsNotExist(statErr) {
			t.Fatalf("not reproduced: the folder is still there (%v)", err)
		}
		// What is left is said, not hidden behind "Git could not do this here".
		wantRefusal(t, err, ErrBranchKept, "feature was kept")
		if !hasBranch(t, dir, "feature") {
			t.Fatal("the unmerged branch is gone")
		}
	})
	t.Run("checked first", func(t *testing.T) {
		main, wt, dir, wtPath := worktreeAhead(t)
		head := git(t, dir, "rev-parse", "feature")
		wantRefusal(t, main.RemoveWorktree(ctx, closed, wt, true), ErrBranchNotMerged,
			"The branch feature has 1 commit(s) not merged into main", "nothing was removed", "Merge the worktree first")
		if _, err := os.Stat(filepath.Join(wtPath, "w.txt")); err != nil {
			t.Fatalf("the refused removal touched the worktree: %v", err)
		}
		if !worktreeListed(t, dir, wtPath) || git(t, dir, "rev-parse", "feature") != head {
			t.Fatal("the refused removal changed git's records")
		}
		if err := wt.MergeWorktree(ctx, closed, main); err != nil {
			t.Fatal(err)
		}
		if err := main.RemoveWorktree(ctx, closed, wt, true); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(wtPath); !os.IsNotExist(err) || worktreeListed(t, dir, wtPath) || hasBranch(t, dir, "feature") {
			t.Fatalf("after the merge: folder %v, listed %v, branch %v", err, worktreeListed(t, dir, wtPath), hasBranch(t, dir, "feature"))
		}
	})
}

// The branch is measured as git branch -d measures it: against its
// upstream when it has one, so a branch pushed to its upstream is merged
// even though the main checkout lacks its commit.
func TestRemoveWorktreeMeasuresAgainstTheUpstream(t *testing.T) {
	gittest.Home(t, "")
	main, wt, dir, _ := worktreeAhead(t)
	git(t, dir, "remote", "add", "origin", "https://example.invalid/app.git")
	git(t, dir, "update-ref", "refs/remotes/origin/feature", "feature")
	git(t, dir, "config", "branch.feature.remote", "origin")
	git(t, dir, "config", "branch.feature.merge", "refs/heads/feature")
	if err := main.RemoveWorktree(ctx, closed, wt, true); err != nil {
		t.Fatal(err)
	}
	if hasBranch(t, dir, "feature") {
		t.Fatal("the branch merged into its upstream was kept")
	}
}

// A removal cut short after the folder went (or a folder deleted on the
// computer) left a project that failed every time: the old removal began
// with a status inside the folder. A retry now finishes the job, checking
// the branch first all the same.
func TestRemoveWorktreeWhoseFolderIsGone(t *testing.T) {
	gittest.Home(t, "")
	main, wt, dir, wtPath := worktreeAhead(t)
	if err := os.RemoveAll(wtPath); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Status(ctx, closed); err == nil {
		t.Fatal("not reproduced: a status in the deleted worktree worked")
	}
	wantRefusal(t, main.RemoveWorktree(ctx, closed, wt, true), ErrBranchNotMerged, "The branch feature has 1 commit(s)")
	if !worktreeListed(t, dir, wtPath) {
		t.Fatal("the refused removal changed git's records")
	}
	git(t, dir, "merge", "-q", "feature")
	if err := main.RemoveWorktree(ctx, closed, wt, true); err != nil {
		t.Fatal(err)
	}
	if worktreeListed(t, dir, wtPath) || hasBranch(t, dir, "feature") {
		t.Fatalf("left: listed %v, branch %v", worktreeListed(t, dir, wtPath), hasBranch(t, dir, "feature"))
	}
	// Gone from git's records too (removed on the computer): nothing left
	// to do, except that the branch cannot be named any more.
	if err := main.RemoveWorktree(ctx, closed, wt, false); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, main.RemoveWorktree(ctx, closed, wt, true), ErrBranchKept, "could not tell its branch")
}
