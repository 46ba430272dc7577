package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// A folder NAME.worktrees beside the checkout that is another checkout (a
// clone of owner/app.worktrees made before clones were kept from that
// name): the old call of CreateWorktree, run through the same runner, makes
// the worktree inside that checkout; CreateWorktree now refuses, naming the
// folder, and makes nothing.
func TestWorktreeNeverLandsInAnotherCheckout(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	taken := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".worktrees")
	git(t, "", "init", "-q", taken)
	r := open(t, dir)

	inside := filepath.Join(taken, "old")
	if _, err := r.run(ctx, desktop, openDecision, call{sub: subWorktree, config: noHooks,
		opts: []string{"add", "-q", "-b", "old", inside, "HEAD"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(inside, "a.txt")); err != nil {
		t.Fatalf("not reproduced: the old call made no worktree inside the other checkout: %v", err)
	}

	_, err := r.CreateWorktree(ctx, closed, "feature")
	wantRefusal(t, err, ErrWorktreesFolderTaken, "The folder repo.worktrees beside this checkout", "is another checkout", "Rename that folder")
	if _, err := os.Lstat(filepath.Join(taken, "feature")); !os.IsNotExist(err) {
		t.Fatalf("the refused worktree made a folder: %v", err)
	}
	if out := git(t, dir, "branch", "--list", "feature"); out != "" {
		t.Fatalf("the refused worktree made a branch: %q", out)
	}
}
