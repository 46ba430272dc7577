package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/trust"
)

// maxRefs bounds the branches one listing gathers (a device pages through
// them); for-each-ref's output bound (16 MiB) may stop it earlier.
const maxRefs = 500_000

// Branches lists local and remote-tracking branches.
type Branches struct {
	Current   string   `json:"current"` // "" when detached
	Local     []string `json:"local"`
	Remote    []string `json:"remote"`
	Truncated bool     `json:"truncated,omitempty"`
	// Next is the offset of the next page, counted over Local then Remote
	// in git's order, 0 at the end.
	Next int `json:"next,omitempty"`
}

// Branches reads the branch list (for-each-ref with full ref names, no
// committer-date sort: that reads commits, and in a partial clone would
// fetch them).
func (r *Repo) Branches(ctx context.Context, t trust.Trust) (*Branches, error) {
	d, err := r.decide(ctx, t, readGate, "see its branches")
	if err != nil {
		return nil, err
	}
	res, err := r.run(ctx, t, d, call{sub: subForEachRef,
		opts: []string{"--format=%(HEAD)%(refname)", "refs/heads", "refs/remotes"}})
	if err != nil {
		return nil, err
	}
	b := &Branches{Local: []string{}, Remote: []string{}, Truncated: res.truncated}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		if len(line) < 2 {
			continue
		}
		if len(b.Local)+len(b.Remote) >= maxRefs {
			b.Truncated = true
			break
		}
		current, ref := line[0] == '*', line[1:]
		if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			b.Local = append(b.Local, name)
			if current {
				b.Current = name
			}
		} else if name, ok := strings.CutPrefix(ref, "refs/remotes/"); ok && !strings.HasSuffix(name, "/HEAD") {
			b.Remote = append(b.Remote, name)
		}
	}
	return b, nil
}

// Switch checks out another branch (a remote-tracking one creates its local
// branch). It never runs hooks, for anyone (no post-checkout), and with the
// switch off needs the Change gate: a checkout runs smudge filters.
func (r *Repo) Switch(ctx context.Context, t trust.Trust, branch string) error {
	if !validDeviceBranch(branch) {
		return ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "switch branches")
	if err != nil {
		return err
	}
	res, err := r.run(ctx, t, d, switchCall(branch))
	return gitFailure(res, err)
}

// switchCall is Switch's git: the device's branch name is a positional
// argument after --end-of-options (subSwitch), so git switch reads it as a
// name whatever it looks like, never as an option. A full refs/heads/ name
// would not do here: git switch wants a branch's name ("a branch is
// expected, got 'refs/heads/x'").
func switchCall(branch string) call {
	return call{sub: subSwitch, config: noHooks, opts: []string{"-q", "--no-recurse-submodules"}, args: []string{branch}}
}

// branchCheckOffForTest takes a device's branch name without ValidBranch,
// so a test shows that git itself never reads one as an option: each goes
// where git takes a name or a ref (after --end-of-options, or as
// refs/heads/NAME), never where it parses options. Only this package's
// tests set it.
var branchCheckOffForTest atomic.Bool

// validDeviceBranch is ValidBranch, for a name a device sent.
func validDeviceBranch(name string) bool { return branchCheckOffForTest.Load() || ValidBranch(name) }

// noHooks is forced on the calls that never run hooks, for the desktop too:
// switching branches and adding worktrees (with the branch it makes), so a
// post-checkout or reference-transaction hook in the checkout never runs
// for them, even as the desktop ("switch runs post-checkout" and "worktree
// add runs post-checkout" in TestHooksOnEveryOperation, gate/attacks_test.go).
var noHooks = []Option{{"core.hooksPath", "/dev/null", "this operation never runs hooks, for anyone"}}

