package gate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// Refusals of branch changes.
var (
	// ErrCurrentBranch: the branch to delete is the one checked out here.
	ErrCurrentBranch = refusal.New(refusal.Refused, "current branch",
		"This is the branch checked out here, so it cannot be deleted. Switch to another branch first.")
	// ErrBranchInWorktree: the branch is checked out in another worktree,
	// which deleting it would leave on no branch.
	ErrBranchInWorktree = refusal.New(refusal.Refused, "branch checked out in a worktree",
		"This branch is checked out in another worktree, so it cannot be deleted. Remove that worktree, or switch it to another branch, first.")
	// ErrBranchElsewhere: switching to a remote branch would make a local
	// branch of the same name, and one already exists at another commit.
	ErrBranchElsewhere = refusal.New(refusal.Conflict, "local branch points elsewhere",
		"A local branch of this name already exists and points to another commit. Switch to the local branch instead, or rename it first.")
)

// BranchDeleted is what a deletion removed: the branch and the commit it
// pointed to, so a person can make it again (git branch NAME OID).
type BranchDeleted struct {
	Branch string `json:"branch"`
	OID    string `json:"oid"`
}

// localBranch is one local branch as for-each-ref reads it.
type localBranch struct {
	oid      string
	current  bool   // checked out here
	worktree string // the folder of the worktree it is checked out in ("" for none)
}

// localBranch looks a local branch up by its exact name; ok is false when
// there is none. The name is a positional ref pattern (refs/heads/NAME), so
// for-each-ref matches it whole, never as an option.
func (r *Repo) localBranch(ctx context.Context, t trust.Trust, d *decision, name string) (localBranch, bool, error) {
	ref := "refs/heads/" + name
	res, err := r.run(ctx, t, d, call{sub: subForEachRef,
		opts: []string{"--format=%(refname)%00%(objectname)%00%(HEAD)%00%(worktreepath)"}, args: []string{ref}})
	if err != nil {
		return localBranch{}, false, err
	}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) == 4 && f[0] == ref && fullOID(f[1]) {
			return localBranch{oid: f[1], current: f[2] == "*", worktree: f[3]}, true, nil
		}
	}
	return localBranch{}, false, nil
}

// startPoint resolves where a new branch starts: HEAD when start is "", a
// local or remote-tracking branch git lists under that exact name, or a
// commit id. The answer is a whole commit id, so what git is handed next is
// never a name the device chose.
func (r *Repo) startPoint(ctx context.Context, t trust.Trust, d *decision, start string) (string, error) {
	if start == "" {
		oid, err := r.head(ctx, t, d)
		if err != nil || !fullOID(oid) {
			return "", errors.Join(ErrUnknownRef, err)
		}
		return oid, nil
	}
	if validDeviceBranch(start) {
		if b, ok, err := r.localBranch(ctx, t, d, start); err != nil || ok {
			return b.oid, err
		}
		if oid, ok, err := r.remoteBranch(ctx, t, d, start); err != nil || ok {
			return oid, err
		}
	}
	if !ValidOID(start) {
		return "", ErrUnknownRef
	}
	res, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q"}, args: []string{start + "^{commit}"}, okExit: []int{1}})
	if err != nil {
		return "", err
	}
	oid := strings.TrimSpace(string(res.stdout))
	if res.exit != 0 || !fullOID(oid) {
		return "", ErrUnknownRef
	}
	return oid, nil
}

// remoteBranch looks a remote-tracking branch up by the name git.branches
// lists (origin/x): for-each-ref matches refs/remotes/NAME whole.
func (r *Repo) remoteBranch(ctx context.Context, t trust.Trust, d *decision, name string) (string, bool, error) {
	ref := "refs/remotes/" + name
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--format=%(refname)%00%(objectname)"}, args: []string{ref}})
	if err != nil {
		return "", false, err
	}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		if n, oid, _ := strings.Cut(line, "\x00"); n == ref && fullOID(oid) {
			return oid, true, nil
		}
	}
	return "", false, nil
}

