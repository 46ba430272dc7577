package gate

import (
	"bytes"
	"context"
	"strings"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// ErrInteractivePull: pull.rebase=interactive opens an editor on the todo
// list, which nobody at the phone can use.
var ErrInteractivePull = refusal.New(refusal.Refused, "interactive rebase pull",
	"This branch pulls with an interactive rebase (pull.rebase=interactive), which needs the computer. Pull on the computer.")

// pullMode is how a pull that is not a fast-forward joins the branches,
// from git's own keys: branch.<name>.rebase over pull.rebase, and
// pull.ff=only, which allows fast-forwards alone.
type pullMode struct {
	rebase, merges, interactive, ffOnly bool
}

// pullModeOf reads the keys with one config call whose pattern is a
// constant; the branch's own key is picked out here.
func (r *Repo) pullModeOf(ctx context.Context, t trust.Trust, d *decision, branch string) (pullMode, error) {
	res, err := r.run(ctx, t, d, call{sub: subConfig, okExit: []int{1},
		opts: []string{"--null", "--get-regexp", `^(pull\.rebase|pull\.ff|branch\..*\.rebase)$`}})
	if err != nil {
		return pullMode{}, err
	}
	var m pullMode
	var pull, own *entry
	for rec := range bytes.SplitSeq(res.stdout, []byte{0}) {
		k, v, has := bytes.Cut(rec, []byte{'\n'})
		e := entry{key: string(k), value: string(v), hasValue: has}
		switch {
		case e.key == "pull.ff":
			m.ffOnly = e.value == "only"
		case e.key == "pull.rebase":
			pull = &e
		case e.key == "branch."+branch+".rebase": // git keeps a subsection's case
			own = &e
		}
	}
	if own != nil {
		pull = own
	}
	if pull == nil {
		return m, nil
	}
	switch strings.ToLower(pull.value) {
	case "merges", "m":
		m.rebase, m.merges = true, true
		return m, nil
	case "interactive", "i":
		m.interactive = true
		return m, nil
	}
	b, err := r.probeBools(ctx, t, d, []string{pull.value})
	if err != nil {
		return m, err
	}
	m.rebase, _ = b.read(*pull)
	return m, nil
}

// joinUpstream merges the upstream into the branch, or rebases the branch
// onto it, as the branch's config says; a conflict stops it for the
// conflicts screen (Conclude, Abort). A merge or rebase runs the user's
// merge drivers, so a closed one is refused when the user's config defines
// one (checkMerge); no hook runs for a closed gate (core.hooksPath).
func (r *Repo) joinUpstream(ctx context.Context, t trust.Trust, d *decision, m pullMode) (*PullResult, error) {
	if m.interactive {
		return nil, ErrInteractivePull
	}
	if m.ffOnly {
		return nil, ErrNotFastForward
	}
	if err := d.checkMerge("pull"); err != nil {
		return nil, err
	}
	c := call{sub: subMerge, opts: []string{"--no-edit", "-q"}, args: []string{"@{upstream}"}, okExit: []int{1}}
	if t.Closed() {
		c.opts = append(c.opts, "--no-verify")
	}
	if m.rebase {
		c = call{sub: subRebase, opts: []string{"-q"}, args: []string{"@{upstream}"}, okExit: []int{1}}
		if m.merges {
			c.opts = append(c.opts, "--rebase-merges")
		}
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, gitFailure(res, err)
	}
	after, err := r.after(ctx, t, d, res, c.sub.name)
	if err != nil {
		return nil, err
	}
	out := &PullResult{OID: after.OID, Rebased: m.rebase, Merged: !m.rebase, Conflicted: after.Conflicted}
	if after.Conflicted > 0 {
		out.Stopped = after.Progress.Op
	}
	return out, nil
}
