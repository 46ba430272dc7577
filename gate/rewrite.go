package gate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// Amend and revert: the two changes that make a commit from an existing
// one. Both run the commit machinery, so both follow Commit's rules for a
// closed gate: no hook (core.hooksPath=/dev/null, and --no-verify where git
// takes it), no signing program (--no-gpg-sign beside commit.gpgSign=false),
// and for an amend a staged hard-linked file refuses it.

// subRevert reverts one commit, or continues or aborts a revert that
// stopped (conclude.go). A revert's own call pins what config could change
// (revertFlags); git refuses those beside --continue and --abort, so they
// are the call's, not the row's.
var subRevert = sub{name: "revert", endOfOptions: true, timeout: 120 * time.Second, maxOut: 1 << 20}

// revertFlags go on every revert of a commit: no rerere replaying a
// resolution recorded elsewhere into the index (--no-rerere-autoupdate),
// and the message git writes itself (--no-edit: no editor runs).
var revertFlags = []string{"--no-edit", "--no-rerere-autoupdate"}

// subMergeBase answers whether one commit is an ancestor of another (exit 1:
// no).
var subMergeBase = sub{name: "merge-base", endOfOptions: true, readOnly: true, timeout: 30 * time.Second, maxOut: 64 << 10}

// Refusals of amend and revert.
var (
	ErrPushed = refusal.New(refusal.Refused, "commit already pushed",
		"The last commit is already pushed; amending it would rewrite history others have: make a new commit instead.")
	ErrMergeCommit = refusal.New(refusal.Refused, "merge commit",
		"This is a merge commit; revert a merge on the computer, where you can choose which parent to keep.")
	ErrTagged = refusal.New(refusal.Refused, "commit tagged",
		"The last commit is tagged; amending it would leave the tag on the old commit. Make a new commit instead.")
	ErrNothingToAmend = refusal.New(refusal.Refused, "nothing to amend",
		"Nothing would change: write a new message or stage changes to add to the last commit.")
	ErrNoCommit = refusal.New(refusal.Refused, "no commit yet",
		"This branch has no commit yet.")
	ErrNotInHistory = refusal.New(refusal.Refused, "commit not in history",
		"This commit is not in the current branch's history, so there is nothing to revert here.")
	ErrInProgress = refusal.New(refusal.Conflict, "operation in progress",
		"A merge, revert, cherry-pick or rebase is still in progress here. Finish or abort it first.")
)

// Amendable says whether the last commit may be amended, and if not why.
type Amendable struct {
	OID     string `json:"oid,omitempty"`
	Branch  string `json:"branch,omitempty"` // git.amend takes oid and branch back`
	Subject string `json:"subject,omitempty"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"` // the refusal's sentence
}

// CanAmend answers what the page needs before it offers Amend.
func (r *Repo) CanAmend(ctx context.Context, t trust.Trust) (*Amendable, error) {
	d, err := r.decide(ctx, t, readGate, "see its history")
	if err != nil {
		return nil, err
	}
	a := &Amendable{}
	head, err := r.amendable(ctx, t, d)
	if head != nil {
		a.OID, a.Branch = head.OID, head.Branch
		res, serr := r.run(ctx, t, d, call{sub: subLog, opts: []string{"-n1", "--format=%<(300,trunc)%s"}, args: []string{head.OID}})
		if serr != nil {
			return nil, serr
		}
		a.Subject = strings.TrimRight(string(res.stdout), " \n")
	}
	if err != nil {
		if refusal.KindOf(err) == refusal.Internal {
			return nil, err
		}
		a.Reason = refusal.Sentence(err)
		return a, nil
	}
	a.OK = true
	return a, nil
}

// amendable returns HEAD when it may be amended: on a branch, not a merge,
// and on no remote-tracking branch (git itself says which contain it). A
// branch with no upstream that was never pushed is fine.
func (r *Repo) amendable(ctx context.Context, t trust.Trust, d *decision) (*amendHead, error) {
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if st.Head == "" {
		return nil, ErrNoCommit
	}
	if st.Branch == "" {
		return nil, ErrDetached
	}
	info := &amendHead{OID: st.Head, Branch: st.Branch}
	parents, err := r.parents(ctx, t, d, st.Head)
	if err != nil && !errors.Is(err, ErrUnknownRef) { // a root commit has none
		return info, err
	}
	if len(parents) > 1 {
		return info, refusal.Errorf(ErrMergeCommit, "The last commit is a merge; amend a merge on the computer.")
	}
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--count=1", "--format=%(refname)", "--contains=" + st.Head, "refs/remotes/"}})
	if err != nil {
		return info, err
	}
	if strings.TrimSpace(string(res.stdout)) != "" {
		return info, ErrPushed
	}
	return info, r.refuseTagged(ctx, t, d, st.Head)
}

