package gate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// MaxMessage bounds a commit message.
const MaxMessage = 64 << 10

// CommitResult is what a commit made.
type CommitResult struct {
	OID    string `json:"oid"`
	Pushed bool   `json:"pushed,omitempty"`
}

// Commit commits what is staged, with message, and pushes when push is set.
// Hooks run only for the desktop or with the switch on; for a closed gate
// the Change gate decides first, no hook or signing program runs, and a
// staged path that is hard-linked on disk refuses the commit.
func (r *Repo) Commit(ctx context.Context, t trust.Trust, message string, push bool) (*CommitResult, error) {
	if message == "" || len(message) > MaxMessage || !utf8.ValidString(message) || strings.ContainsRune(message, 0) {
		return nil, ErrMessage
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	action := "commit"
	if push {
		action = "commit and push"
	}
	d, err := r.decide(ctx, t, changeGate, action)
	if err != nil {
		return nil, err
	}
	staged, err := r.stagedPaths(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if len(staged) == 0 {
		return nil, ErrNothingToCommit
	}
	for _, p := range staged { // commit is full-only: what is hidden from it is a hard link (Repo.hidden)
		if r.hidden(viewer{t, trust.Full}, p, true) == linkHidden {
			return nil, refuseHardLinked(p, "commit")
		}
	}
	opts := []string{"-q", "--file=-", "--cleanup=strip"}
	if t.Closed() {
		opts = append(opts, "--no-verify", "--no-gpg-sign")
	}
	if res, err := r.run(ctx, t, d, call{sub: subCommit, opts: opts, stdin: strings.NewReader(message)}); err != nil {
		return nil, gitFailure(res, err)
	}
	oid, err := r.head(ctx, t, d)
	if err != nil {
		return nil, err
	}
	res := &CommitResult{OID: oid}
	if push {
		if err := r.push(ctx, t, d); err != nil {
			return res, committedNotPushed(oid, err)
		}
		res.Pushed = true
	}
	return res, nil
}

// committedNotPushed says that the commit was made when the push after it
// failed: a refusal alone ("Pull, then push again.") read as if nothing had
// happened, while the branch was one commit further ahead. The refusal keeps
// its kind and stays in the chain (errors.Is, the host's log).
func committedNotPushed(oid string, err error) error {
	sentinel := ErrGitFailed
	var s *refusal.Error
	if errors.As(err, &s) {
		sentinel = s
	}
	return errors.Join(refusal.Errorf(sentinel, "Committed %s, but the push did not go through: %s", oid[:min(len(oid), 8)], refusal.Sentence(err)), err)
}

// stagedPaths lists the paths the index changes against HEAD.
func (r *Repo) stagedPaths(ctx context.Context, t trust.Trust, d *decision) ([]string, error) {
	opts := []string{"--cached", "--name-only", "-z", "--no-renames"}
	res, err := r.run(ctx, t, d, call{sub: subDiff, opts: opts})
	if err != nil {
		return nil, err
	}
	var out []string
	for p := range bytes.SplitSeq(res.stdout, []byte{0}) {
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out, nil
}

// head returns HEAD's commit id.
func (r *Repo) head(ctx context.Context, t trust.Trust, d *decision) (string, error) {
	res, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q", "HEAD"}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.stdout)), nil
}

// Push pushes the current branch, and nothing else: to its upstream, or
// to origin (else the first remote by name) under its own name, setting the
// upstream. Pushes keep the user's own credential helper and SSH agent;
// with the switch off the transports are pinned (no local path, no file://,
// no ext::) and no hook runs.
func (r *Repo) Push(ctx context.Context, t trust.Trust) error {
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "push")
	if err != nil {
		return err
	}
	return r.push(ctx, t, d)
}

func (r *Repo) push(ctx context.Context, t trust.Trust, d *decision) error {
	st, err := r.status(ctx, t, d)
	if err != nil {
		return err
	}
	if st.Branch == "" {
		return ErrDetached
	}
	dest, err := r.pushDest(ctx, t, d, st)
	if err != nil {
		return err
	}
	res, err := r.run(ctx, t, d, dest.call(t))
	return gitFailure(res, err)
}

// A push sends the one branch a device names, to one ref, because a plain
// "git push" sends what the repository's config says. Found by a black-box
// attack: with remote.<name>.mirror or remote.<name>.push set (both on the
// allowlist), pushing one branch sent every branch and tag, a private branch
// never pushed before among them. What git push reads, from its source
// (builtin/push.c, remote.c, transport.c) and Documentation/config/push.adoc
// and remote.adoc, and how each is kept out:
//
//   - remote.<name>.push, push.default, push.autoSetupRemote: used only when
//     the command line has no refspec (do_push, setup_default_push_refspecs),
//     or to map one with no colon (refspec_append_mapped). Every push here
//     names "refs/heads/B:refs/heads/D", with no '+': no mapping, no force.
//   - remote.<name>.mirror: pushes every ref, forced, whatever the command
//     line says, and dies on a refspec ("--mirror can't be combined with
//     refspecs"): forced false for the remote pushed to.
//   - push.followTags: sends the annotated tags that point into what is
//     pushed: --no-follow-tags, which parse_options reads after the config.
//   - push.recurseSubmodules, submodule.recurse: push the submodules' own
//     commits first: --no-recurse-submodules, likewise.
//   - push.pushOption: options sent to the server with the push (they can
//     start its CI or open a merge request); a command-line --push-option
//     replaces them, an empty value clears the list: forced empty.
//   - remote.pushDefault, branch.<name>.pushRemote: which remote a push goes
//     to when none is named. The remote is always named; git itself tells
//     which one it would take (for-each-ref's %(push:remotename)), so a
//     triangular workflow still pushes to its fork.
//   - --tags, --all, --mirror: the command line only, never given.
//   - remote.<name>.tagOpt: read by fetch alone (remote->fetch_tags).
//   - push.negotiate: only narrows the pack git sends, never the refs.
//
// Not covered: git 2.55 pushes to each remote of a group remotes.<name>
// named like the remote (push_multiple). The Change gate refuses remotes.*
// for a phone with the switch off; with it on, the group is the user's own.

// pushDest is where a push goes: one remote, one ref there.
type pushDest struct {
	remote      string // as git push takes it: a remote's name, or a network URL
	src, dst    string // refs/heads/B, and the ref it updates on the remote
	setUpstream bool   // the branch had no upstream: this push sets it
}

// pushDest finds where the current branch goes: its upstream on the remote
// git would push to (under its own name when that is not the upstream's
// remote), or origin (else the first remote by name) under its own name.
func (r *Repo) pushDest(ctx context.Context, t trust.Trust, d *decision, st *Status) (pushDest, error) {
	if !ValidBranch(st.Branch) {
		return pushDest{}, ErrBadRef
	}
	p := pushDest{src: "refs/heads/" + st.Branch, dst: "refs/heads/" + st.Branch}
	if st.Upstream == "" {
		remote, err := r.defaultRemote(ctx, t, d)
		p.remote, p.setUpstream = remote, true
		return p, err
	}
	res, err := r.run(ctx, t, d, call{sub: subForEachRef,
		opts: []string{"--format=%(refname)%00%(upstream:remotename)%00%(upstream:remoteref)%00%(push:remotename)"}, args: []string{p.src}})
	if err != nil {
		return p, err
	}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 4 || f[0] != p.src {
			continue
		}
		upRemote, upRef, pushRemote := f[1], f[2], f[3]
		p.remote = cmp.Or(pushRemote, upRemote)
		if p.remote == upRemote && upRef != "" {
			if b, ok := strings.CutPrefix(upRef, "refs/heads/"); !ok || !ValidBranch(b) {
				return p, ErrBadRef
			}
			p.dst = upRef
		}
	}
	// "=" would end a -c key early; "." is this repository itself.
	if !isRemoteName(p.remote) && !(isNetworkURL(p.remote) && !strings.Contains(p.remote, "=")) {
		return p, ErrNoRemote
	}
	return p, nil
}

// call is the push of one ref, with what would widen it switched off (see
// above).
func (p pushDest) call(t trust.Trust) call {
	opts := []string{"--porcelain", "--no-recurse-submodules", "--no-follow-tags"}
	if t.Closed() {
		opts = append(opts, "--no-verify")
	}
	if p.setUpstream {
		opts = append(opts, "--set-upstream")
	}
	return call{sub: subPush, opts: opts, args: []string{p.remote, p.src + ":" + p.dst}, config: []Option{
		{"remote." + p.remote + ".mirror", "false", "a mirror remote pushes every ref, forced, and refuses a refspec"},
		{"push.pushOption", "", "an empty value clears the list: no server option the device did not send"},
	}}
}

// remotes lists the checkout's remotes by name.
func (r *Repo) remotes(ctx context.Context, t trust.Trust, d *decision) ([]string, error) {
	res, err := r.run(ctx, t, d, call{sub: subRemote})
	if err != nil {
		return nil, err
	}
	names := strings.Fields(string(res.stdout))
	sort.Strings(names)
	return names, nil
}

// defaultRemote is origin, else the first remote by name.
func (r *Repo) defaultRemote(ctx context.Context, t trust.Trust, d *decision) (string, error) {
	names, err := r.remotes(ctx, t, d)
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return "", ErrNoRemote
	}
	for _, n := range names {
		if n == "origin" {
			return n, nil
		}
	}
	if !isRemoteName(names[0]) {
		return "", ErrNoRemote
	}
	return names[0], nil
}