// CreateBranch makes a local branch at start (HEAD when ""; a branch the
// device saw, or a commit id), and switches to it when switchTo is set. It
// never sets an upstream (the start is handed to git as a commit id) and
// never runs hooks, for anyone, as Switch. An existing name is refused.
func (r *Repo) CreateBranch(ctx context.Context, t trust.Trust, name, start string, switchTo bool) (string, error) {
	if !validDeviceBranch(name) {
		return "", ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	action := "create a branch"
	if switchTo {
		action = "create a branch and switch to it"
	}
	d, err := r.decide(ctx, t, changeGate, action)
	if err != nil {
		return "", err
	}
	if _, ok, err := r.localBranch(ctx, t, d, name); err != nil {
		return "", err
	} else if ok {
		return "", refusal.Errorf(ErrExists, "A branch named %s already exists.", name)
	}
	oid, err := r.startPoint(ctx, t, d, start)
	if err != nil {
		return "", err
	}
	if res, err := r.run(ctx, t, d, call{sub: subBranch, config: noHooks, opts: []string{"-q", "--no-track"}, args: []string{name, oid}}); err != nil {
		return "", gitFailure(res, err)
	}
	if !switchTo {
		return oid, nil
	}
	if res, err := r.run(ctx, t, d, switchCall(name)); err != nil {
		// The branch is new and at a commit that has a name or id
		// elsewhere: taking it back loses nothing.
		_, _ = r.run(ctx, t, d, call{sub: subBranch, config: noHooks, opts: []string{"-q", "-D"}, args: []string{name}})
		return "", gitFailure(res, err)
	}
	return oid, nil
}

// RenameBranch renames a local branch. The branch checked out here may be
// renamed too: git moves HEAD (and any other worktree's) with it, the
// commits and the upstream setting stay, so nothing is lost, which is what
// deleting the current branch would risk. An existing name is refused,
// never overwritten (-m, not -M).
func (r *Repo) RenameBranch(ctx context.Context, t trust.Trust, from, to string) error {
	if !validDeviceBranch(from) || !validDeviceBranch(to) {
		return ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "rename a branch")
	if err != nil {
		return err
	}
	if _, ok, err := r.localBranch(ctx, t, d, from); err != nil {
		return err
	} else if !ok {
		return ErrUnknownRef
	}
	if _, ok, err := r.localBranch(ctx, t, d, to); err != nil {
		return err
	} else if ok {
		return refusal.Errorf(ErrExists, "A branch named %s already exists.", to)
	}
	res, err := r.run(ctx, t, d, call{sub: subBranch, config: noHooks, opts: []string{"-q", "-m"}, args: []string{from, to}})
	return gitFailure(res, err)
}

// DeleteBranch deletes a local branch: never the one checked out here, nor
// one checked out in another worktree, and one with commits git branch -d
// would keep (not in its upstream, or in HEAD without one) only with force,
// after the refusal said how many would be lost. The reply carries the tip
// the branch had, so it can be made again.
func (r *Repo) DeleteBranch(ctx context.Context, t trust.Trust, name string, force bool) (*BranchDeleted, error) {
	if !validDeviceBranch(name) {
		return nil, ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "delete a branch")
	if err != nil {
		return nil, err
	}
	b, ok, err := r.localBranch(ctx, t, d, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrUnknownRef
	}
	if b.current || name == r.HeadBranch() {
		return nil, ErrCurrentBranch
	}
	if b.worktree != "" {
		return nil, ErrBranchInWorktree
	}
	flag := "-d"
	if force {
		flag = "-D"
	} else if !unmergedCheckOffForTest.Load() {
		n, into, err := r.unmergedCommits(ctx, t, d, name)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, refusal.Errorf(ErrBranchNotMerged,
				"The branch %s has %s not merged into %s; deleting it would lose them. Delete it anyway only if they are not needed (its last commit is %s).",
				name, commits(n), into, b.oid[:12])
		}
	}
	if res, err := r.run(ctx, t, d, call{sub: subBranch, config: noHooks, opts: []string{"-q", flag}, args: []string{name}}); err != nil {
		if !force && strings.Contains(err.Error(), "not fully merged") {
			return nil, errors.Join(refusal.Errorf(ErrBranchNotMerged,
				"The branch %s has commits not merged anywhere; deleting it would lose them. Delete it anyway only if they are not needed.", name), err)
		}
		return nil, gitFailure(res, err)
	}
	return &BranchDeleted{Branch: name, OID: b.oid}, nil
}

// commits says "1 commit" or "N commits".
func commits(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return strconv.Itoa(n) + " commits"
}

// unmergedCheckOffForTest skips gatehouse's own count before a deletion, so
// a test shows git branch -d refusing by itself (the sentence then has no
// count). Only this package's tests set it.
var unmergedCheckOffForTest atomic.Bool

// SwitchRemote switches to a remote-tracking branch (origin/x) the way git
// switch's guess does: it makes the local branch x tracking it, or switches
// to x when x already exists at the same commit; an x at another commit is
// refused, never moved. The remote-tracking name must be one git lists
// (for-each-ref refs/remotes/NAME, matched whole); the local name is what
// follows the remote's name, and passes ValidBranch. No hook runs, for
// anyone, as Switch.
func (r *Repo) SwitchRemote(ctx context.Context, t trust.Trust, remoteBranch string) (string, error) {
	if remoteBranch == "" || len(remoteBranch) > maxRefName || strings.ContainsAny(remoteBranch, "\x00\n") {
		return "", ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "switch branches")
	if err != nil {
		return "", err
	}
	oid, ok, err := r.remoteBranch(ctx, t, d, remoteBranch)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrUnknownRef
	}
	remotes, err := r.remotes(ctx, t, d)
	if err != nil {
		return "", err
	}
	local, longest := "", -1
	for _, rem := range remotes { // the longest remote name that prefixes it
		if rest, ok := strings.CutPrefix(remoteBranch, rem+"/"); ok && len(rem) > longest {
			local, longest = rest, len(rem)
		}
	}
	if !validDeviceBranch(local) {
		return "", ErrBadRef
	}
	if b, ok, err := r.localBranch(ctx, t, d, local); err != nil {
		return "", err
	} else if ok {
		if b.oid != oid {
			return "", refusal.Errorf(ErrBranchElsewhere,
				"A local branch %s already exists and points to another commit than %s. Switch to %s instead, or rename it first.", local, remoteBranch, local)
		}
		res, err := r.run(ctx, t, d, switchCall(local))
		return local, gitFailure(res, err)
	}
	// --track with the full ref: the new branch's upstream is the remote
	// branch, as git switch's guess sets it.
	if res, err := r.run(ctx, t, d, call{sub: subBranch, config: noHooks, opts: []string{"-q", "--track"},
		args: []string{local, "refs/remotes/" + remoteBranch}}); err != nil {
		return "", gitFailure(res, err)
	}
	if res, err := r.run(ctx, t, d, switchCall(local)); err != nil {
		_, _ = r.run(ctx, t, d, call{sub: subBranch, config: noHooks, opts: []string{"-q", "-D"}, args: []string{local}})
		return "", gitFailure(res, err)
	}
	return local, nil
}
