package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// A stash from the phone. git stash runs further gits of its own (reset,
// update-index, read-tree, checkout-index in git 2.39); each inherits the
// -c options through GIT_CONFIG_PARAMETERS, so core.hooksPath=/dev/null and
// the closed gate's filter overrides reach them too (the regress cases
// stash-* prove no hook the checkout names runs). A stash is addressed by
// the commit id the device saw in the list, never by a bare stash@{N}:
// another stash made since shifts every position, and "pop 0" would apply
// the wrong one.

// subStash pushes, applies, pops and drops. It runs its own children one
// after another: two processes at once at most.
var subStash = sub{name: "stash", processes: 2, ownPathspecs: true, timeout: 120 * time.Second, maxOut: 1 << 20}

// MaxStashes bounds the stashes one list reads.
const MaxStashes = 1000

// stashFormat: id, the reflog's selector position comes from the order;
// the reflog subject ("On main: message", "WIP on main: 1a2b3c subject")
// and the stash's date.
const stashFormat = "--format=%H%x00%gs%x00%cI"

// Stash is one entry of the stash list.
type Stash struct {
	Index   int    `json:"index"` // N of stash@{N} when listed
	OID     string `json:"oid"`   // what apply, pop and drop name it by
	Message string `json:"message"`
	Branch  string `json:"branch"` // the branch it was made on, "" when git did not say
	Date    string `json:"date"`
}

// Stashes lists the checkout's stashes, newest first, at most MaxStashes.
func (r *Repo) Stashes(ctx context.Context, t trust.Trust) ([]Stash, error) {
	d, err := r.decide(ctx, t, readGate, "see its stashes")
	if err != nil {
		return nil, err
	}
	return r.stashes(ctx, t, d, MaxStashes)
}

func (r *Repo) stashes(ctx context.Context, t trust.Trust, d *decision, limit int) ([]Stash, error) {
	if _, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q", "refs/stash"}}); err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return []Stash{}, nil // no stash yet
		}
		return nil, err
	}
	res, err := r.run(ctx, t, d, call{sub: subLog, opts: []string{"--walk-reflogs", "-z", stashFormat, "-n", strconv.Itoa(limit)}, args: []string{"refs/stash"}})
	if err != nil {
		return nil, err
	}
	out := []Stash{}
	f := strings.Split(string(res.stdout), "\x00")
	for i := 0; i+3 <= len(f); i += 3 {
		oid := strings.TrimPrefix(f[i], "\n")
		if !fullOID(oid) {
			break // the cut end of a bounded output
		}
		s := Stash{Index: len(out), OID: oid, Message: clipUTF8(f[i+1], 300), Date: f[i+2]}
		s.Branch, s.Message = stashBranch(s.Message)
		out = append(out, s)
	}
	return out, nil
}

// stashBranch reads git's reflog subject: "On B: message" for a stash with
// a message, "WIP on B: 1a2b3c subject" without one.
func stashBranch(subject string) (branch, message string) {
	rest, ok := strings.CutPrefix(subject, "On ")
	if !ok {
		if rest, ok = strings.CutPrefix(subject, "WIP on "); !ok {
			return "", subject
		}
	}
	b, msg, ok := strings.Cut(rest, ": ")
	if !ok || strings.Contains(b, " ") {
		return "", subject
	}
	if strings.HasPrefix(subject, "WIP on ") {
		return b, subject
	}
	return b, msg
}

// StashRef names a stash as a device saw it: its position then and its id.
type StashRef struct {
	Index int
	OID   string
}

// ErrStashMoved: the stash list changed since the device read it.
var ErrStashMoved = refusal.New(refusal.Conflict, "stash moved",
	"The stash list changed since this page read it (a stash was made or dropped). Reload the list and try again.")

// ErrNothingToStash: no change git would stash.
var ErrNothingToStash = refusal.New(refusal.Refused, "nothing to stash",
	"There are no changes to stash.")

// ErrStashMessage: a message too long or not text.
var ErrStashMessage = refusal.New(refusal.BadParams, "bad stash message",
	"A stash message is one line of text, at most 300 bytes.")

// resolveStash checks that stash@{Index} still is OID, and returns the
// selector git is given. It runs under the checkout lock, so no change of
// gatehouse's moves it before git runs.
func (r *Repo) resolveStash(ctx context.Context, t trust.Trust, d *decision, s StashRef) (string, error) {
	if s.Index < 0 || s.Index >= MaxStashes || !fullOID(s.OID) {
		return "", ErrBadOID
	}
	list, err := r.stashes(ctx, t, d, s.Index+1)
	if err != nil {
		return "", err
	}
	if s.Index >= len(list) || list[s.Index].OID != s.OID {
		return "", ErrStashMoved
	}
	return "stash@{" + strconv.Itoa(s.Index) + "}", nil
}

