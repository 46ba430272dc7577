package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/internal/redact"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// gh, GitHub's own command-line tool, is the second program gate starts,
// through the same launcher rules as git: the user's own gh (their sign-in,
// their hosts), started here and nowhere else. gh runs git itself, so a
// closed call hands that git the closed gate's options through
// GIT_CONFIG_COUNT/KEY/VALUE and the same environment allowlist, starts
// inside the same kernel wall and memory bound, and the checkout must pass
// the gate's decision first (Repo.GH). What gh's output means on GitHub
// (repositories, lists, pull requests, clones) is package github's
// (github/); gate only decides, starts gh, bounds it and turns its failure
// into a sentence.

var (
	ErrGHMissing = refusal.New(refusal.Refused, "gh not installed",
		"GitHub's gh is not installed on the computer. Install it there and sign in with gh auth login.")
	ErrGHSignedOut = refusal.New(refusal.Refused, "gh signed out",
		"gh on the computer is not signed in to GitHub. Run gh auth login there.")
	ErrGHNotFound = refusal.New(refusal.NotFound, "github not found",
		"GitHub has no such repository, issue or pull request, or this account cannot see it.")
	ErrGHRateLimited = refusal.New(refusal.Retry, "github rate limited",
		"GitHub's rate limit for this account was reached. Try again in a few minutes.")
	ErrGHTimeout = refusal.New(refusal.Retry, "gh timed out",
		"GitHub did not answer in time. Try again.")
	ErrGHFailed = refusal.New(refusal.Refused, "gh failed",
		"GitHub refused this.")
	// ErrGHOutput: gh printed more than MaxGHOutput, or what its caller
	// cannot read (logged on the host; the device gets the internal
	// sentence).
	ErrGHOutput = errors.New("gh output unusable")
)

// MaxGHOutput bounds what one gh call may print.
const MaxGHOutput = 4 << 20

// maxGHError bounds the part of gh's own message a device is shown.
const maxGHError = 300

// ghTimeout bounds one gh call whose GHCall names no other bound.
const ghTimeout = 60 * time.Second

// ghKeepEnv is what gh needs from gatehouse's environment beyond keepEnv:
// where its sign-in and hosts are, the certificates and proxies it uses.
// Nothing else of the user's environment reaches it (no BROWSER, no
// EDITOR, no GH_DEBUG).
var ghKeepEnv = []string{
	"GH_HOST", "GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"GH_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"SSH_AUTH_SOCK",
}

// ghForcedEnv makes gh answer and never wait: no prompt, no pager, no
// update check, no colour or spinner in what gatehouse reads.
var ghForcedEnv = []string{
	"GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "GH_PAGER=cat", "PAGER=cat", "NO_COLOR=1",
	"CLICOLOR=0", "GH_SPINNER_DISABLED=1", "GH_EDITOR=:", "GH_BROWSER=false", "BROWSER=false", "LC_ALL=C",
}

// ghBinary is the gh a Repo runs: Options.GH, or "gh" on PATH.
func ghBinary(name string) string {
	if name == "" {
		return "gh"
	}
	return name
}

// ghEnv is a gh process's environment. For a closed call, gh's git gets
// what a closed git call gets: the allowlisted environment, the pinned
// repository, and every forced option (including the decision's filter
// overrides) as GIT_CONFIG_COUNT entries, which git reads like -c.
func (r *Repo) ghEnv(t trust.Trust, d *decision) []string {
	var env []string
	if r != nil {
		env = r.environ(t, sub{name: "gh", network: true})
	} else {
		// no checkout: the allowlist and gatehouse's own git variables
		// (a clone's git reads them as any git does)
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if kept(name, append(append([]string{}, keepEnv...), networkEnv...)) {
				env = append(env, kv)
			}
		}
		for _, o := range everyoneEnv {
			env = append(env, o.Key+"="+o.Value)
		}
		if t.Closed() {
			for _, o := range closedEnv {
				env = append(env, o.Key+"="+o.Value)
			}
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		for _, k := range ghKeepEnv {
			if name == k && name != "SSH_AUTH_SOCK" {
				env = append(env, kv)
			}
		}
	}
	env = append(env, ghForcedEnv...)
	if r == nil && !t.Closed() {
		return env
	}
	opts := append([]Option{}, everyone...)
	if t.Closed() {
		opts = append(opts, closedAll...)
		if d != nil {
			opts = append(opts, d.overrides...)
		}
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(opts)))
	for i, o := range opts {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, o.Key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, o.Value))
	}
	return env
}

