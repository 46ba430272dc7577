package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// registerBranches declares the branch and tag changes. Every change is
// Full, as git.switchBranch: creating a branch may switch to it (a checkout
// runs the work tree's filters), renaming and deleting change what other
// people's work is named by, and a tag pushed is public. Each runs under the
// checkout lock and the Change gate. The quick ones wait in the ordered lane
// without a sendId, as git.switchBranch: a repeat after a lost reply is
// refused, never run twice (the branch or tag already exists, or is gone);
// pushing a tag is long, in the background lane, and once.
func registerBranches(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "git.createBranch", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{branch, oid}", Note: "start: a branch git.branches listed (local or remote) or a commit id, HEAD when absent; switch: check it out too"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Name   string `json:"name"`
				Start  string `json:"start,omitempty"`
				Switch bool   `json:"switch,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				oid, err := repo.CreateBranch(ctx, c.Trust, p.Name, p.Start, p.Switch)
				if err != nil {
					return nil, err
				}
				return map[string]string{"branch": p.Name, "oid": oid}, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.renameBranch", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{}", Note: "the current branch too (HEAD follows); never over an existing name"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				From   string `json:"from"`
				To     string `json:"to"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return struct{}{}, repo.RenameBranch(ctx, c.Trust, p.From, p.To)
			}),
		rpc.Register(r, rpc.Method{Name: "git.deleteBranch", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{branch, oid}", Note: "never the current branch or one checked out in a worktree; an unmerged one only with force (the refusal names the commits' count); oid: its tip, to make it again"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Branch string `json:"branch"`
				Force  bool   `json:"force,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.DeleteBranch(ctx, c.Trust, p.Branch, p.Force)
			}),
		rpc.Register(r, rpc.Method{Name: "git.switchRemoteBranch", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{branch}", Note: "remote: a remote branch git.branches listed (origin/x); makes the local branch x tracking it, or switches to x at the same commit"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Remote string `json:"remote"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				local, err := repo.SwitchRemote(ctx, c.Trust, p.Remote)
				if err != nil {
					return nil, err
				}
				return map[string]string{"branch": local}, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.tags", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{tags: [{name, target, annotated?, subject, date}], next?, truncated?}", Note: "newest first, paged"},
			func(ctx context.Context, c *rpc.Call, p pageParams) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				tg, err := repo.Tags(ctx, c.Trust)
				if err != nil {
					return nil, err
				}
				all := tg.Tags
				tg.Tags, tg.Next = nil, maxPageOffset
				tg.Tags, tg.Next = pageOf(all, p.Offset, emptySize(*tg), maxPageOffset)
				return tg, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.createTag", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{name, target, annotated?, subject}", Note: "at: a commit id, HEAD when absent; message: an annotated tag's, none for a lightweight one; never signed for a phone, never over an existing name"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string `json:"target"`
				Name    string `json:"name"`
				At      string `json:"at,omitempty"`
				Message string `json:"message,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.CreateTag(ctx, c.Trust, gate.TagOptions{Name: p.Name, At: p.At, Message: p.Message})
			}),
		rpc.Register(r, rpc.Method{Name: "git.pushTag", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{}", Note: "exactly refs/tags/<name>, never forced, to the current branch's remote or origin"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Name   string `json:"name"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return struct{}{}, repo.PushTag(ctx, c.Trust, p.Name)
			}),
	)
}
