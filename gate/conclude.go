package gate

import (
	"bytes"
	"context"
	"os"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// ErrRebaseExec: a rebase whose todo list runs commands.
var ErrRebaseExec = refusal.New(refusal.Refused, "rebase runs commands",
	"This rebase runs commands of its own (exec lines), which gatehouse doesn't run for a phone. Finish it on the computer, or turn on Full access for remote devices there.")

// ConcludeResult is what concluding left: the commit HEAD is at, and what
// is still in progress (a rebase stops again at its next conflict).
type ConcludeResult struct {
	OID      string   `json:"oid"`
	Progress Progress `json:"progress"`
	// Conflicted counts the files in conflict after, for a rebase that
	// stopped again.
	Conflicted int `json:"conflicted,omitempty"`
}

// Conclude finishes what is in progress once no file is in conflict: a
// merge commits with git's prepared message (git commit --no-edit), a
// rebase, cherry-pick or revert continues (--continue, with git's own
// message: GIT_EDITOR is ':'). For a closed gate no hook and no signing
// program runs (core.hooksPath and the gpgSign keys are forced), a merge
// driver of the user's config refuses a rebase as it refuses a merge
// (checkMerge), and a rebase whose todo list holds exec lines is refused.
func (r *Repo) Conclude(ctx context.Context, t trust.Trust) (*ConcludeResult, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "finish it")
	if err != nil {
		return nil, err
	}
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	left, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		return nil, ErrStillConflicted
	}
	if p.Op == OpRebase || p.Op == OpCherryPick || p.Op == OpRevert {
		// --continue merges the commits left to replay.
		if err := d.checkMerge("finish it"); err != nil {
			return nil, err
		}
	}
	var c call
	switch p.Op {
	case "":
		return nil, ErrNothingInProgress
	case OpMerge:
		c = call{sub: subCommit, opts: []string{"--no-edit", "-q"}}
		if t.Closed() {
			c.opts = append(c.opts, "--no-verify", "--no-gpg-sign")
		}
	case OpCherryPick:
		c = call{sub: subCherryPick, opts: []string{"--continue"}}
	case OpRevert:
		c = call{sub: subRevert, opts: []string{"--continue"}}
	case OpRebase:
		if err := r.refuseRebaseExec(ctx, t, d); err != nil {
			return nil, err
		}
		c = call{sub: subRebase, opts: []string{"--continue"}, okExit: []int{1}}
	default:
		return nil, ErrCannotConclude
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, gitFailure(res, err)
	}
	return r.after(ctx, t, d, res, c.sub.name)
}

// after reads what an operation left: HEAD, and what is in progress.
func (r *Repo) after(ctx context.Context, t trust.Trust, d *decision, res *result, subName string) (*ConcludeResult, error) {
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	left, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return nil, err
	}
	if res != nil && res.exit != 0 && len(left) == 0 {
		return nil, gitFailure(res, &ExitError{Sub: subName, Code: res.exit, Stderr: string(res.stderr)})
	}
	if p.Op == "" && len(left) > 0 {
		p = stashProgress()
	}
	oid, err := r.head(ctx, t, d)
	if err != nil {
		return nil, err
	}
	return &ConcludeResult{OID: oid, Progress: p, Conflicted: len(left)}, nil
}

// refuseRebaseExec refuses, for a closed gate, a rebase whose todo list
// (what is left of it) runs a command: "exec"/"x" lines run through the
// shell on --continue.
func (r *Repo) refuseRebaseExec(ctx context.Context, t trust.Trust, d *decision) error {
	if !t.Closed() {
		return nil
	}
	at, err := r.gitPaths(ctx, t, d, "rebase-merge/git-rebase-todo")
	if err != nil {
		return err
	}
	st, err := os.Lstat(at["rebase-merge/git-rebase-todo"])
	if err != nil {
		return nil // rebase-apply: no todo list, no exec
	}
	if !st.Mode().IsRegular() || st.Size() > 16<<20 {
		return ErrRebaseExec
	}
	todo, err := os.ReadFile(at["rebase-merge/git-rebase-todo"])
	if err != nil {
		return err
	}
	for line := range bytes.SplitSeq(todo, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) > 0 && (string(f[0]) == "x" || string(f[0]) == "exec") {
			return ErrRebaseExec
		}
	}
	return nil
}

// Abort gives up what is in progress, with what git offers for it: merge
// --abort, rebase --abort, cherry-pick --abort, revert --abort, and for a
// conflicted stash apply (no operation file) reset --merge, which puts back
// HEAD's version of the files the apply changed and keeps the other
// uncommitted changes (the stash stays in the stash list).
func (r *Repo) Abort(ctx context.Context, t trust.Trust) (*ConcludeResult, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "abort it")
	if err != nil {
		return nil, err
	}
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	var c call
	switch p.Op {
	case OpMerge:
		c = call{sub: subMerge, opts: []string{"--abort"}}
	case OpRebase:
		c = call{sub: subRebase, opts: []string{"--abort"}}
	case OpCherryPick:
		c = call{sub: subCherryPick, opts: []string{"--abort"}}
	case OpRevert:
		c = call{sub: subRevert, opts: []string{"--abort"}}
	case "":
		left, err := r.unmerged(ctx, t, d, "")
		if err != nil {
			return nil, err
		}
		if len(left) == 0 {
			return nil, ErrNothingInProgress
		}
		c = call{sub: subReset, opts: []string{"--merge", "-q"}}
	default:
		return nil, ErrCannotConclude
	}
	if res, err := r.run(ctx, t, d, c); err != nil {
		return nil, gitFailure(res, err)
	}
	return r.after(ctx, t, d, nil, c.sub.name)
}
