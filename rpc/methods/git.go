package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

type targetParams struct {
	Target string `json:"target"`
}

// pageParams are a paged list's: the target and where the page starts.
type pageParams struct {
	Target string `json:"target"`
	Offset int    `json:"offset,omitempty"`
}

// onceParams are a once-method's that takes only its target.
type onceParams struct {
	Target string `json:"target"`
	rpc.SendID
}

func registerGit(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "git.status", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{branch, upstream, ahead, behind, files: [{path, origPath?, index, worktree, submodule?, secret?, unmerged?}], next?, truncated?}", Note: "files in git's order, paged"},
			func(ctx context.Context, c *rpc.Call, p pageParams) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				st, err := repo.Status(ctx, c.Trust)
				if err != nil {
					return nil, err
				}
				all := st.Files
				st.Files, st.Next = nil, maxPageOffset
				st.Files, st.Next = pageOf(all, p.Offset, emptySize(*st), maxPageOffset)
				return st, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.changes", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{branch, ahead, behind, files: [{path, status, staged}], next?, truncated?}", Note: "files in git's order, paged"},
			func(ctx context.Context, c *rpc.Call, p pageParams) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				ch, err := repo.Changes(ctx, c.Trust)
				if err != nil {
					return nil, err
				}
				all := ch.Files
				ch.Files, ch.Next = nil, maxPageOffset
				ch.Files, ch.Next = pageOf(all, p.Offset, emptySize(*ch), maxPageOffset)
				return ch, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.branches", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{current, local, remote, next?, truncated?}", Note: "local then remote in git's order, paged; offset counts both"},
			func(ctx context.Context, c *rpc.Call, p pageParams) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				b, err := repo.Branches(ctx, c.Trust)
				if err != nil {
					return nil, err
				}
				return pageBranches(b, p.Offset), nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.log", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{commits: [{oid, subject, author, date}], next}", Note: "git log's order, commits merged in included; path: only commits that changed it; before: a page's next, or a commit id"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Limit  int    `json:"limit,omitempty"`
				Before string `json:"before,omitempty"`
				Path   string `json:"path,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Log(ctx, c.Trust, gate.LogOptions{Limit: p.Limit, Before: p.Before, Path: p.Path})
			}),
		rpc.Register(r, rpc.Method{Name: "git.diff", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 20 * time.Second,
			Reply: "{diff, truncated, hiddenSecrets?, hiddenFiltered?, hash?}",
			Note:  "hash: of a one-path diff, for git.stageHunks; hiddenFiltered: changes to files that go through a Git filter, such as LFS, which a phone's git does not run"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Path   string `json:"path,omitempty"`
				Staged bool   `json:"staged,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Diff(ctx, c.Trust, c.Grant, gate.DiffOptions{Path: p.Path, Staged: p.Staged})
			}),
		rpc.Register(r, rpc.Method{Name: "git.show", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 20 * time.Second,
			Reply: "{commit, message, parents, combined?, diff, truncated, hiddenSecrets?}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				OID    string `json:"oid"`
				Path   string `json:"path,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Show(ctx, c.Trust, c.Grant, p.OID, p.Path)
			}),
		rpc.Register(r, rpc.Method{Name: "git.stage", Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{count, skipped?}", Note: "exactly one of paths and all"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string   `json:"target"`
				Paths   []string `json:"paths,omitempty"`
				All     bool     `json:"all,omitempty"`
				Unstage bool     `json:"unstage,omitempty"`
			}) (any, error) {
				if p.All == (len(p.Paths) > 0) {
					return nil, rpc.ErrBadParams
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Stage(ctx, c.Trust, c.Grant, gate.StageOptions{Paths: p.Paths, All: p.All, Unstage: p.Unstage})
			}),
		rpc.Register(r, rpc.Method{Name: "git.stageHunks", Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{count}", Note: "hunks: 0-based positions in git.diff {path, staged?}, 1 to 1000; diffHash: its hash"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target   string `json:"target"`
				Path     string `json:"path"`
				Hunks    []int  `json:"hunks" value:"[index]"`
				DiffHash string `json:"diffHash"`
				Staged   bool   `json:"staged,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.StageHunks(ctx, c.Trust, c.Grant, gate.HunksOptions{Path: p.Path, Hunks: p.Hunks, Hash: p.DiffHash, Staged: p.Staged})
			}),
		rpc.Register(r, rpc.Method{Name: "git.discard", Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{count, skipped?}", Note: "1 to 500 files"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target      string   `json:"target"`
				Paths       []string `json:"paths"`
				SkipFolders bool     `json:"skipFolders,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Discard(ctx, c.Trust, gate.DiscardOptions{Paths: p.Paths, SkipFolders: p.SkipFolders, Grant: c.Grant})
			}),
		rpc.Register(r, rpc.Method{Name: "git.commit", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{oid, pushed?}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string `json:"target"`
				Message string `json:"message"`
				Push    bool   `json:"push,omitempty"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Commit(ctx, c.Trust, p.Message, p.Push)
			}),
		rpc.Register(r, rpc.Method{Name: "git.push", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{}"},
			func(ctx context.Context, c *rpc.Call, p onceParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return struct{}{}, repo.Push(ctx, c.Trust)
			}),
		rpc.Register(r, rpc.Method{Name: "git.fetch", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{updated: [refs]}"},
			func(ctx context.Context, c *rpc.Call, p onceParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Fetch(ctx, c.Trust)
			}),
		rpc.Register(r, rpc.Method{Name: "git.pull", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{oid, fastForward, merged?, rebased?, stopped?, conflicted?}", Note: "fast-forward, else a merge or (pull.rebase, branch.<name>.rebase) a rebase; stopped: the operation a conflict stopped, for git.conflicts; pull.ff=only and pull.rebase=interactive are refused"},
			func(ctx context.Context, c *rpc.Call, p onceParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Pull(ctx, c.Trust)
			}),
		rpc.Register(r, rpc.Method{Name: "git.switchBranch", Scope: trust.Full, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Branch string `json:"branch"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return struct{}{}, repo.Switch(ctx, c.Trust, p.Branch)
			}),
	)
}
