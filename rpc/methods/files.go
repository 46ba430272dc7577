package methods

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

func registerFiles(r *rpc.Registry) error {
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "files.list", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{entries: [{name, kind, size, secret?}], next, truncated?}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Path   string `json:"path,omitempty"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				t, err := c.Target(p.Target)
				if err != nil {
					return nil, err
				}
				return t.Root.List(c.Grant, p.Path, p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "files.read", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{text | binary: true, hash, size, offset, next}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Path   string `json:"path"`
				Offset int64  `json:"offset,omitempty"`
			}) (any, error) {
				t, err := c.Target(p.Target)
				if err != nil {
					return nil, err
				}
				txt, err := t.Root.ReadText(c.Grant, p.Path, p.Offset)
				if err != nil {
					return nil, err
				}
				return fitText(txt), nil
			}),
		rpc.Register(r, rpc.Method{Name: "files.image", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{mime, total, offset, data, done}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string `json:"target"`
				Path    string `json:"path"`
				Variant string `json:"variant" value:"thumb|full"`
				Offset  int64  `json:"offset,omitempty"`
			}) (any, error) {
				t, err := c.Target(p.Target)
				if err != nil {
					return nil, err
				}
				return t.Root.ReadImage(c.Grant, p.Path, p.Variant, p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "files.search", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 20 * time.Second,
			Reply: "{paths, next?, truncated}", Note: "names, at least 2 characters, a folder ending in /; sorted, paged; what git ignores is left out unless includeIgnored"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target         string `json:"target"`
				Query          string `json:"query"`
				IncludeIgnored bool   `json:"includeIgnored,omitempty"`
				Offset         int    `json:"offset,omitempty"`
			}) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				t, skip, err := searchTarget(ctx, c, p.Target, p.IncludeIgnored)
				if err != nil {
					return nil, err
				}
				res, err := t.Root.Search(ctx, c.Grant, p.Query, skip)
				if err != nil {
					return nil, err
				}
				all := res.Paths
				res.Paths, res.Next = nil, maxPageOffset
				res.Paths, res.Next = pageOf(all, p.Offset, emptySize(res), searchPage)
				return res, nil
			}),
		rpc.Register(r, rpc.Method{Name: "files.grep", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 20 * time.Second,
			Reply: "{matches: [{path, line, text}], next?, truncated}", Note: "sorted by path and line, paged; what git ignores is left out unless includeIgnored"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				fsguard.GrepQuery
				IncludeIgnored bool `json:"includeIgnored,omitempty"`
				Offset         int  `json:"offset,omitempty"`
			}) (any, error) {
				if err := checkOffset(p.Offset); err != nil {
					return nil, err
				}
				t, skip, err := searchTarget(ctx, c, p.Target, p.IncludeIgnored)
				if err != nil {
					return nil, err
				}
				res, err := t.Root.Grep(ctx, c.Grant, p.GrepQuery, skip)
				if err != nil {
					return nil, err
				}
				all := res.Matches
				res.Matches, res.Next = nil, maxPageOffset
				res.Matches, res.Next = pageOf(all, p.Offset, emptySize(res), searchPage)
				return res, nil
			}),
		rpc.Register(r, rpc.Method{Name: "files.write", Scope: trust.Full, Lane: rpc.LaneOrdered, Switch: "edit files", Wait: 20 * time.Second,
			Reply: "{hash}", Note: `baseHash "" creates a new file`},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target   string `json:"target"`
				Path     string `json:"path"`
				Text     string `json:"text"`
				BaseHash string `json:"baseHash"`
			}) (any, error) {
				if err := rpc.TextParam(p.Text, fsguard.MaxText); err != nil {
					return nil, fsguard.ErrTextTooLarge
				}
				t, err := c.Target(p.Target)
				if err != nil {
					return nil, err
				}
				if t.Repo != nil {
					release, err := t.Repo.Hold() // never while a git change holds the checkout
					if err != nil {
						return nil, err
					}
					defer release()
				}
				hash, err := t.Root.Write(c.Grant, p.Path, p.Text, p.BaseHash)
				if err != nil {
					return nil, err
				}
				return map[string]string{"hash": hash}, nil
			}),
	)
}

// fitText shortens a page whose JSON (escapes included) would pass the page
// budget; the shortened page is no longer the whole file, so it has no hash.
func fitText(t fsguard.Text) fsguard.Text {
	for rpc.JSONSize(t) > rpc.PageBudget && len(t.Text) > 0 {
		cut := len(t.Text) * 3 / 4
		for cut > 0 && !utf8.RuneStart(t.Text[cut]) {
			cut--
		}
		t.Text, t.Hash = t.Text[:cut], ""
		t.Next = t.Offset + int64(cut)
	}
	return t
}

// searchTarget resolves a search's target and what it leaves out: in a git
// checkout, the paths git ignores (asked of git through the gate), unless
// the device asked to include them; in a plain folder, nothing.
func searchTarget(ctx context.Context, c *rpc.Call, target string, includeIgnored bool) (*rpc.Target, fsguard.Ignored, error) {
	t, err := c.Target(target)
	if err != nil || includeIgnored || t.Repo == nil {
		return t, nil, err
	}
	skip, err := t.Repo.Ignored(ctx, c.Trust)
	return t, skip, err
}