// StashOptions are a stash push's.
type StashOptions struct {
	Message   string // "" lets git write "WIP on <branch>: ..."
	Untracked bool   // stash untracked files too (never ignored ones)
}

// StashResult is what a push made.
type StashResult struct {
	OID   string `json:"oid"`
	Files int    `json:"files"`
}

// StashPush stashes the work tree's and the index's changes (and untracked
// files when asked). Below the full grant a change to a secret file
// refuses it: the stash would take the file out of the work tree into a
// commit the device cannot see, and a later drop would lose it unseen. A
// hard-linked file refuses it for every device, as a commit: its bytes are
// another file's. A file behind a switched-off filter driver refuses it for
// a closed gate: the stash would record the smudged bytes as if clean.
func (r *Repo) StashPush(ctx context.Context, t trust.Trust, g trust.Grant, o StashOptions) (*StashResult, error) {
	if len(o.Message) > 300 || !utf8.ValidString(o.Message) || strings.ContainsAny(o.Message, "\x00\n\r") {
		return nil, ErrStashMessage
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "stash changes")
	if err != nil {
		return nil, err
	}
	paths, err := r.stashable(ctx, t, d, viewer{t, g}, o.Untracked)
	if err != nil {
		return nil, err
	}
	opts := []string{"push", "-q"}
	if o.Untracked {
		opts = append(opts, "--include-untracked")
	}
	if o.Message != "" {
		// The device's text, but one word joined to its option: git reads
		// it as the message whatever it begins with.
		opts = append(opts, "--message="+o.Message)
	}
	if res, err := r.run(ctx, t, d, call{sub: subStash, opts: opts}); err != nil {
		return nil, gitFailure(res, err)
	}
	oid, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q", "refs/stash"}})
	if err != nil {
		return nil, err
	}
	return &StashResult{OID: strings.TrimSpace(string(oid.stdout)), Files: len(paths)}, nil
}

// stashable lists what a push would stash, refusing what it may not take.
func (r *Repo) stashable(ctx context.Context, t trust.Trust, d *decision, v viewer, untracked bool) ([]string, error) {
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if st.Head == "" {
		return nil, ErrNothingToStash // git cannot stash before the first commit
	}
	if st.Truncated {
		return nil, ErrTooManyPaths // a file past the list could be a secret or a link
	}
	var paths []string
	for _, f := range st.Files {
		if f.Index == "?" && !untracked || f.Submodule {
			continue
		}
		if f.Index == "U" || f.Worktree == "U" {
			return nil, ErrUnmerged
		}
		if p := r.hiddenEntry(v, f); p != "" {
			return nil, refuseSecret(p, "stash")
		}
		if r.hidden(v, f.Path, true) == linkHidden {
			return nil, refuseHardLinked(f.Path, "stash")
		}
		paths = append(paths, f.Path)
	}
	if len(paths) == 0 {
		return nil, ErrNothingToStash
	}
	f, err := r.filtered(ctx, t, d, paths)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		if driver, ok := f[p]; ok {
			return nil, refuseFiltered(p, driver, "stash")
		}
	}
	return paths, nil
}

// StashApplied is where an apply or pop left the checkout.
type StashApplied struct {
	// Conflict: git stopped on a conflict; the index holds the unmerged
	// paths as git leaves them, for the conflicts screen.
	Conflict bool `json:"conflict,omitempty"`
	// Kept: the stash is still in the list (an apply, or a pop that
	// stopped on a conflict, which git does not drop).
	Kept bool `json:"kept"`
}

