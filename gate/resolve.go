package gate

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// ResolveOptions resolve one conflicted file, by exactly one of: Take
// ("ours", "theirs": that side of the whole file, as git checkout
// --ours/--theirs gives it, or its deletion; "asIs": the file as it is now
// in the work tree), Regions (one of "ours", "theirs", "both" for each
// region ConflictOf listed, in order), or Text (the whole result). Hash is
// the one ConflictOf gave.
type ResolveOptions struct {
	Path    string
	Hash    string
	Take    string
	Regions []string
	Text    *string
	// KeepMarkers marks a file resolved as it is although git finds
	// conflict markers left in it (the person said so).
	KeepMarkers bool
}

// ErrResolveTextNeedsFull: the text form writes whatever the device sent
// into the file, which is editing it: files.write needs the full grant, so
// this does too. Taking a side or choosing git's regions writes only what
// git holds, as staging does, and stays at control.
var ErrResolveTextNeedsFull = refusal.New(refusal.Access, "resolve text needs full",
	"Writing a conflicted file's text yourself is editing the file, which needs Full access on this computer. Choose ours, theirs or each region instead, or give this device Full access there.")

// ResolveResult counts the files still in conflict after this one.
type ResolveResult struct {
	Remaining int `json:"remaining"`
}

// Resolve resolves one conflicted file and marks it resolved. It refuses a
// file that changed since the phone saw it (its stages or its work tree
// copy: the Hash), a secret file below full and a hard-linked file, as
// Stage does, and the text form below full (ErrResolveTextNeedsFull). Every byte written comes from git (a stage's blob, checked
// out by git checkout) or from the device's own choice of git's regions or
// text, stored by git hash-object and checked out by git restore.
func (r *Repo) Resolve(ctx context.Context, t trust.Trust, g trust.Grant, o ResolveOptions) (*ResolveResult, error) {
	p, err := cleanPaths([]string{o.Path}, 1)
	if err != nil {
		return nil, err
	}
	path := p[0]
	if err := checkResolve(o); err != nil {
		return nil, err
	}
	if o.Text != nil && !t.IsDesktop() && !g.Allows(trust.Full) {
		return nil, ErrResolveTextNeedsFull
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "resolve a conflict")
	if err != nil {
		return nil, err
	}
	if err := r.refuseHidden(viewer{t, g}, path, "resolve"); err != nil {
		return nil, err
	}
	f, err := r.filtered(ctx, t, d, []string{path})
	if err != nil {
		return nil, err
	}
	if driver, ok := f[path]; ok {
		return nil, refuseFiltered(path, driver, "resolve")
	}
	u, err := r.unmergedOne(ctx, t, d, path)
	if err != nil {
		return nil, err
	}
	if h, err := r.conflictHash(ctx, t, d, g, u); err != nil {
		return nil, err
	} else if h != o.Hash {
		return nil, ErrConflictChanged
	}
	if err := r.resolve(ctx, t, d, u, o); err != nil {
		return nil, err
	}
	left, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return nil, err
	}
	return &ResolveResult{Remaining: len(left)}, nil
}

// checkResolve validates what the device sent before any process starts.
func checkResolve(o ResolveOptions) error {
	n := 0
	if o.Take != "" {
		n++
		if o.Take != "ours" && o.Take != "theirs" && o.Take != "asIs" {
			return ErrBadResolve
		}
	}
	if o.Regions != nil {
		n++
		if len(o.Regions) == 0 || len(o.Regions) > MaxConflictRegions {
			return ErrBadResolve
		}
		for _, c := range o.Regions {
			if c != "ours" && c != "theirs" && c != "both" {
				return ErrBadResolve
			}
		}
	}
	if o.Text != nil {
		n++
		if len(*o.Text) > maxMergeOut || !utf8.ValidString(*o.Text) {
			return ErrBadResolve
		}
	}
	if n != 1 || len(o.Hash) != 64 || !isLowerHex(o.Hash) {
		return ErrBadResolve
	}
	return nil
}

