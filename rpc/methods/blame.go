package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// errBadLines refuses a blame range outside the file's possible lines.
var errBadLines = rpc.ParamError("start/count", "start from 1, and count from 1 to 5000")

// registerBlame declares a file's blame and the whole diff read a page of
// files at a time.
func registerBlame(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "git.blame", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 30 * time.Second,
			Reply: "{path, start, next?, lines: [{line, oid, origLine, origPath, text, cut?}], commits: {oid: {author, time, subject, boundary?}}}",
			Note:  "rev: a commit id (default HEAD); start and count: a page of lines, at most 5000 and 150 KiB; next: the next page's start"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Path   string `json:"path"`
				Rev    string `json:"rev,omitempty"`
				Start  int    `json:"start,omitempty"`
				Count  int    `json:"count,omitempty"`
			}) (any, error) {
				if p.Start < 0 || p.Start > maxPageOffset || p.Count < 0 || p.Count > gate.MaxBlameLines {
					return nil, errBadLines
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.Blame(ctx, c.Trust, c.Grant, gate.BlameOptions{Path: p.Path, Rev: p.Rev, Start: p.Start, Count: p.Count})
			}),
		rpc.Register(r, rpc.Method{Name: "git.diffPage", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 30 * time.Second,
			Reply: "{files: [{path, untracked?, added, deleted, binary?, diff, truncated?, secret?, filtered?}], total, next?, staged?, hiddenSecrets?}",
			Note:  "the whole diff a page of files at a time (limit: 1 to 100, about 120 KiB); renames show as a deletion and an addition"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Staged bool   `json:"staged,omitempty"`
				Offset int    `json:"offset,omitempty"`
				Limit  int    `json:"limit,omitempty"`
			}) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return repo.DiffPage(ctx, c.Trust, c.Grant, gate.DiffPageOptions{Staged: p.Staged, Offset: p.Offset, Limit: p.Limit})
			}),
	)
}