// StashApply applies (or, with pop, applies and drops) the stash s names.
// A pop needs the full grant (it drops the stash, as git.stashDrop does);
// a device's apply is refused while changes are staged (refuseStaged); a
// closed apply is refused when the user's config defines a merge driver
// (checkMerge), as a pull is. Below the full grant a stash that changes a
// secret file is refused, as a discard of one is: applying it would write a secret file the device may
// neither read nor change. For a closed gate one that changes a file behind
// a switched-off filter driver is refused too (checkStashNames).
func (r *Repo) StashApply(ctx context.Context, t trust.Trust, g trust.Grant, s StashRef, pop bool) (*StashApplied, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	action := "apply a stash"
	if pop {
		action = "pop a stash"
	}
	if pop && !t.IsDesktop() && !g.Allows(trust.Full) {
		return nil, ErrPopNeedsFull
	}
	d, err := r.decide(ctx, t, changeGate, action)
	if err != nil {
		return nil, err
	}
	// An apply is a three-way merge of the stash into the work tree
	// (git stash's do_apply_stash calls merge_ort_nonrecursive): a merge
	// driver of the user's config that the attributes select would run.
	if err := d.checkMerge(action); err != nil {
		return nil, err
	}
	if err := r.refuseStaged(ctx, t, d); err != nil {
		return nil, err
	}
	sel, err := r.resolveStash(ctx, t, d, s)
	if err != nil {
		return nil, err
	}
	verb := "apply"
	if pop {
		verb = "pop"
	}
	if err := r.checkStashNames(ctx, t, d, viewer{t, g}, s.OID, verb+" a stash that changes"); err != nil {
		return nil, err
	}
	res, err := r.run(ctx, t, d, call{sub: subStash, opts: []string{verb, "-q"}, args: []string{sel}})
	if err == nil {
		return &StashApplied{Kept: !pop}, nil
	}
	if conflicted, cerr := r.hasUnmerged(ctx, t, d); cerr == nil && conflicted {
		return &StashApplied{Conflict: true, Kept: true}, nil
	}
	if res != nil && bytes.Contains(res.stderr, []byte("already exists, no checkout")) {
		return nil, errors.Join(ErrStashInTheWay, err)
	}
	return nil, gitFailure(res, err)
}

// ErrPopNeedsFull: a pop drops the stash once applied, and a discard
// after it would lose the stash's changes for good; dropping a stash is
// full-only (git.stashDrop), so a pop is too.
var ErrPopNeedsFull = refusal.New(refusal.Access, "pop needs full",
	"Popping a stash also drops it from the stash list, which needs Full access on this computer, as dropping one does. Apply it instead (the stash is kept), or give this device Full access there.")

// ErrStagedBeforeApply: a device's stash apply while changes are staged.
var ErrStagedBeforeApply = refusal.New(refusal.Refused, "staged changes before a stash apply",
	"Some changes are staged. A stash apply that stops on a conflict could then only be undone by throwing the staged changes away (git reset --merge), so commit or unstage them first.")

// refuseStaged refuses a device's stash apply while the index differs from
// HEAD. A conflicted apply leaves no operation file, and the only undo git
// offers is reset --merge, which resets every index entry that differs from
// HEAD (unpack_trees' twoway merge of builtin/reset.c keeps only unstaged
// changes): changes staged before the apply would be lost. git's own
// documentation of reset --merge says to use it only with nothing staged.
// The desktop applies as plain git does.
func (r *Repo) refuseStaged(ctx context.Context, t trust.Trust, d *decision) error {
	if t.IsDesktop() {
		return nil
	}
	res, err := r.run(ctx, t, d, call{sub: subDiff, opts: []string{"--cached", "--quiet"}, okExit: []int{1}})
	if err != nil {
		return err
	}
	if res.exit != 0 {
		return ErrStagedBeforeApply
	}
	return nil
}

// ErrStashInTheWay: a file the stash adds (an untracked file of a -u stash)
// is in the work tree again; git applies nothing.
var ErrStashInTheWay = refusal.New(refusal.Conflict, "stashed new file in the way",
	"A new file this stash holds is in the work tree again, so git applied nothing. Move or delete that file, then apply the stash again; the stash is kept.")

// checkStashNames refuses a stash whose changes (untracked files included)
// name a secret file, for a viewer who is hidden secrets, or a file behind
// a switched-off filter driver, for a closed gate: git would write the
// filter's clean bytes (an LFS pointer) where the file belongs.
func (r *Repo) checkStashNames(ctx context.Context, t trust.Trust, d *decision, v viewer, oid, verb string) error {
	if !v.hidesSecrets() && !(t.Closed() && len(d.defined["filter"]) > 0) {
		return nil
	}
	parents, err := r.parents(ctx, t, d, oid)
	if err != nil {
		return err
	}
	calls := []call{{sub: subDiff, opts: []string{"--name-only", "-z", "--no-renames"}, args: []string{parents[0], oid}}}
	if len(parents) == 3 {
		calls = append(calls, call{sub: subLsTree, opts: []string{"-r", "-z", "--name-only"}, args: []string{parents[2]}})
	}
	var names []string
	for _, c := range calls {
		res, err := r.run(ctx, t, d, c)
		if err != nil {
			return err
		}
		if res.truncated {
			return ErrTooManyPaths
		}
		names = append(names, splitNUL(res.stdout)...)
	}
	return r.refuseNames(ctx, t, d, v, names, verb)
}