// FetchResult lists the refs a fetch changed.
type FetchResult struct {
	Updated []string `json:"updated"`
}

// Fetch fetches from the current branch's remote (or origin): no submodule
// recursion, no lazy fetch, transports pinned for a closed gate. A fetch
// writes refs and can run reference hooks, so it needs the Change gate.
func (r *Repo) Fetch(ctx context.Context, t trust.Trust) (*FetchResult, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "fetch")
	if err != nil {
		return nil, err
	}
	return r.fetch(ctx, t, d)
}

func (r *Repo) fetch(ctx context.Context, t trust.Trust, d *decision) (*FetchResult, error) {
	before, err := r.refs(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if _, err := r.defaultRemote(ctx, t, d); err != nil {
		return nil, err
	}
	if res, err := r.run(ctx, t, d, call{sub: subFetch, opts: []string{"-q", "--no-recurse-submodules", "--no-write-fetch-head"}}); err != nil {
		return nil, gitFailure(res, err)
	}
	after, err := r.refs(ctx, t, d)
	if err != nil {
		return nil, err
	}
	res := &FetchResult{Updated: []string{}}
	for name, oid := range after {
		if before[name] != oid {
			res.Updated = append(res.Updated, name)
		}
	}
	sort.Strings(res.Updated)
	return res, nil
}

// refs maps every ref name to its commit id.
func (r *Repo) refs(ctx context.Context, t trust.Trust, d *decision) (map[string]string, error) {
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--format=%(objectname) %(refname)"}})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		if oid, name, ok := strings.Cut(line, " "); ok {
			out[name] = oid
		}
	}
	return out, nil
}