// CommitInfo is one entry of a log.
type CommitInfo struct {
	OID     string `json:"oid"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
	Date    string `json:"date"` // ISO 8601
}

// Log is a page of history.
type Log struct {
	Commits []CommitInfo `json:"commits"`
	// Next is the commit to pass as before for the next page, "" at the end.
	Next string `json:"next,omitempty"`
}

// MaxLog bounds a page of history.
const MaxLog = 200

// logFormat is a history record: id, subject, author and date, each field
// ended by a NUL (-z ends the record's last one). A commit's author wrote
// its subject and name, and either may hold any byte but NUL (git ends a
// commit's text at its first NUL), so NUL is the one separator they cannot
// forge: a unit separator or a newline in a subject stays in the subject.
// Git cuts the subject and the author's name to a bound (%<(N,trunc),
// padding them with spaces, which are trimmed), so one commit with a
// message of megabytes cannot fill the output bound and empty the page.
// The bytes are UTF-8 whatever the repository's i18n.logOutputEncoding or
// i18n.commitEncoding says: everyone in forced.go pins the output encoding.
const logFormat = "--format=%H%x00%<(300,trunc)%s%x00%<(100,trunc)%an%x00%aI"

// logFields is the number of fields of a logFormat record.
const logFields = 4

// errHistoryOutput is history git printed that gatehouse cannot read: a
// record whose id is not an object id, or fields that do not make whole
// records. Nothing of such output is shown or handed to git again; the
// device reads ErrGitFailed's sentence.
var errHistoryOutput = fmt.Errorf("gate: git printed history gatehouse cannot read: %w", ErrGitFailed)

// fullOID reports whether s is a whole object id as git prints one: 40 hex
// digits (SHA-1) or 64 (SHA-256). An id parsed from git's output passes it
// before it reaches a device as a commit id or git as an argument.
func fullOID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && ValidOID(s)
}

// LogOptions pick a page of history.
type LogOptions struct {
	Limit  int    // commits on the page, 1 to MaxLog (50 when 0)
	Before string // a page's Next ("<tip>+<skip>"), or a commit id to start at instead of HEAD
	Path   string // only commits that changed this path ("history of this file")
}

// Log lists up to Limit commits of the history of HEAD in git log's own
// order, commits merged in from other branches included, or of Before when
// given, only those that changed Path when one is given (git's own history
// simplification decides which). A page's Next names the tip the first
// page read and how many commits came before it ("<tip>+<skip>"), so the
// pages of a history with merges neither repeat nor skip a commit however
// HEAD moves meanwhile: a walk from a commit of the middle of such a history
// is not the rest of it.
func (r *Repo) Log(ctx context.Context, t trust.Trust, o LogOptions) (*Log, error) {
	limit, before := o.Limit, o.Before
	if limit <= 0 || limit > MaxLog {
		limit = 50
	}
	start, skip := "", 0
	if before != "" {
		oid, n, paged := strings.Cut(before, "+")
		if !ValidOID(oid) {
			return nil, ErrBadOID
		}
		if paged {
			s, err := strconv.Atoi(n)
			if err != nil || s < 1 || s > maxLogSkip || n != strconv.Itoa(s) {
				return nil, ErrBadOID
			}
			skip = s
		}
		start = oid
	}
	var paths []string
	if o.Path != "" {
		p, err := cleanPaths([]string{o.Path}, 1)
		if err != nil {
			return nil, err
		}
		paths = p
	}
	d, err := r.decide(ctx, t, readGate, "see its history")
	if err != nil {
		return nil, err
	}
	if start == "" {
		tip, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q", "HEAD"}, okExit: []int{1}})
		if err != nil {
			return nil, err
		}
		if tip.exit != 0 { // no commit yet
			return &Log{Commits: []CommitInfo{}}, nil
		}
		start = strings.TrimSpace(string(tip.stdout))
		if !fullOID(start) {
			return nil, fmt.Errorf("%w: HEAD is %q", errHistoryOutput, clipUTF8(start, 80))
		}
	}
	opts := []string{"-z", logFormat, "-n", strconv.Itoa(limit + 1)}
	if skip > 0 {
		opts = append(opts, "--skip="+strconv.Itoa(skip))
	}
	res, err := r.run(ctx, t, d, call{sub: subLog, opts: opts, args: []string{start}, paths: paths})
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) && (strings.Contains(ee.Stderr, "does not have any commits") || strings.Contains(ee.Stderr, "unknown revision")) {
			if before == "" {
				return &Log{Commits: []CommitInfo{}}, nil
			}
			return nil, errors.Join(ErrUnknownRef, err)
		}
		return nil, err
	}
	l, err := parseLog(res.stdout, res.truncated, limit)
	if err == nil && l.Next != "" {
		l.Next = start + "+" + strconv.Itoa(skip+len(l.Commits))
	}
	return l, err
}

// maxLogSkip bounds how deep into a history a page may start: git walks
// every commit it skips.
const maxLogSkip = 10_000_000

// parseLog reads logFormat records: up to limit commits, and Next when git
// printed one more (or stopped at its output bound after a whole record).
// Every id is checked before it is used; a record that does not read is an
// error, never a commit silently left out.
func parseLog(out []byte, truncated bool, limit int) (*Log, error) {
	fields := strings.Split(string(out), "\x00")
	fields = fields[:len(fields)-1] // what follows the last NUL: "" or a cut field
	if len(fields)%logFields != 0 && !truncated {
		return nil, fmt.Errorf("%w: %d fields", errHistoryOutput, len(fields))
	}
	l := &Log{Commits: []CommitInfo{}}
	for i := 0; i+logFields <= len(fields); i += logFields {
		f := fields[i : i+logFields]
		oid := strings.TrimPrefix(f[0], "\n")
		if !fullOID(oid) {
			return nil, fmt.Errorf("%w: record %d has the id %q", errHistoryOutput, i/logFields, clipUTF8(oid, 80))
		}
		last := i+2*logFields > len(fields) // no whole record after this one
		if len(l.Commits) == limit || truncated && last && len(l.Commits) > 0 {
			l.Next = oid
			break
		}
		l.Commits = append(l.Commits, CommitInfo{OID: oid, Subject: strings.TrimRight(f[1], " "), Author: strings.TrimRight(f[2], " "), Date: f[3]})
	}
	return l, nil
}

// Shown is one commit with its diff.
type Shown struct {
	Commit CommitInfo `json:"commit"`
	// Message is the commit's whole message (subject and body), at most
	// maxShownMessage bytes.
	Message string `json:"message"`
	// Parents are the commit's parents. A merge (two or more) is shown as
	// git's combined diff against all of them at once (--cc): a file
	// appears only where the merge differs from every parent, and Combined
	// says so.
	Parents       []string `json:"parents"`
	Combined      bool     `json:"combined,omitempty"`
	Diff          string   `json:"diff"`
	Truncated     bool     `json:"truncated"`
	HiddenSecrets int      `json:"hiddenSecrets,omitempty"`
}

// clipUTF8 cuts s to at most max bytes, never inside a character.
func clipUTF8(s string, max int) string {
	if len(s) > max {
		for max > 0 && !utf8.RuneStart(s[max]) {
			max--
		}
		s = s[:max]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// showFormat is the commit line Show reads: id, date and parents, each
// ended by a unit separator. Git writes all three, so none can hold the
// separator; the author and message, which the commit's author wrote, are
// read by messageFormat.
const showFormat = "--format=%H%x1f%aI%x1f%P%x1f"

// messageFormat reads the author's name and the subject (each one line:
// git ends a name at the line's end and joins a subject's lines), then the
// whole message.
const messageFormat = "--format=%<(100,trunc)%an%n%<(300,trunc)%s%n%B"

// maxShownMessage bounds the message git.show hands a device, so the
// commit and its diff fit one answer.
const maxShownMessage = 16 << 10

// showFlags pin how a merge is shown, whatever the repository's config
// says: the dense combined diff, with every parent's name on its own ---
// line (--combined-all-paths), so a file renamed from a secret in a parent
// is named as such to the secret filter; without it the parent's lines
// would show under the new name only. subShow's table flags add the rest.
var showFlags = []string{"--find-renames", "--cc", "--combined-all-paths", showFormat}

// Show returns a commit and its diff (of one path when given), with the
// files the viewer may not see refused when named and left out of the diff
// otherwise, by the rule Diff asks (Repo.hidden).
func (r *Repo) Show(ctx context.Context, t trust.Trust, g trust.Grant, oid, path string) (*Shown, error) {
	if !ValidOID(oid) {
		return nil, ErrBadOID
	}
	v := viewer{t, g}
	c := call{sub: subShow, args: []string{oid}}
	if path != "" {
		p, err := cleanPaths([]string{path}, 1)
		if err != nil {
			return nil, err
		}
		if err := r.refuseNamed(v, p[0]); err != nil {
			return nil, err
		}
		c.paths = p
	}
	d, err := r.decide(ctx, t, readGate, "see this commit")
	if err != nil {
		return nil, err
	}
	c.opts = showFlags
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) && strings.Contains(ee.Stderr, "unknown revision") {
			return nil, errors.Join(ErrUnknownRef, err)
		}
		return nil, err
	}
	head, patch, _ := bytes.Cut(res.stdout, []byte("\x1f\n"))
	patch = bytes.TrimPrefix(patch, []byte("\n"))
	f := strings.Split(string(head), "\x1f")
	if len(f) != 3 || !fullOID(f[0]) {
		return nil, ErrUnknownRef // not a commit: a tag's or a blob's text comes first
	}
	s := &Shown{Commit: CommitInfo{OID: f[0], Date: f[1]}, Parents: strings.Fields(f[2])}
	for _, p := range s.Parents {
		if !fullOID(p) {
			return nil, fmt.Errorf("%w: a parent %q", errHistoryOutput, clipUTF8(p, 80))
		}
	}
	s.Combined = len(s.Parents) > 1
	msg, err := r.run(ctx, t, d, call{sub: subLog, opts: []string{"-n1", messageFormat}, args: []string{s.Commit.OID}})
	if err != nil {
		return nil, err
	}
	author, rest, _ := strings.Cut(string(msg.stdout), "\n")
	subject, body, _ := strings.Cut(rest, "\n")
	s.Commit.Author, s.Commit.Subject = strings.TrimRight(author, " "), strings.TrimRight(subject, " ")
	s.Message = clipUTF8(strings.TrimRight(body, "\n"), maxShownMessage)
	var buf bytes.Buffer
	s.HiddenSecrets = r.filterPatch(&buf, patch, v, !commitLinksShownForTest) // a link's section, as the work tree's and the index's diffs (visible.go)
	s.Diff, s.Truncated = cut(buf.Bytes(), res.truncated)
	return s, nil
}
