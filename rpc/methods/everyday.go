package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// stashParams name one stash as the device saw it in git.stashes: its
// position then and its id, both checked before git runs. The stash
// methods ride the ordered lane, so they are not once; a repeat finds the
// stash moved (pop, drop) or nothing left to stash, and is refused.
type stashParams struct {
	Target string `json:"target"`
	Index  int    `json:"index"`
	OID    string `json:"oid"`
}

func (p stashParams) ref() gate.StashRef { return gate.StashRef{Index: p.Index, OID: p.OID} }

// stashPage is one page of the stash list.
type stashPage struct {
	Stashes []gate.Stash `json:"stashes"`
	Next    int          `json:"next,omitempty"`
}

// registerEveryday registers stash, amend and revert: the everyday changes
// a phone makes besides a commit.
func registerEveryday(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "git.stashes", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{stashes: [{index, oid, message, branch, date}], next?}", Note: "newest first, paged; apply, pop, drop and show name a stash by index and oid"},
			func(ctx context.Context, c *rpc.Call, p pageParams) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				all, err := repo.Stashes(ctx, c.Trust)
				if err != nil {
					return nil, err
				}
				page := &stashPage{Next: maxPageOffset}
				page.Stashes, page.Next = pageOf(all, p.Offset, emptySize(*page), maxPageOffset)
				return page, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.stashShow", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 20 * time.Second,
			Reply: "{index, oid, message, branch, date, diff, truncated, hiddenSecrets?, untracked?}", Note: "untracked: the stash holds untracked files, shown as new files"},
			func(ctx context.Context, c *rpc.Call, p stashParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.StashShow(ctx, c.Trust, c.Grant, p.ref())
			}),
		rpc.Register(r, rpc.Method{Name: "git.stash", Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{oid, files}", Note: "message: one line, at most 300 bytes; untracked: stash untracked files too"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target    string `json:"target"`
				Message   string `json:"message,omitempty"`
				Untracked bool   `json:"untracked,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.StashPush(ctx, c.Trust, c.Grant, gate.StashOptions{Message: p.Message, Untracked: p.Untracked})
			}),
		rpc.Register(r, rpc.Method{Name: "git.stashApply", Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{conflict?, kept}", Note: "pop: drop it once applied, needs full as git.stashDrop does; a conflict keeps it and leaves the index unmerged; refused for a device while changes are staged"},
			func(ctx context.Context, c *rpc.Call, p struct {
				stashParams
				Pop bool `json:"pop,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.StashApply(ctx, c.Trust, c.Grant, p.ref(), p.Pop)
			}),
		rpc.Register(r, rpc.Method{Name: "git.stashDrop", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{}", Note: "full only: a dropped stash is gone, secret files in it too"},
			func(ctx context.Context, c *rpc.Call, p stashParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return struct{}{}, repo.StashDrop(ctx, c.Trust, p.ref())
			}),
		rpc.Register(r, rpc.Method{Name: "git.canAmend", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{ok, oid?, branch?, subject?, reason?}", Note: "oid, branch: what git.amend takes back; reason: the sentence git.amend would refuse with (pushed, tagged, a merge, detached)"},
			func(ctx context.Context, c *rpc.Call, p targetParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.CanAmend(ctx, c.Trust)
			}),
		rpc.Register(r, rpc.Method{Name: "git.amend", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{oid, was}", Note: "oid, branch: git.canAmend's, refused when HEAD is another commit or branch now; message: \"\" keeps the old one; what is staged joins the commit; refused once the commit is pushed or tagged"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string `json:"target"`
				OID     string `json:"oid"`
				Branch  string `json:"branch"`
				Message string `json:"message,omitempty"`
				rpc.SendID
			}) (any, error) {
				if err := rpc.TextParam(p.Branch, 255); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Amend(ctx, c.Trust, gate.AmendTarget{OID: p.OID, Branch: p.Branch}, p.Message)
			}),
		rpc.Register(r, rpc.Method{Name: "git.revert", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{oid?, conflict?}", Note: "a commit in HEAD's history, not a merge; a conflict leaves REVERT_HEAD and the unmerged index"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				OID    string `json:"oid"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Revert(ctx, c.Trust, p.OID)
			}),
	)
}