// amendHead is the commit an amend would replace and its branch.
type amendHead struct {
	OID, Branch string
}

// refuseTagged refuses an amend of a commit a tag names or contains: the
// tag would stay on the old commit, and a tag that was pushed (git.pushTag)
// has told others about it. git knows only the tags in refs/tags of this
// repository: a tag made elsewhere and never fetched is not seen (asking
// the remote would need the network), and refs/remotes holds no tags.
func (r *Repo) refuseTagged(ctx context.Context, t trust.Trust, d *decision, head string) error {
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--count=1", "--format=%(refname:short)", "--contains=" + head, "refs/tags/"}})
	if err != nil {
		return err
	}
	tag := strings.TrimSpace(string(res.stdout))
	if tag == "" {
		return nil
	}
	at, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--count=1", "--format=%(refname:short)", "--points-at=" + head, "refs/tags/"}})
	if err != nil {
		return err
	}
	if on := strings.TrimSpace(string(at.stdout)); on != "" {
		return refusal.Errorf(ErrTagged, "The last commit is tagged %s; amending it would leave the tag on the old commit. Make a new commit instead.", clipUTF8(on, 200))
	}
	return refusal.Errorf(ErrTagged, "The last commit is in the history of tag %s; amending it would leave the tag on the old history. Make a new commit instead.", clipUTF8(tag, 200))
}

// AmendTarget is the commit, and its branch, a device saw as the last one.
type AmendTarget struct {
	OID    string
	Branch string
}

// AmendResult is the commit an amend made.
type AmendResult struct {
	OID string `json:"oid"`
	Was string `json:"was"` // the commit it replaced
}