// GHCall is one gh run: its arguments (constants and validated values,
// never a device's text: that goes on stdin) and what it reads.
type GHCall struct {
	Args  []string
	Stdin string
	// Timeout bounds the run (0: a minute), and the checkout's own bound
	// (Options.Timeout) bounds it further.
	Timeout time.Duration
	// Host, when set, is GH_HOST for the call: gh search has no --repo
	// host, so the pinned repository's host is named this way.
	Host string
	// Writable are folders outside any checkout the call writes in (a
	// clone's folder): the kernel wall lets gh and its git write there.
	Writable []string
}

// runGH starts gh for the checkout r (nil: outside any checkout, for the
// account's own lists) and returns what it printed. For a closed call gh
// starts as a closed git does (startTool): gh runs git itself, and that git
// must not run outside the walls.
func runGH(ctx context.Context, gh string, r *Repo, t trust.Trust, d *decision, c GHCall) ([]byte, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = ghTimeout
	}
	if r != nil && r.maxTime > 0 && r.maxTime < timeout {
		timeout = r.maxTime
	}
	dir := os.TempDir()
	if r != nil && r.workTree != "" {
		dir = r.workTree
	}
	env := r.ghEnv(t, d)
	if c.Host != "" {
		env = append(env, "GH_HOST="+c.Host)
	}
	start := func(cmd *exec.Cmd) error { return startTool(cmd, r, t, gh, c.Writable) } // closed: inside the kernel wall and the memory bound, as a closed git
	if r != nil && r.toolOutsideWallsForTest {
		start = (*exec.Cmd).Start
	}
	// Stopped as a git is (SIGTERM first, so gh's git deletes its lock
	// files); its share, and its git's, of the closed children's memory.
	l, err := r.spawn(ctx, t, spawn{path: gh, args: c.Args, dir: dir, env: env, stdin: strings.NewReader(c.Stdin),
		timeout: timeout, maxOut: MaxGHOutput, processes: 2, tool: true, start: start})
	if err != nil {
		return nil, err
	}
	switch {
	case errors.Is(l.err, exec.ErrNotFound) || !l.started && errors.Is(l.err, fs.ErrNotExist):
		return nil, ErrGHMissing
	case l.truncated:
		return nil, fmt.Errorf("%w: more than %d bytes", ErrGHOutput, MaxGHOutput)
	case l.expired:
		return nil, ErrGHTimeout
	case l.err != nil:
		return nil, ghFailure(string(l.stderr), r)
	}
	return l.stdout, nil
}

// ghFailures are gh's usual failures (gh 2.x, LC_ALL=C), first match wins.
var ghFailures = []struct {
	text string
	err  *refusal.Error
}{
	{"gh auth login", ErrGHSignedOut},
	{"authentication token", ErrGHSignedOut},
	{"HTTP 401", ErrGHSignedOut},
	{"Bad credentials", ErrGHSignedOut},
	{"rate limit", ErrGHRateLimited},
	{"Could not resolve to a", ErrGHNotFound},
	{"HTTP 404", ErrGHNotFound},
	{"no pull requests found", ErrGHNotFound},
	{"not found", ErrGHNotFound},
	{"i/o timeout", ErrGHTimeout},
	{"context deadline exceeded", ErrGHTimeout},
}

// ghFailure turns gh's message into a sentence: a known failure's own, or
// "GitHub refused this:" with gh's first line, control characters taken
// out, what looks like a secret masked (redact.Line: gh echoes what
// GitHub or its config said, which may hold a token), the home folder
// written as ~ and the checkout's folder as ".", cut to 300 bytes. It is
// the one place gh's own words become a device's sentence.
func ghFailure(stderr string, r *Repo) error {
	for _, f := range ghFailures {
		if strings.Contains(stderr, f.text) {
			return f.err
		}
	}
	line := strings.TrimSpace(stderr)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	// A control character is taken out, not turned into a space: one
	// printed inside a token ("gh\rp_…") would split it into words the
	// masking no longer reads as a token.
	line = strings.Map(func(c rune) rune {
		switch {
		case c == '\t':
			return ' '
		case unicode.IsControl(c):
			return -1
		}
		return c
	}, line)
	line, _ = redact.Line(line)
	return refusal.Errorf(ErrGHFailed, "GitHub refused this: %s", scrubPaths(line, r))
}

// absPath is an absolute path in a message: a "/" that starts a word.
var absPath = regexp.MustCompile(`(^|[\s"'(=:\[])/[^\s"')\]]*`)

// scrubPaths keeps local folders out of a sentence for a device.
func scrubPaths(s string, r *Repo) string {
	if r != nil && r.workTree != "" {
		s = strings.ReplaceAll(s, r.workTree, ".")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" {
		s = strings.ReplaceAll(s, filepath.Clean(home), "~")
	}
	s = absPath.ReplaceAllString(s, "${1}…") // any other folder of this computer
	s = display.Text(s)
	if len(s) > maxGHError {
		s = clipUTF8(s, maxGHError)
	}
	if s == "" {
		s = "gh gave no reason."
	}
	return s
}