// PullResult is where a pull left the branch: fast-forwarded, merged or
// rebased, or stopped on a conflict (Stopped names the operation, which
// git.conflicts shows).
type PullResult struct {
	OID         string `json:"oid"`
	FastForward bool   `json:"fastForward"`
	Merged      bool   `json:"merged,omitempty"`
	Rebased     bool   `json:"rebased,omitempty"`
	Stopped     string `json:"stopped,omitempty"`
	Conflicted  int    `json:"conflicted,omitempty"`
}

// Pull fetches and fast-forwards the current branch to its upstream; when
// both have moved it merges, or rebases when pull.rebase or
// branch.<name>.rebase says so, and a conflict stops it for the conflicts
// screen. pull.ff=only keeps the fast-forward alone; local changes in the
// way are refused with a sentence.
func (r *Repo) Pull(ctx context.Context, t trust.Trust) (*PullResult, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "pull")
	if err != nil {
		return nil, err
	}
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if st.Branch == "" {
		return nil, ErrDetached
	}
	if st.Upstream == "" {
		return nil, ErrNoUpstream
	}
	if _, err := r.fetch(ctx, t, d); err != nil {
		return nil, err
	}
	// A .gitmodules or config that arrived with the fetch is seen here.
	if d, err = r.decide(ctx, t, changeGate, "pull"); err != nil {
		return nil, err
	}
	opts := []string{"--ff-only", "-q"}
	if t.Closed() {
		opts = append(opts, "--no-verify")
	}
	if res, err := r.run(ctx, t, d, call{sub: subMerge, opts: opts, args: []string{"@{upstream}"}}); err != nil {
		if err = gitFailure(res, err); !errors.Is(err, ErrNotFastForward) {
			return nil, err
		}
		m, err := r.pullModeOf(ctx, t, d, st.Branch)
		if err != nil {
			return nil, err
		}
		return r.joinUpstream(ctx, t, d, m)
	}
	oid, err := r.head(ctx, t, d)
	if err != nil {
		return nil, err
	}
	return &PullResult{OID: oid, FastForward: true}, nil
}