// refuseNames refuses the first of names the viewer may not see (a secret,
// below full) or that goes through a switched-off filter driver.
func (r *Repo) refuseNames(ctx context.Context, t trust.Trust, d *decision, v viewer, names []string, verb string) error {
	for _, p := range names {
		if r.hidden(v, p, false) == secretHidden {
			return refuseSecret(p, verb)
		}
	}
	f, err := r.filtered(ctx, t, d, names)
	if err != nil {
		return err
	}
	for _, p := range names {
		if driver, ok := f[p]; ok {
			return refuseFiltered(p, driver, verb)
		}
	}
	return nil
}

// splitNUL splits git's -z output into its names.
func splitNUL(out []byte) []string {
	var names []string
	for p := range bytes.SplitSeq(out, []byte{0}) {
		if len(p) > 0 {
			names = append(names, string(p))
		}
	}
	return names
}

// hasUnmerged reports whether the index holds unmerged paths.
func (r *Repo) hasUnmerged(ctx context.Context, t trust.Trust, d *decision) (bool, error) {
	res, err := r.run(ctx, t, d, call{sub: subLsFiles, opts: []string{"--unmerged", "-z"}})
	if err != nil {
		return false, err
	}
	return len(bytes.TrimSpace(res.stdout)) > 0, nil
}

// StashDrop drops the stash s names.
func (r *Repo) StashDrop(ctx context.Context, t trust.Trust, s StashRef) error {
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "drop a stash")
	if err != nil {
		return err
	}
	sel, err := r.resolveStash(ctx, t, d, s)
	if err != nil {
		return err
	}
	res, err := r.run(ctx, t, d, call{sub: subStash, opts: []string{"drop", "-q"}, args: []string{sel}})
	return gitFailure(res, err)
}

// StashShown is one stash's changes as a diff.
type StashShown struct {
	Stash
	Diff          string `json:"diff"`
	Truncated     bool   `json:"truncated"`
	HiddenSecrets int    `json:"hiddenSecrets,omitempty"`
	// Untracked: the stash holds untracked files (made with -u); their
	// new-file sections follow the tracked changes.
	Untracked bool `json:"untracked,omitempty"`
}

// StashShow returns the changes stash s holds against the commit it was
// made on, untracked files included, with the sections the viewer may not
// see left out by the rule every diff asks (Repo.hidden). It compares two
// commits' trees, so no filter driver runs; textconv is off for a closed
// gate (subDiff's and subShow's closed flags).
func (r *Repo) StashShow(ctx context.Context, t trust.Trust, g trust.Grant, s StashRef) (*StashShown, error) {
	d, err := r.decide(ctx, t, readGate, "see a stash")
	if err != nil {
		return nil, err
	}
	if _, err := r.resolveStash(ctx, t, d, s); err != nil {
		return nil, err
	}
	list, err := r.stashes(ctx, t, d, s.Index+1)
	if err != nil {
		return nil, err
	}
	parents, err := r.parents(ctx, t, d, s.OID)
	if err != nil {
		return nil, err
	}
	out := &StashShown{Stash: list[s.Index]}
	res, err := r.run(ctx, t, d, call{sub: subDiff, opts: []string{"--find-renames"}, args: []string{parents[0], s.OID}})
	if err != nil {
		return nil, err
	}
	patch, truncated := res.stdout, res.truncated
	if len(parents) == 3 { // the untracked files' commit, a root commit
		out.Untracked = true
		u, err := r.run(ctx, t, d, call{sub: subShow, opts: []string{"--format=", "--root"}, args: []string{parents[2]}})
		if err != nil {
			return nil, err
		}
		patch = append(append([]byte{}, patch...), u.stdout...)
		truncated = truncated || u.truncated
	}
	var buf bytes.Buffer
	out.HiddenSecrets = r.filterPatch(&buf, patch, viewer{t, g}, true)
	out.Diff, out.Truncated = cut(buf.Bytes(), truncated)
	return out, nil
}

// parents returns a commit's parents, each a whole id.
func (r *Repo) parents(ctx context.Context, t trust.Trust, d *decision, oid string) ([]string, error) {
	res, err := r.run(ctx, t, d, call{sub: subLog, opts: []string{"-n1", "--format=%P"}, args: []string{oid}})
	if err != nil {
		return nil, gitFailure(res, err)
	}
	ps := strings.Fields(string(res.stdout))
	if len(ps) == 0 {
		return nil, fmt.Errorf("%w: %s has no parent", ErrUnknownRef, oid)
	}
	for _, p := range ps {
		if !fullOID(p) {
			return nil, fmt.Errorf("%w: a parent %q", errHistoryOutput, clipUTF8(p, 80))
		}
	}
	return ps, nil
}
