package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// Worktrees gatehouse makes live beside their checkout, never inside it and
// never in gatehouse's own state folder: <parent>/<name>.worktrees/<branch>.

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
	if !ValidBranch(branch) {
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
	dir := filepath.Join(filepath.Dir(r.workTree), filepath.Base(r.workTree)+".worktrees", strings.ReplaceAll(branch, "/", "-"))
	if _, err := os.Lstat(dir); err == nil {
		return nil, ErrExists
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	res, err := r.run(ctx, t, d, call{sub: subWorktree, config: noHooks,
		opts: []string{"add", "-q", "-b", branch, dir, "HEAD"}})
	if err != nil {
		return nil, gitFailure(res, err)
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	return &NewWorktree{Path: canon, Branch: branch}, nil
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
	ff := call{sub: subMerge, opts: append([]string{"--ff-only", "-q"}, hooks...), args: []string{wst.Branch}}
	if _, err := main.run(ctx, t, md, ff); err == nil {
		return nil
	}
	res, err := main.run(ctx, t, md, call{sub: subMergeTree, opts: []string{"--write-tree", "--name-only"}, args: []string{"HEAD", wst.Branch}, okExit: []int{1}})
	if err != nil {
		return err
	}
	if res.exit == 1 {
		return ErrConflict
	}
	msg := "Merge branch '" + wst.Branch + "'"
	res, err = main.run(ctx, t, md, call{sub: subMerge,
		opts: append([]string{"--no-ff", "--no-edit", "-q", "-m", msg}, hooks...), args: []string{wst.Branch}})
	return gitFailure(res, err)
}

// RemoveWorktree removes the linked worktree wt of this main checkout, and
// its branch when deleteBranch is set (only if merged). A worktree with
// changes is refused. worktree remove runs a status inside wt, so with the
// switch off wt passes the Change gate first.
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
	wd, err := wt.decide(ctx, t, changeGate, "remove a worktree")
	if err != nil {
		return err
	}
	d, err := r.decide(ctx, t, changeGate, "remove a worktree")
	if err != nil {
		return err
	}
	st, err := wt.status(ctx, t, wd)
	if err != nil {
		return err
	}
	if len(st.Files) > 0 {
		return ErrDirty
	}
	if res, err := r.run(ctx, t, d, call{sub: subWorktree, config: noHooks, opts: []string{"remove", wt.workTree}}); err != nil {
		return gitFailure(res, err)
	}
	if deleteBranch && st.Branch != "" && ValidBranch(st.Branch) {
		if _, err := r.run(ctx, t, d, call{sub: subBranch, opts: []string{"-d", "-q"}, args: []string{st.Branch}}); err != nil {
			var ee *ExitError
			if errors.As(err, &ee) && strings.Contains(ee.Stderr, "not fully merged") {
				return errors.Join(ErrGitFailed, err)
			}
			return err
		}
	}
	return nil
}
