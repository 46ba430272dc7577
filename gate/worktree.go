package gate

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// Worktrees gatehouse makes live beside their checkout, never inside it and
// never in gatehouse's own state folder: <parent>/<name>.worktrees/<branch>.
// That folder is never another checkout: a clone never takes a name ending
// in .worktrees (rpc/methods/clone.go), and CreateWorktree refuses one that
// is there already.

// NewWorktree is a linked worktree gatehouse made.
type NewWorktree struct {
	// Path is where it lives on this computer; the caller records it as a
	// target and never sends it to a device.
	Path   string
	Branch string
}

// CreateWorktree makes a linked worktree of this checkout on a new branch
// (branch, or gatehouse/<date-time> when empty) starting at HEAD. git
// worktree add never runs hooks, for anyone; with the switch off it needs
// the Change gate (the checkout runs smudge filters).
func (r *Repo) CreateWorktree(ctx context.Context, t trust.Trust, branch string) (*NewWorktree, error) {
	if r.linked {
		return nil, ErrNotWorktree
	}
	if branch == "" {
		branch = "gatehouse/" + time.Now().UTC().Format("2006-01-02-150405")
	}
	if !validDeviceBranch(branch) {
		return nil, ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "create a worktree")
	if err != nil {
		return nil, err
	}
	folder := filepath.Join(filepath.Dir(r.workTree), filepath.Base(r.workTree)+".worktrees")
	if _, err := os.Lstat(filepath.Join(folder, ".git")); err == nil {
		return nil, refusal.Errorf(ErrWorktreesFolderTaken,
			"The folder %s.worktrees beside this checkout, where gatehouse puts its worktrees, is another checkout, so gatehouse won't put a worktree inside it. Rename that folder on the computer.",
			filepath.Base(r.workTree))
	}
	dir := filepath.Join(folder, strings.ReplaceAll(branch, "/", "-"))
	if _, err := os.Lstat(dir); err == nil {
		return nil, ErrExists
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	for _, c := range newWorktreeCalls(branch, dir) {
		if res, err := r.run(ctx, t, d, c); err != nil {
			return nil, gitFailure(res, err)
		}
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	return &NewWorktree{Path: canon, Branch: branch}, nil
}

// newWorktreeCalls are CreateWorktree's gits: the branch, made at HEAD,
// then the worktree that checks it out. The device's branch name is
// positional after --end-of-options in both, so neither reads it as an
// option. git worktree add -b NAME would not do: it hands NAME on to a git
// branch of its own with no end of options (builtin/worktree.c, add():
// "branch", [--force], [--quiet], new_branch, branch), where a name like
// --upload-pack=x was parsed as an option ("unknown option"). Like git's
// own -b, a branch made for a worktree that then fails to be added stays.
func newWorktreeCalls(branch, dir string) []call {
	return []call{
		{sub: subBranch, config: noHooks, opts: []string{"-q"}, args: []string{branch, "HEAD"}},
		{sub: subWorktree, config: noHooks, opts: []string{"add", "-q", "--end-of-options", dir, branch}},
	}
}

// MainPath is the work tree of the main checkout a linked worktree belongs
// to (for the caller to open it as a Repo).
func (r *Repo) MainPath() string { return filepath.Dir(r.commonDir) }

// WorktreeStatus is a linked worktree measured against its main checkout.
type WorktreeStatus struct {
	Branch string `json:"branch"`
	Ahead  int    `json:"ahead"`  // commits the worktree has that the main checkout's branch lacks
	Behind int    `json:"behind"` // and the other way
	Clean  bool   `json:"clean"`
}

// WorktreeStatus reports on this linked worktree against main, its main
// checkout (both through the Read gate).
func (r *Repo) WorktreeStatus(ctx context.Context, t trust.Trust, main *Repo) (*WorktreeStatus, error) {
	if !r.linked || main.commonDir != r.commonDir {
		return nil, ErrNotWorktree
	}
	d, err := r.decide(ctx, t, readGate, "see the worktree's status")
	if err != nil {
		return nil, err
	}
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	ws := &WorktreeStatus{Branch: st.Branch, Clean: len(st.Files) == 0}
	mainHead, err := main.Status(ctx, t)
	if err != nil {
		return nil, err
	}
	if st.Head != "" && mainHead.Head != "" {
		res, err := r.run(ctx, t, d, call{sub: subRevList, opts: []string{"--left-right", "--count"}, args: []string{st.Head + "..." + mainHead.Head}})
		if err != nil {
			return nil, err
		}
		f := strings.Fields(string(res.stdout))
		if len(f) == 2 {
			ws.Ahead, _ = strconv.Atoi(f[0])
			ws.Behind, _ = strconv.Atoi(f[1])
		}
	}
	return ws, nil
}

// MergeWorktree merges this linked worktree's branch into the branch checked
// out in main: a fast-forward when it can, else a merge commit when git
// finds no conflict. A conflict leaves both unchanged and is refused. Both
// checkouts pass the Change gate and are locked for the merge.
func (r *Repo) MergeWorktree(ctx context.Context, t trust.Trust, main *Repo) error {
	return r.mergeWorktree(ctx, t, main, false)
}

// MergeWorktreeStopping is MergeWorktree, except that a conflict is left
// in main for the conflicts screen (the merge stopped, as git merge stops),
// which the page does only after telling the person.
func (r *Repo) MergeWorktreeStopping(ctx context.Context, t trust.Trust, main *Repo) error {
	return r.mergeWorktree(ctx, t, main, true)
}

func (r *Repo) mergeWorktree(ctx context.Context, t trust.Trust, main *Repo, stop bool) error {
	if !r.linked || main.commonDir != r.commonDir || main.linked {
		return ErrNotWorktree
	}
	unlockMain, err := main.lock()
	if err != nil {
		return err
	}
	defer unlockMain()
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	wd, err := r.decide(ctx, t, changeGate, "merge a worktree")
	if err != nil {
		return err
	}
	md, err := main.decide(ctx, t, changeGate, "merge a worktree")
	if err != nil {
		return err
	}
	if err := md.checkMerge("merge a worktree"); err != nil {
		return err
	}
	wst, err := r.status(ctx, t, wd)
	if err != nil {
		return err
	}
	mst, err := main.status(ctx, t, md)
	if err != nil {
		return err
	}
	if wst.Branch == "" || mst.Branch == "" {
		return ErrDetached
	}
	if !ValidBranch(wst.Branch) {
		return ErrBadRef
	}
	hooks := []string{}
	if t.Closed() {
		hooks = []string{"--no-verify"}
	}
	// The branch goes to git as the ref it is: a tag of the same name
	// would win a short name's lookup (refs/tags before refs/heads), and
	// refs/heads/... is never an option.
	ref := "refs/heads/" + wst.Branch
	ff := call{sub: subMerge, opts: append([]string{"--ff-only", "-q"}, hooks...), args: []string{ref}}
	if _, err := main.run(ctx, t, md, ff); err == nil {
		return nil
	}
	res, err := main.run(ctx, t, md, call{sub: subMergeTree, opts: []string{"--write-tree", "--name-only"}, args: []string{"HEAD", ref}, okExit: []int{1}})
	if err != nil {
		return err
	}
	if res.exit == 1 && !stop {
		return ErrConflict
	}
	msg := "Merge branch '" + wst.Branch + "'"
	c := call{sub: subMerge, opts: append([]string{"--no-ff", "--no-edit", "-q", "-m", msg}, hooks...), args: []string{ref}}
	if stop {
		c.okExit = []int{1} // stopped on a conflict: the conflicts screen finishes it
	}
	res, err = main.run(ctx, t, md, c)
	return gitFailure(res, err)
}

// Refusals of worktrees.
var (
	// ErrWorktreesFolderTaken: the folder beside a checkout where its
	// worktrees go is another checkout (a clone named app.worktrees, made
	// before clones were kept from that name), and a worktree made there
	// would be a checkout inside a served one.
	ErrWorktreesFolderTaken = refusal.New(refusal.Conflict, "worktrees folder taken",
		"The folder beside this checkout where gatehouse puts its worktrees is another checkout. Rename that folder on the computer.")
	// ErrBranchNotMerged: the branch to delete with the worktree has
	// commits git branch -d would not let go of. Nothing was removed.
	ErrBranchNotMerged = refusal.New(refusal.Conflict, "branch not merged",
		"This worktree's branch has commits that are not merged, so nothing was removed. Merge the worktree first, or remove it and keep its branch.")
	// ErrBranchKept: the worktree is removed, its branch is not.
	ErrBranchKept = refusal.New(refusal.Refused, "worktree removed, branch kept",
		"The worktree was removed, but its branch was kept. Delete the branch on the computer if it is no longer needed.")
)

// mergedCheckOffForTest skips the check that the branch is merged before
// anything is removed, so a test can show what removing first did. Only
// this package's tests set it.
var mergedCheckOffForTest atomic.Bool

// RemoveWorktree removes the linked worktree wt of this main checkout, and
// its branch when deleteBranch is set. Everything that can refuse is asked
// before anything is removed: a worktree with changes is refused, and so,
// with deleteBranch, is a branch git branch -d would keep. A worktree whose
// folder is already gone (a removal cut short, or the folder deleted on the
// computer) is removed from git's records, so a retry finishes the job.
// ErrBranchKept means the worktree is gone and its branch is not: the caller
// stops serving the worktree then too. worktree remove runs a status inside
// wt, so with the switch off wt passes the Change gate first.
func (r *Repo) RemoveWorktree(ctx context.Context, t trust.Trust, wt *Repo, deleteBranch bool) error {
	if r.linked || !wt.linked || wt.commonDir != r.commonDir {
		return ErrNotWorktree
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	unlockWT, err := wt.lock()
	if err != nil {
		return err
	}
	defer unlockWT()
	d, err := r.decide(ctx, t, changeGate, "remove a worktree")
	if err != nil {
		return err
	}
	branch, recorded, err := r.worktreeBranch(ctx, t, d, wt)
	if err != nil {
		return err
	}
	if deleteBranch && branch != "" && !mergedCheckOffForTest.Load() {
		if err := r.refuseUnmerged(ctx, t, d, branch); err != nil {
			return err
		}
	}
	if recorded {
		if res, err := r.run(ctx, t, d, call{sub: subWorktree, config: noHooks, opts: []string{"remove", wt.workTree}}); err != nil {
			return gitFailure(res, err)
		}
	}
	if !deleteBranch || branch == "" && recorded { // detached: no branch to delete
		return nil
	}
	if branch == "" {
		return refusal.Errorf(ErrBranchKept, "The worktree was already removed on the computer, so gatehouse could not tell its branch; no branch was deleted.")
	}
	if _, err := r.run(ctx, t, d, call{sub: subBranch, opts: []string{"-d", "-q"}, args: []string{branch}}); err != nil {
		return errors.Join(refusal.Errorf(ErrBranchKept,
			"The worktree was removed, but its branch %s was kept: git would not delete it. Delete it on the computer if it is no longer needed.", branch), err)
	}
	return nil
}

// worktreeBranch is the branch checked out in wt ("" when detached), and
// whether git still records wt. A worktree whose folder is there must be
// clean: it is asked through its own status (the Change gate first). One
// whose folder is gone is asked of git here, in the main checkout
// (worktrees/<id>/HEAD), while git still records it.
func (r *Repo) worktreeBranch(ctx context.Context, t trust.Trust, d *decision, wt *Repo) (string, bool, error) {
	_, err := os.Lstat(wt.gitDir)
	recorded := err == nil
	if _, err := os.Lstat(filepath.Join(wt.workTree, ".git")); err == nil {
		wd, err := wt.decide(ctx, t, changeGate, "remove a worktree")
		if err != nil {
			return "", recorded, err
		}
		st, err := wt.status(ctx, t, wd)
		if err != nil {
			return "", recorded, err
		}
		if len(st.Files) > 0 {
			return "", recorded, ErrDirty
		}
		return validOr(st.Branch), recorded, nil
	}
	if !recorded {
		return "", false, nil
	}
	res, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--symbolic-full-name"},
		args: []string{"worktrees/" + filepath.Base(wt.gitDir) + "/HEAD"}})
	if err != nil {
		return "", true, err
	}
	name, _ := strings.CutPrefix(strings.TrimSpace(string(res.stdout)), "refs/heads/")
	return validOr(name), true, nil
}

// validOr is name when it is a valid branch name, else "".
func validOr(name string) string {
	if !ValidBranch(name) {
		return ""
	}
	return name
}

// refuseUnmerged refuses, naming the count, a branch with commits git branch
// -d would not let go of (unmerged).
func (r *Repo) refuseUnmerged(ctx context.Context, t trust.Trust, d *decision, branch string) error {
	n, shown, err := r.unmergedCommits(ctx, t, d, branch)
	if err != nil {
		return err
	}
	if n > 0 {
		return refusal.Errorf(ErrBranchNotMerged,
			"The branch %s has %d commit(s) not merged into %s, so nothing was removed. Merge the worktree first, or remove it and keep its branch.", branch, n, shown)
	}
	return nil
}

// unmergedCommits counts the commits of a local branch git branch -d would not let
// go of: commits not in its upstream, or, with no upstream (or one that is
// gone), not in this checkout's HEAD (builtin/branch.c, branch_merged). into
// names what they were measured against, as a person reads it.
func (r *Repo) unmergedCommits(ctx context.Context, t trust.Trust, d *decision, branch string) (n int, into string, err error) {
	ref := "refs/heads/" + branch
	base, shown := "HEAD", cmp.Or(r.HeadBranch(), "the main checkout's branch")
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--format=%(refname)%00%(upstream)"}, args: []string{ref}})
	if err != nil {
		return 0, "", err
	}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		if name, up, _ := strings.Cut(line, "\x00"); name == ref && strings.HasPrefix(up, "refs/") {
			ok, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q"}, args: []string{up + "^{commit}"}, okExit: []int{1}})
			if err != nil {
				return 0, "", err
			}
			if ok.exit == 0 {
				base, shown = up, strings.TrimPrefix(strings.TrimPrefix(up, "refs/remotes/"), "refs/heads/")
			}
		}
	}
	res, err = r.run(ctx, t, d, call{sub: subRevList, opts: []string{"--count"}, args: []string{base + ".." + ref}})
	if err != nil {
		return 0, "", err
	}
	n, _ = strconv.Atoi(strings.TrimSpace(string(res.stdout)))
	return n, shown, nil
}