// GH is gh for one GitHub operation on a checkout: the gate's decision,
// made once by Repo.GH before the operation's first git or gh call, and the
// trust it was made for. Every gh it starts, and every git it runs for the
// operation, goes under that decision.
type GH struct {
	r *Repo
	t trust.Trust
	d *decision
}

// GH decides the gate a GitHub operation needs, naming action in a
// refusal's sentence: the Read gate, or with change the Change gate (gh may
// run git in the checkout for a merge or a pull request's creation). A
// checkout whose config would make gh's git run a program is refused for a
// closed caller here, as for git, before anything starts.
func (r *Repo) GH(ctx context.Context, t trust.Trust, change bool, action string) (*GH, error) {
	lvl := readGate
	if change {
		lvl = changeGate
	}
	d, err := r.decide(ctx, t, lvl, action)
	if err != nil {
		return nil, err
	}
	return &GH{r: r, t: t, d: d}, nil
}

// Run starts the checkout's gh (Options.GH) in its work tree with c, under
// the operation's decision, and returns what gh printed or a refusal.
func (g *GH) Run(ctx context.Context, c GHCall) ([]byte, error) {
	return runGH(ctx, g.r.ghPath, g.r, g.t, g.d, c)
}

// RunGH starts gh (ghPath, or "gh" on PATH) outside every checkout, for
// what names no checkout (the account's own repositories, a clone into a
// new folder), with the environment and walls of trust t.
func RunGH(ctx context.Context, ghPath string, t trust.Trust, c GHCall) ([]byte, error) {
	return runGH(ctx, ghBinary(ghPath), nil, t, nil, c)
}

// Remote is one of a checkout's remotes as git lists it: its name and the
// URL it fetches from.
type Remote struct{ Name, URL string }

// RemoteMark is a remote.NAME.gh-resolved entry, which gh writes to mark
// the base repository: the remote's name and its value ("base", or an
// owner/name).
type RemoteMark struct{ Remote, Value string }

// Remotes are the checkout's remotes in git's order, from git's own view of
// them (git remote -v, through the gate: every url line, section, include,
// config.worktree and insteadOf as git applies them), and the gh-resolved
// marks in config order: what gh reads to pick the repository a call names.
func (g *GH) Remotes(ctx context.Context) ([]Remote, []RemoteMark, error) {
	res, err := g.r.run(ctx, g.t, g.d, call{sub: subRemote, opts: []string{"-v"}})
	if err != nil {
		return nil, nil, gitFailure(res, err)
	}
	var remotes []Remote
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		name, rest, ok := strings.Cut(line, "\t")
		if u, fetch := strings.CutSuffix(rest, " (fetch)"); ok && fetch {
			remotes = append(remotes, Remote{name, u})
		}
	}
	cfg, err := g.r.run(ctx, g.t, g.d, call{sub: subConfig, opts: []string{"--null", "--get-regexp", `^remote\..*\.gh-resolved$`}, okExit: []int{1}})
	if err != nil {
		return nil, nil, err
	}
	var marks []RemoteMark
	for rec := range bytes.SplitSeq(cfg.stdout, []byte{0}) {
		key, val, _ := strings.Cut(string(rec), "\n")
		name, ok := strings.CutSuffix(strings.TrimPrefix(key, "remote."), ".gh-resolved")
		if !ok || !strings.HasPrefix(key, "remote.") {
			continue
		}
		marks = append(marks, RemoteMark{name, val})
	}
	return remotes, marks, nil
}

// PushBranch pushes the current branch as git.push does, under the
// operation's decision, and names it; a detached HEAD or a branch name git
// would not take is refused. The caller holds the checkout (Repo.Hold) for
// the whole operation, so the branch pushed is the one gh is then told of.
func (g *GH) PushBranch(ctx context.Context) (string, error) {
	st, err := g.r.status(ctx, g.t, g.d)
	if err != nil {
		return "", err
	}
	if st.Branch == "" {
		return "", ErrDetached
	}
	if !ValidBranch(st.Branch) {
		return "", ErrBadRef
	}
	if err := g.r.push(ctx, g.t, g.d); err != nil {
		return "", err
	}
	return st.Branch, nil
}

// FilterPatch is a patch gh printed, as a Diff for a viewer of grant gr:
// the sections git.diff would leave out for the operation's trust and gr
// dropped by the gate's one visibility rule (secret files below full,
// hard-linked files by every name a section carries), then cut to a
// device's size.
func (g *GH) FilterPatch(gr trust.Grant, patch []byte) *Diff {
	var buf bytes.Buffer
	df := &Diff{}
	df.HiddenSecrets = g.r.filterPatch(&buf, patch, viewer{g.t, gr}, false)
	df.Diff, df.Truncated = cut(buf.Bytes(), false)
	return df
}
