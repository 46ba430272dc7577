package gate

import (
	"context"
	"strings"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// What a device saw. A change from the phone names the state it was
// decided on, and is refused when the checkout is no longer in it: the
// person at the computer may have switched branch, finished the merge or
// started another one between the phone's read and its change. git itself
// would act on whatever is there now.

// Expected names the operation in progress a device saw: git.conflicts's
// op and id (Progress.Op, Progress.ID).
type Expected struct {
	Op string
	ID string
}

// Refusals of a change whose state moved.
var (
	ErrOpChanged = refusal.New(refusal.Conflict, "operation changed",
		"What is in progress here changed since this page read it (it was finished or aborted, or another one was started on the computer). Reload the conflicts and look again.")
	ErrHeadMoved = refusal.New(refusal.Conflict, "last commit changed",
		"The last commit changed since this page read it (a commit was made, or another branch was switched to on the computer). Reload and look again before amending.")
)

// stateID names one operation in progress, so a device can say which one
// it saw: for a merge, cherry-pick or revert the commit being merged,
// picked or reverted (MERGE_HEAD, CHERRY_PICK_HEAD, REVERT_HEAD) and HEAD;
// for a rebase or git am the commit the branch was at before it started
// and the commit it goes onto (orig-head and onto of the state folder),
// which stay the same from stop to stop; for a conflicted stash apply,
// HEAD. "" when a file could not be read: no device's id matches it.
func (r *Repo) stateID(ctx context.Context, t trust.Trust, d *decision, op string) (string, error) {
	var names []string
	withHead := true
	switch op {
	case OpMerge:
		names = []string{"MERGE_HEAD"}
	case OpCherryPick:
		names = []string{"CHERRY_PICK_HEAD"}
	case OpRevert:
		names = []string{"REVERT_HEAD"}
	case OpRebase, OpApply:
		names = []string{"rebase-merge/orig-head", "rebase-merge/onto", "rebase-apply/orig-head", "rebase-apply/onto"}
		withHead = false
	}
	var parts []string
	if withHead {
		head, err := r.head(ctx, t, d)
		if err != nil {
			return "", err
		}
		parts = append(parts, head)
	}
	if len(names) > 0 {
		at, err := r.gitPaths(ctx, t, d, names...)
		if err != nil {
			return "", err
		}
		for _, n := range names {
			text, present, ok := readStateFile(at[n])
			if !ok {
				return "", nil
			}
			if present {
				oid, _, _ := strings.Cut(text, "\n")
				if !fullOID(strings.TrimSpace(oid)) {
					return "", nil
				}
				parts = append(parts, strings.TrimSpace(oid))
			}
		}
	}
	return strings.Join(parts, "-"), nil
}

// expect refuses when what is in progress (p) is not what the device saw.
func expect(p Progress, want Expected) error {
	if p.Op == "" || p.Op != want.Op || p.ID == "" || p.ID != want.ID {
		return ErrOpChanged
	}
	return nil
}
