package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// GitHub goes through the user's own gh (their sign-in, their hosts),
// started here and nowhere else, as git is. gh runs git itself, so a
// closed call hands that git the closed gate's options through
// GIT_CONFIG_COUNT/KEY/VALUE and the same environment allowlist, and the
// checkout must pass the gate's decision first. Every call names the
// repository (--repo) that gh itself would resolve from the checkout's
// remotes, so nothing in the checkout can point gh at another one later.

var (
	ErrNoGitHub = refusal.New(refusal.Refused, "no github remote",
		"This project has no GitHub remote.") // the seed's sentence
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
	// errGHOutput: gh printed more than MaxGHOutput or what is not JSON
	// (logged on the host; the device gets the internal sentence).
	errGHOutput = errors.New("gh output unusable")
)

// MaxGHOutput bounds what one gh call may print.
const MaxGHOutput = 4 << 20

// maxGHError bounds the part of gh's own message a device is shown.
const maxGHError = 300

// ghTimeout bounds one gh call; a merge or a pull request's creation
// waits on GitHub and may take longer than a list.
const (
	ghTimeout     = 60 * time.Second
	ghSlowTimeout = 120 * time.Second
)

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

// ghCall is one gh run: its arguments (constants and validated values,
// never a device's text: that goes on stdin) and what it reads.
type ghCall struct {
	args    []string
	stdin   string
	timeout time.Duration
	// host, when set, is GH_HOST for the call: gh search has no --repo
	// host, so the pinned repository's host is named this way.
	host string
	// writable are folders outside any checkout the call writes in (a
	// clone's folder): the kernel wall lets gh and its git write there.
	writable []string
}

