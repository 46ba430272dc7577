package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// worktreeAndMain returns a worktree target's repository and its main
// checkout's, which must be served too.
func worktreeAndMain(c *rpc.Call, target string) (*rpc.Target, *gate.Repo, *gate.Repo, error) {
	t, repo, err := repoOf(c, target)
	if err != nil {
		return nil, nil, nil, err
	}
	if t.Kind != trust.Worktree || t.Parent == "" {
		return nil, nil, nil, gate.ErrNotWorktree
	}
	_, main, err := repoOf(c, t.Parent)
	if err != nil {
		return nil, nil, nil, err
	}
	return t, repo, main, nil
}

func registerWorktrees(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "worktree.status", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{branch, ahead, behind, clean}", Note: "against its main checkout"},
			func(ctx context.Context, c *rpc.Call, p targetParams) (any, error) {
				_, repo, main, err := worktreeAndMain(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.WorktreeStatus(ctx, c.Trust, main)
			}),
		rpc.Register(r, rpc.Method{Name: "worktree.create", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 60 * time.Second,
			Reply: "{target, branch}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Branch string `json:"branch,omitempty"`
				rpc.SendID
			}) (any, error) {
				t, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				wt, err := repo.CreateWorktree(ctx, c.Trust, p.Branch)
				if err != nil {
					return nil, err
				}
				nt, err := c.Host().AddWorktree(wt.Path, t.ID)
				if err != nil {
					return nil, err
				}
				return map[string]string{"target": nt.ID, "branch": wt.Branch}, nil
			}),
		rpc.Register(r, rpc.Method{Name: "worktree.merge", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 60 * time.Second,
			Reply: "{}", Note: "fast-forward, or a merge commit when nothing conflicts; stopOnConflict: a conflict stops the merge in the main checkout for git.conflicts"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target         string `json:"target"`
				StopOnConflict bool   `json:"stopOnConflict,omitempty"`
				rpc.SendID
			}) (any, error) {
				_, repo, main, err := worktreeAndMain(c, p.Target)
				if err != nil {
					return nil, err
				}
				if p.StopOnConflict {
					return struct{}{}, repo.MergeWorktreeStopping(ctx, c.Trust, main)
				}
				return struct{}{}, repo.MergeWorktree(ctx, c.Trust, main)
			}),
		rpc.Register(r, rpc.Method{Name: "worktree.remove", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 60 * time.Second,
			Reply: "{}", Note: "deleteBranch: refused before anything is removed when the branch has commits that are not merged; a retry finishes a removal cut short"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target       string `json:"target"`
				DeleteBranch bool   `json:"deleteBranch,omitempty"`
				rpc.SendID
			}) (any, error) {
				t, repo, main, err := worktreeAndMain(c, p.Target)
				if err != nil {
					return nil, err
				}
				err = main.RemoveWorktree(ctx, c.Trust, repo, p.DeleteBranch)
				if err == nil || errors.Is(err, gate.ErrBranchKept) {
					// Gone from the computer: served no longer, or every
					// device would keep a project that only errors.
					c.Host().RemoveWorktree(t.ID)
				}
				if err != nil {
					return nil, err
				}
				return struct{}{}, nil
			}),
	)
}
