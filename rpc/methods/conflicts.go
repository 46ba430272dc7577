package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// expectedParams name the operation in progress the device saw: git.conflicts's
// op and id, checked against what is in progress before git runs.
type expectedParams struct {
	Target string `json:"target"`
	Op     string `json:"op"`
	ID     string `json:"id"`
	rpc.SendID
}

func (p expectedParams) check() error {
	return errors.Join(rpc.TextParam(p.Op, 32), rpc.TextParam(p.ID, 200))
}

func (p expectedParams) expected() gate.Expected { return gate.Expected{Op: p.Op, ID: p.ID} }

// registerConflicts declares the methods that finish, from the phone, a
// merge, rebase, cherry-pick, revert or stash apply stopped on a conflict.
func registerConflicts(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "git.conflicts", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 20 * time.Second,
			Reply: "{op?, title?, ours?, theirs?, abortNote?, files: [{path, kind}], next?, truncated?, hiddenSecrets?, hiddenLinked?} | with path: {path, kind, hash, hasOurs, hasTheirs, segments?: [{text} | {conflict: {ours, base, theirs}}], whole?, crlf?}",
			Note:  "op: merge, rebase, cherry-pick, revert, unmerged (a stash apply), am; files paged; with path, one file's regions from git merge-file"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Path   string `json:"path,omitempty"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				if p.Path != "" {
					return repo.ConflictOf(ctx, c.Trust, c.Grant, p.Path)
				}
				res, err := repo.Conflicts(ctx, c.Trust, c.Grant)
				if err != nil {
					return nil, err
				}
				all := res.Files
				res.Files, res.Next = nil, maxPageOffset
				res.Files, res.Next = pageOf(all, p.Offset, emptySize(*res), maxPageOffset)
				return res, nil
			}),
		rpc.Register(r, rpc.Method{Name: "git.resolve", Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second,
			Reply: "{remaining}", Note: "hash: git.conflicts {path}'s; exactly one of take (ours, theirs, asIs), regions (ours, theirs or both per region) and text; asIs is refused while git finds conflict markers in the file, unless keepMarkers; text needs full, as editing a file does"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string   `json:"target"`
				Path    string   `json:"path"`
				Hash    string   `json:"hash"`
				Take    string   `json:"take,omitempty"`
				Regions []string `json:"regions,omitempty" value:"[choice]"`
				Text    *string  `json:"text,omitempty"`
				// KeepMarkers: take asIs although the file still holds
				// conflict markers.
				KeepMarkers bool `json:"keepMarkers,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Resolve(ctx, c.Trust, c.Grant, gate.ResolveOptions{Path: p.Path, Hash: p.Hash, Take: p.Take, Regions: p.Regions, Text: p.Text, KeepMarkers: p.KeepMarkers})
			}),
		rpc.Register(r, rpc.Method{Name: "git.conclude", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{oid, progress, conflicted?}", Note: "op, id: git.conflicts's, refused when another operation is in progress now; commits a merge with git's message, or continues a rebase, cherry-pick or revert; a rebase may stop again"},
			func(ctx context.Context, c *rpc.Call, p expectedParams) (any, error) {
				if err := p.check(); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Conclude(ctx, c.Trust, p.expected())
			}),
		rpc.Register(r, rpc.Method{Name: "git.abort", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 90 * time.Second,
			Reply: "{oid, progress}", Note: "op, id: git.conflicts's, refused when another operation is in progress now; merge, rebase, cherry-pick or revert --abort; a conflicted stash apply: reset --merge, the stash kept, changes staged before it not"},
			func(ctx context.Context, c *rpc.Call, p expectedParams) (any, error) {
				if err := p.check(); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Abort(ctx, c.Trust, p.expected())
			}),
	)
}