// runGH starts gh for the checkout r (nil: outside any checkout, for the
// account's own lists) and returns what it printed. For a closed call gh
// starts as a closed git does (startTool): gh runs git itself, and that git
// must not run outside the walls.
func runGH(ctx context.Context, gh string, r *Repo, t trust.Trust, d *decision, c ghCall) ([]byte, error) {
	timeout := c.timeout
	if timeout == 0 {
		timeout = ghTimeout
	}
	if r != nil && r.maxTime > 0 && r.maxTime < timeout {
		timeout = r.maxTime
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gh, c.args...)
	cmd.Dir = os.TempDir()
	if r != nil && r.workTree != "" {
		cmd.Dir = r.workTree
	}
	cmd.Env = r.ghEnv(t, d)
	if c.host != "" {
		cmd.Env = append(cmd.Env, "GH_HOST="+c.host)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return stopGroup(cmd.Process.Pid) } // as a git's: SIGTERM first, so gh's git deletes its lock files
	cmd.WaitDelay = stopGrace + 2*time.Second
	cmd.Stdin = strings.NewReader(c.stdin)
	out := &bounded{max: MaxGHOutput, full: cancel}
	errOut := &bounded{max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, errOut
	release, err := r.holdMemory(ctx, t, 2, true) // its share, and its git's, of the closed children's memory
	if err != nil {
		return nil, err
	}
	defer release()
	if r != nil && r.toolOutsideWallsForTest {
		err = cmd.Start()
	} else {
		err = startTool(cmd, r, t, gh, c.writable) // closed: inside the kernel wall and the memory bound, as a closed git
	}
	if err == nil {
		err = cmd.Wait()
	}
	switch {
	case errors.Is(err, exec.ErrNotFound) || cmd.Process == nil && errors.Is(err, fs.ErrNotExist):
		return nil, ErrGHMissing
	case out.over:
		return nil, fmt.Errorf("%w: more than %d bytes", errGHOutput, MaxGHOutput)
	case ctx.Err() == context.DeadlineExceeded:
		return nil, ErrGHTimeout
	case err != nil:
		return nil, ghFailure(errOut.buf.String(), r)
	}
	return out.buf.Bytes(), nil
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
// "GitHub refused this:" with gh's first line, the home folder written as
// ~ and the checkout's folder as ".", without control characters, cut to
// 300 bytes.
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

// GHRepo is a repository on a GitHub host, as gh's --repo names it.
type GHRepo struct {
	Host  string `json:"host"`
	Owner string `json:"owner"`
	Name  string `json:"name"`
}

// String is gh's HOST/OWNER/NAME.
func (g GHRepo) String() string { return g.Host + "/" + g.Owner + "/" + g.Name }

// FullName is OWNER/NAME.
func (g GHRepo) FullName() string { return g.Owner + "/" + g.Name }

// ghHosts are the hosts gatehouse treats as GitHub: github.com and the
// Enterprise host gh is pointed at (GH_HOST).
func ghHosts() []string {
	hosts := []string{"github.com"}
	if h := strings.ToLower(os.Getenv("GH_HOST")); h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// parseGitHubURL reads a remote URL as gh does (git.ParseURL and
// ghrepo.FromURL): scp-like user@host:owner/name, or ssh, git, http(s)
// URLs; the path must be exactly owner/name (".git" dropped). The host is
// lowercased, "www." dropped; a web URL keeps its port (an Enterprise host
// on another port), an SSH one does not (that port is SSH's).
func parseGitHubURL(raw string) (GHRepo, bool) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		user, rest, ok := strings.Cut(s, "@")
		if !ok {
			rest, user = s, ""
		}
		host, path, ok := strings.Cut(rest, ":")
		if !ok || host == "" || strings.Contains(host, "/") || (user == "" && !strings.Contains(raw, "@")) {
			return GHRepo{}, false
		}
		s = "ssh://" + user + "@" + host + "/" + strings.TrimPrefix(path, "/")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return GHRepo{}, false
	}
	host := u.Host
	switch strings.TrimPrefix(u.Scheme, "git+") {
	case "ssh", "git":
		host = u.Hostname()
	case "http", "https":
	default:
		return GHRepo{}, false
	}
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 {
		return GHRepo{}, false
	}
	name := strings.TrimSuffix(parts[1], ".git")
	if !ghNamePart(parts[0]) || !ghNamePart(name) {
		return GHRepo{}, false
	}
	return GHRepo{Host: host, Owner: parts[0], Name: name}, true
}

// ghNamePart is an owner or repository name GitHub allows: letters,
// digits, '-', '_' and '.', and never one that reads as an option or, as a
// folder a clone makes, as a git folder in any spelling (.git, .GIT, .git.,
// git~1).
func ghNamePart(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '-' || s == "." || s == ".." || fsguard.IsGitName(s) {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ghRemote is one remote as git remote -v lists it.
type ghRemote struct{ name, url string }

// ghRemoteScore orders remotes as gh does when none is marked: upstream,
// then github, then origin, then the rest in git's order.
func ghRemoteScore(name string) int {
	switch name {
	case "upstream":
		return 3
	case "github":
		return 2
	case "origin":
		return 1
	}
	return 0
}

// githubRemotes resolves the base repository as gh does, from git's own
// view of the remotes (git remote -v, through the gate: every url line,
// section, include, config.worktree and insteadOf as git applies them):
// the remote marked gh-resolved ("base", or an owner/name it names), else
// the first GitHub remote by gh's order. push is origin's repository when
// it is on the same host (a fork's), else the base.
func (r *Repo) githubRemotes(ctx context.Context, t trust.Trust, d *decision) (base, push GHRepo, err error) {
	res, err := r.run(ctx, t, d, call{sub: subRemote, opts: []string{"-v"}})
	if err != nil {
		return base, push, gitFailure(res, err)
	}
	var remotes []ghRemote
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		name, rest, ok := strings.Cut(line, "\t")
		if u, fetch := strings.CutSuffix(rest, " (fetch)"); ok && fetch {
			remotes = append(remotes, ghRemote{name, u})
		}
	}
	cfg, err := r.run(ctx, t, d, call{sub: subConfig, opts: []string{"--null", "--get-regexp", `^remote\..*\.gh-resolved$`}, okExit: []int{1}})
	if err != nil {
		return base, push, err
	}
	for rec := range bytes.SplitSeq(cfg.stdout, []byte{0}) {
		key, val, _ := strings.Cut(string(rec), "\n")
		name, ok := strings.CutSuffix(strings.TrimPrefix(key, "remote."), ".gh-resolved")
		if !ok || !strings.HasPrefix(key, "remote.") {
			continue
		}
		for _, rm := range remotes {
			if rm.name != name {
				continue
			}
			g, ok := parseGitHubURL(rm.url)
			if !ok {
				continue
			}
			if val != "base" {
				owner, repo, found := strings.Cut(val, "/")
				if !found || !ghNamePart(owner) || !ghNamePart(repo) {
					continue
				}
				g.Owner, g.Name = owner, repo
			}
			base = g
		}
		if base.Name != "" {
			break
		}
	}
	if base.Name == "" {
		slices.SortStableFunc(remotes, func(a, b ghRemote) int { return ghRemoteScore(b.name) - ghRemoteScore(a.name) })
		for _, rm := range remotes {
			if g, ok := ghRepoOf(rm.url); ok {
				base = g
				break
			}
		}
	}
	if base.Name == "" || !onGitHubHost(base.Host) {
		return GHRepo{}, GHRepo{}, ErrNoGitHub
	}
	push = base
	for _, rm := range remotes {
		if p, ok := parseGitHubURL(rm.url); ok && rm.name == "origin" && p.Host == base.Host {
			push = p
		}
	}
	return base, push, nil
}

// ghRepoOf reads a remote URL as a repository on a GitHub host.
func ghRepoOf(u string) (GHRepo, bool) {
	g, ok := parseGitHubURL(u)
	return g, ok && onGitHubHost(g.Host)
}

func onGitHubHost(host string) bool {
	for _, h := range ghHosts() {
		if host == h {
			return true
		}
	}
	return false
}