func (r *Repo) resolve(ctx context.Context, t trust.Trust, d *decision, u unmerged, o ResolveOptions) error {
	switch {
	case o.Take == "asIs":
		if !o.KeepMarkers {
			if n, err := r.leftoverMarkers(ctx, t, d, u.path); err != nil {
				return err
			} else if n > 0 {
				return refusal.Errorf(ErrMarkersLeft, "%s still has %d conflict marker line(s) (<<<<<<<, ======= or >>>>>>>). Choose a side or edit them out, or mark it resolved with the markers in it.", u.path, n)
			}
		}
		return r.markResolved(ctx, t, d, u.path)
	case o.Take != "":
		return r.takeSide(ctx, t, d, u, o.Take)
	case o.Text != nil:
		return r.writeResult(ctx, t, d, u, *o.Text)
	}
	segs, whole, _, err := r.regions(ctx, t, d, u)
	if err != nil {
		return err
	}
	if whole != "" {
		return ErrBadResolve
	}
	text, ok := applyChoices(segs, o.Regions)
	if !ok {
		return ErrBadResolve
	}
	return r.writeResult(ctx, t, d, u, text)
}

// takeSide is git checkout --ours/--theirs then git add, or, when that side
// deleted the file, git rm.
func (r *Repo) takeSide(ctx context.Context, t trust.Trust, d *decision, u unmerged, side string) error {
	n := 2
	if side == "theirs" {
		n = 3
	}
	if u.stages[n] == nil {
		res, err := r.run(ctx, t, d, call{sub: subRm, opts: []string{"-q", "-f"}, paths: []string{u.path}})
		return gitFailure(res, err)
	}
	if res, err := r.run(ctx, t, d, call{sub: subCheckout, opts: []string{"--" + side}, paths: []string{u.path}}); err != nil {
		return gitFailure(res, err)
	}
	return r.markResolved(ctx, t, d, u.path)
}

// markResolved is git add of the one path (update-index --add --remove, as
// Stage does it: a file gone from the work tree leaves the index).
func (r *Repo) markResolved(ctx context.Context, t trust.Trust, d *decision, path string) error {
	in := strings.NewReader(path + "\x00")
	res, err := r.run(ctx, t, d, call{sub: subUpdateIndex, opts: []string{"--add", "--remove", "-z", "--stdin"}, stdin: in})
	return gitFailure(res, err)
}

// writeResult stores text as the file's blob (hash-object, no filter),
// puts it in the index at stage 0 in place of the stages, with our side's
// mode (else theirs'), and checks it out into the work tree with git
// restore, which converts it as any checkout would.
func (r *Repo) writeResult(ctx context.Context, t trust.Trust, d *decision, u unmerged, text string) error {
	mode := "100644"
	for _, n := range []int{2, 3} {
		if s := u.stages[n]; s != nil && (s.mode == "100644" || s.mode == "100755") {
			mode = s.mode
			break
		}
	}
	res, err := r.run(ctx, t, d, call{sub: subHashObject, stdin: strings.NewReader(text)})
	if err != nil {
		return gitFailure(res, err)
	}
	oid := strings.TrimSpace(string(res.stdout))
	if !ValidOID(oid) {
		return ErrGitFailed
	}
	info := mode + " " + oid + "\t" + u.path + "\x00"
	if res, err := r.run(ctx, t, d, call{sub: subUpdateIndex, opts: []string{"-z", "--index-info"}, stdin: strings.NewReader(info)}); err != nil {
		return gitFailure(res, err)
	}
	res, err = r.run(ctx, t, d, call{sub: subRestore, opts: []string{"--worktree"}, paths: []string{u.path}})
	return gitFailure(res, err)
}

// applyChoices builds a file from its segments and one choice per region.
// "both" is ours then theirs; when ours has no final newline (it ended the
// file), one is put between them, as the file's own line ending.
func applyChoices(segs []Segment, choices []string) (string, bool) {
	var b strings.Builder
	i := 0
	for _, s := range segs {
		if s.Conflict == nil {
			b.WriteString(s.Text)
			continue
		}
		if i >= len(choices) {
			return "", false
		}
		c := s.Conflict
		switch choices[i] {
		case "ours":
			b.WriteString(c.Ours)
		case "theirs":
			b.WriteString(c.Theirs)
		default:
			b.WriteString(c.Ours)
			if c.Ours != "" && !strings.HasSuffix(c.Ours, "\n") {
				b.WriteString(lineEnd(c.Theirs))
			}
			b.WriteString(c.Theirs)
		}
		i++
	}
	return b.String(), i == len(choices)
}

func lineEnd(s string) string {
	if bytes.Contains([]byte(s), []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}