// Amend replaces the last commit with one holding what is staged too, and
// message when given (else the old message). Refused when HEAD is pushed
// (on any remote-tracking branch), a merge, or detached; when nothing would
// change; and, as Commit, when a staged file is hard-linked. saw is the
// commit and branch the device was shown (CanAmend's oid and branch): when
// HEAD is another commit or on another branch now, it is refused with
// ErrHeadMoved.
func (r *Repo) Amend(ctx context.Context, t trust.Trust, saw AmendTarget, message string) (*AmendResult, error) {
	if len(message) > MaxMessage || !utf8.ValidString(message) || strings.ContainsRune(message, 0) {
		return nil, ErrMessage
	}
	if !fullOID(saw.OID) || saw.Branch == "" {
		return nil, ErrBadOID
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "amend the last commit")
	if err != nil {
		return nil, err
	}
	head, err := r.amendable(ctx, t, d)
	if head != nil && (head.OID != saw.OID || head.Branch != saw.Branch) {
		return nil, ErrHeadMoved // before its other refusals: they are about another commit
	}
	if err != nil {
		return nil, err
	}
	staged, err := r.stagedPaths(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if len(staged) == 0 && strings.TrimSpace(message) == "" {
		return nil, ErrNothingToAmend
	}
	for _, p := range staged { // amend is full-only, as commit: what is hidden is a hard link
		if r.hidden(viewer{t, trust.Full}, p, true) == linkHidden {
			return nil, refuseHardLinked(p, "commit")
		}
	}
	opts := []string{"-q", "--amend", "--cleanup=strip"}
	c := call{sub: subCommit}
	if strings.TrimSpace(message) == "" {
		opts = append(opts, "--no-edit")
	} else {
		opts = append(opts, "--file=-")
		c.stdin = strings.NewReader(message)
	}
	if t.Closed() {
		opts = append(opts, "--no-verify", "--no-gpg-sign")
	}
	c.opts = opts
	if res, err := r.run(ctx, t, d, c); err != nil {
		return nil, gitFailure(res, err)
	}
	oid, err := r.head(ctx, t, d)
	if err != nil {
		return nil, err
	}
	return &AmendResult{OID: oid, Was: head.OID}, nil
}

// RevertResult is where a revert left the branch.
type RevertResult struct {
	OID string `json:"oid,omitempty"` // the new commit; "" when it stopped
	// Conflict: git stopped on a conflict; REVERT_HEAD and the unmerged
	// index are left for the conflicts screen to conclude or abort.
	Conflict bool `json:"conflict,omitempty"`
}

// Revert makes a commit that undoes oid, which must be a commit in HEAD's
// history and not a merge (a merge needs its mainline chosen, which is the
// computer's to do). It stops on a conflict and says so.
func (r *Repo) Revert(ctx context.Context, t trust.Trust, oid string) (*RevertResult, error) {
	if !ValidOID(oid) {
		return nil, ErrBadOID
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "revert a commit")
	if err != nil {
		return nil, err
	}
	// A revert is a three-way merge of the commit's parent into HEAD
	// (sequencer.c do_recursive_merge): a merge driver of the user's
	// config that the attributes select would run.
	if err := d.checkMerge("revert a commit"); err != nil {
		return nil, err
	}
	full, err := r.revertable(ctx, t, d, oid)
	if err != nil {
		return nil, err
	}
	if err := r.refuseFilteredCommit(ctx, t, d, full); err != nil {
		return nil, err
	}
	opts := slices.Clone(revertFlags)
	if t.Closed() {
		opts = append(opts, "--no-gpg-sign")
	}
	res, err := r.run(ctx, t, d, call{sub: subRevert, opts: opts, args: []string{full}})
	if err != nil {
		if conflicted, cerr := r.hasUnmerged(ctx, t, d); cerr == nil && conflicted {
			return &RevertResult{Conflict: true}, nil
		}
		if res != nil && strings.Contains(string(res.stderr), "in progress") {
			return nil, errors.Join(ErrInProgress, err)
		}
		return nil, gitFailure(res, err)
	}
	head, err := r.head(ctx, t, d)
	if err != nil {
		return nil, err
	}
	return &RevertResult{OID: head}, nil
}

// refuseFilteredCommit refuses, for a closed gate, a revert of a commit
// that changes a file behind a switched-off filter driver: git would write
// the clean bytes (an LFS pointer) into the work tree. Revert is full-only,
// so no secret is hidden from it.
func (r *Repo) refuseFilteredCommit(ctx context.Context, t trust.Trust, d *decision, oid string) error {
	if !t.Closed() || len(d.defined["filter"]) == 0 {
		return nil
	}
	res, err := r.run(ctx, t, d, call{sub: subShow, opts: []string{"--name-only", "-z", "--format=", "--no-renames"}, args: []string{oid}})
	if err != nil {
		return err
	}
	if res.truncated {
		return ErrTooManyPaths
	}
	return r.refuseNames(ctx, t, d, viewer{t, trust.Full}, splitNUL(res.stdout), "revert the change to")
}

// revertable resolves oid to a whole commit id in HEAD's history, not a
// merge.
func (r *Repo) revertable(ctx context.Context, t trust.Trust, d *decision, oid string) (string, error) {
	if ok, err := r.hasUnmerged(ctx, t, d); err != nil || ok {
		return "", cmpErr(err, ErrUnmerged)
	}
	res, err := r.run(ctx, t, d, call{sub: subLog, opts: []string{"-n1", "--no-walk", "--format=%H %P"}, args: []string{oid}})
	if err != nil {
		return "", errors.Join(ErrUnknownRef, err)
	}
	f := strings.Fields(string(res.stdout))
	// A branch or tag spelled like the abbreviated id would be taken over
	// it: the id git resolved must begin with what the device sent.
	if len(f) == 0 || !fullOID(f[0]) || !strings.HasPrefix(f[0], oid) {
		return "", ErrUnknownRef
	}
	if len(f) > 2 {
		return "", ErrMergeCommit
	}
	anc, err := r.run(ctx, t, d, call{sub: subMergeBase, opts: []string{"--is-ancestor"}, args: []string{f[0], "HEAD"}, okExit: []int{1}})
	if err != nil {
		return "", err
	}
	if anc.exit != 0 {
		return "", ErrNotInHistory
	}
	return f[0], nil
}

// cmpErr is err when there is one, else refusal.
func cmpErr(err, refusal error) error {
	if err != nil {
		return err
	}
	return refusal
}
