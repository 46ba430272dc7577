package github

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// recordingGH is a gh that records each call's arguments, environment and
// stdin in a folder, runs "git status" in its working folder as gh's own
// git would (so a checkout's config gets its chance to run a program),
// and answers what the gatehouse call expects. stderr, when set, is
// printed with exit status 1 instead.
type recordingGH struct {
	path, log string
}

// newRecordingGH makes a recording gh for the checkout dir. Its record is
// kept in dir's git folder, which the kernel wall lets a closed call's gh
// write in (as its git writes there), so the record needs no hole in the
// wall.
func newRecordingGH(t *testing.T, dir, stderr string) *recordingGH {
	t.Helper()
	log, err := os.MkdirTemp(filepath.Join(dir, ".git"), "gh-calls-")
	if err != nil {
		t.Fatal(err)
	}
	g := &recordingGH{path: filepath.Join(t.TempDir(), "gh"), log: log}
	fail := ""
	if stderr != "" {
		fail = fmt.Sprintf("printf '%%s\\n' %s >&2; exit 1\n", shellQuote(stderr))
	}
	script := `#!/bin/sh
n=$(ls '` + g.log + `' | wc -l)
f='` + g.log + `'/$(printf %03d "$n")
printf '%s\0' "$@" > "$f.args"
env > "$f.env"
cat > "$f.stdin"
git status --porcelain > /dev/null 2>&1
` + fail + `case "$*" in
*"repo view"*) echo '{"mergeCommitAllowed":false,"squashMergeAllowed":true,"rebaseMergeAllowed":true,"defaultBranchRef":{"name":"trunk"}}' ;;
*"pr diff"*) printf 'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-TOKEN=old\n+TOKEN=secret-marker\n' ;;
*"search issues"*) echo '[{"number":1,"url":"https://github.com/octo/hello/issues/1"},{"number":7,"url":"https://github.com/victim/private/issues/7"},{"number":8,"url":"https://github.com/octo/hello-other/issues/8"}]' ;;
*"/branches"*) echo '[{"name":"trunk"},{"name":"feature"},{"name":"-x"},{"name":"trunk"}]' ;;
*"/actions/jobs/"*) printf '\033[31mfailed\033[0m\nTOKEN=hunter2\n' ;;
*"run view"*) echo '{"jobs":[{"databaseId":11,"name":"lint","conclusion":"failure","steps":[{"name":"make lint","conclusion":"failure"}]},{"databaseId":12,"name":"build","conclusion":"success"}]}' ;;
*" list "*) echo '[{"number":1},{"number":2}]' ;;
*" view "*) echo '{"number":1,"title":"t"}' ;;
*) echo 'https://github.com/octo/hello/pull/9' ;;
esac
`
	if err := os.WriteFile(g.path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// call is one recorded gh run.
type ghRun struct {
	args  []string
	env   map[string]string
	stdin string
}

func (g *recordingGH) calls(t *testing.T) []ghRun {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(g.log, "*.args"))
	slices.Sort(names)
	var out []ghRun
	for _, n := range names {
		base := strings.TrimSuffix(n, ".args")
		a, _ := os.ReadFile(n)
		e, _ := os.ReadFile(base + ".env")
		in, _ := os.ReadFile(base + ".stdin")
		run := ghRun{args: strings.Split(strings.TrimSuffix(string(a), "\x00"), "\x00"), env: map[string]string{}, stdin: string(in)}
		for line := range strings.SplitSeq(string(e), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				run.env[k] = v
			}
		}
		out = append(out, run)
	}
	return out
}

func openGH(t *testing.T, dir string, g *recordingGH) *gate.Repo {
	t.Helper()
	root, err := fsguard.OpenRoot(dir, fsguard.Options{Home: "/nonexistent-home"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	r, err := gate.Open(root, gate.Options{Served: []string{root.Path()}, GH: g.path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// forcedConfig reads the GIT_CONFIG_COUNT options gh's git was given.
func forcedConfig(env map[string]string) map[string]string {
	out := map[string]string{}
	var n int
	fmt.Sscan(env["GIT_CONFIG_COUNT"], &n)
	for i := range n {
		out[env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)]] = env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)]
	}
	return out
}

// Every call names the repository gh itself would resolve: the remote
// marked gh-resolved, then upstream, then origin; a checkout without a
// GitHub remote is refused before gh starts.
func TestGHIsPinnedToTheBaseRepository(t *testing.T) {
	gittest.Home(t, "")
	for _, c := range []struct {
		name   string
		config []string
		want   string
	}{
		{"origin only", []string{"remote.origin.url", "git@github.com:me/app.git"}, "github.com/me/app"},
		{"upstream over origin", []string{"remote.origin.url", "https://github.com/me/fork.git", "remote.upstream.url", "https://github.com/octo/hello"}, "github.com/octo/hello"},
		{"gh-resolved over upstream", []string{"remote.origin.url", "https://github.com/me/fork.git", "remote.origin.gh-resolved", "base", "remote.upstream.url", "https://github.com/octo/hello"}, "github.com/me/fork"},
		{"not on GitHub", []string{"remote.origin.url", "https://gitlab.com/me/app.git"}, ""},
		{"no remote", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := repoWith(t, map[string]string{"a.txt": "a\n"}, c.config...)
			g := newRecordingGH(t, dir, "")
			_, err := ListOf(ctx, openGH(t, dir, g), closed, "issues", "", 0)
			if c.want == "" {
				wantRefusal(t, err, ErrNoRemote)
				if len(g.calls(t)) != 0 {
					t.Fatal("gh ran for a project without a GitHub remote")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			args := g.calls(t)[0].args
			if i := slices.Index(args, "--repo"); i < 0 || args[i+1] != c.want {
				t.Fatalf("gh %q, want --repo %s", args, c.want)
			}
		})
	}
}

// gh's git gets the closed gate's options and environment for a phone
// with the switch off, and only the options everyone gets for the
// desktop; nothing else of gatehouse's environment reaches gh.
func TestGHEnvironment(t *testing.T) {
	gittest.Home(t, "")
	t.Setenv("GATEHOUSE_TEST_CANARY", "must-not-reach-gh")
	t.Setenv("GH_HOST", "github.com")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	g := newRecordingGH(t, dir, "")
	r := openGH(t, dir, g)
	if _, err := ListOf(ctx, r, closed, "pulls", "all", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ListOf(ctx, r, desktop, "pulls", "all", 0); err != nil {
		t.Fatal(err)
	}
	calls := g.calls(t)
	phone, desk := calls[0].env, calls[1].env
	for _, env := range []map[string]string{phone, desk} {
		if env["GATEHOUSE_TEST_CANARY"] != "" {
			t.Fatal("gatehouse's environment reached gh")
		}
		if env["GH_PROMPT_DISABLED"] != "1" || env["GH_HOST"] != "github.com" || env["GIT_DIR"] == "" || env["GIT_TERMINAL_PROMPT"] != "0" {
			t.Fatalf("gh's environment: %v", env)
		}
	}
	if forcedConfig(phone)["core.hooksPath"] != "/dev/null" || phone["GIT_ALLOW_PROTOCOL"] == "" {
		t.Fatalf("the phone's gh lacks the closed gate's git options: %v", forcedConfig(phone))
	}
	if _, ok := forcedConfig(desk)["core.hooksPath"]; ok {
		t.Fatalf("the desktop's gh got the closed gate's options: %v", forcedConfig(desk))
	}
	if !slices.Equal(calls[0].args, []string{"pr", "list", "--repo", "github.com/octo/hello", "--json", lists["pulls"].fields, "--limit", "30", "--state", "all"}) {
		t.Fatalf("args: %q", calls[0].args)
	}
}

// A checkout whose config runs a program from git (a clean filter, which
// the git that gh starts would run on a dirty file): for the desktop the
// program runs, the attack as it stands; for a phone with the switch off,
// a merge (Change gate) is refused before gh starts, and a read hands gh's
// git the decision's filter overrides, so the program does not run either.
func TestGHOnAHostileCheckout(t *testing.T) {
	gittest.Home(t, "")
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"},
		"remote.origin.url", "https://github.com/octo/hello.git", "filter.evil.clean", cmd)
	dirty(t, dir)
	g := newRecordingGH(t, dir, "")
	r := openGH(t, dir, g)

	if _, err := PullMerge(ctx, r, desktop, 3, PullMergeOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the attack does not work for the desktop, so this test proves nothing")
	}
	os.Remove(marker)
	before := len(g.calls(t))

	_, err := PullMerge(ctx, r, closed, 3, PullMergeOptions{})
	wantRefusal(t, err, gate.ErrRefused)
	if len(g.calls(t)) != before {
		t.Fatal("gh ran for a refused merge")
	}
	if _, err := ListOf(ctx, r, closed, "issues", "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("gh's git ran the checkout's program for a phone")
	}
}

// gh's usual failures read as fixed sentences; anything else carries gh's
// first line with no local folder in it, at most 300 bytes of it.
func TestGHFailures(t *testing.T) {
	home := gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	for _, c := range []struct {
		stderr string
		want   error
	}{
		{"HTTP 401: Bad credentials (https://api.github.com/graphql)", gate.ErrGHSignedOut},
		{"To get started with GitHub CLI, please run:  gh auth login", gate.ErrGHSignedOut},
		{"GraphQL: API rate limit exceeded for user ID 1.", gate.ErrGHRateLimited},
		{"GraphQL: Could not resolve to a PullRequest with the number of 99. (repository.pullRequest)", gate.ErrGHNotFound},
	} {
		_, err := Item(ctx, openGH(t, dir, newRecordingGH(t, dir, c.stderr)), closed, "pull", 99)
		wantRefusal(t, err, c.want)
	}
	long := "failed to run git: " + home + "/secret/place and " + dir + " (/root/.config/gh/hosts.yml) " + strings.Repeat("x", 400)
	_, err := Item(ctx, openGH(t, dir, newRecordingGH(t, dir, long)), closed, "issue", 1)
	s := refusal.Sentence(err)
	if !errors.Is(err, gate.ErrGHFailed) || strings.Contains(s, home) || strings.Contains(s, dir) || strings.Contains(s, "/root") || !strings.Contains(s, "~/secret/place") || len(s) > 300+len("GitHub refused this: ") {
		t.Fatalf("sentence %q", s)
	}
	_, err = Item(ctx, openGH(t, dir, &recordingGH{path: filepath.Join(t.TempDir(), "no-gh")}), closed, "issue", 1)
	wantRefusal(t, err, gate.ErrGHMissing)
}

// A device's text never becomes an option: a search query goes after
// "--", a title in --title=, bodies on stdin; numbers and states are
// checked; a pull request's diff drops the secret file's section below
// full, as git.diff does.
func TestGHArgumentsAndSecrets(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	g := newRecordingGH(t, dir, "")
	r := openGH(t, dir, g)
	found, err := Search(ctx, r, closed, "--repo=evil/other crash", 0)
	if err != nil {
		t.Fatal(err)
	}
	args := g.calls(t)[0].args
	if args[len(args)-2] != "--" || args[len(args)-1] != "--repo=evil/other crash" || !slices.Contains(args, "octo/hello") {
		t.Fatalf("search args %q", args)
	}
	if len(found.Items) != 1 || !strings.Contains(string(found.Items[0]), "octo/hello/issues/1") {
		t.Fatalf("search kept another repository's items: %s", found.Items)
	}
	if _, err := Comment(ctx, r, closed, 5, "--body hello\n"); err != nil {
		t.Fatal(err)
	}
	if c := g.calls(t)[1]; c.stdin != "--body hello\n" || slices.Contains(c.args, "--body hello\n") {
		t.Fatalf("comment %q stdin %q", c.args, c.stdin)
	}
	for _, bad := range []func() error{
		func() error { _, err := ListOf(ctx, r, closed, "issues", "merged", 0); return err },
		func() error { _, err := ListOf(ctx, r, closed, "issues", "--web", 0); return err },
		func() error { _, err := Item(ctx, r, closed, "pull", -1); return err },
		func() error { _, err := ListOf(ctx, r, closed, "issues", "", 5000); return err },
		func() error { _, err := PullReview(ctx, r, closed, 1, "dismiss", ""); return err },
		func() error { _, err := PullReview(ctx, r, closed, 1, "comment", ""); return err },
		func() error { _, err := Comment(ctx, r, closed, 1, strings.Repeat("x", MaxBody+1)); return err },
	} {
		if err := bad(); refusal.KindOf(err) != refusal.BadParams {
			t.Errorf("refused as %v: %v", refusal.KindOf(err), err)
		}
	}
	df, err := PullDiff(ctx, r, closed, trust.View, 3)
	if err != nil || strings.Contains(df.Diff, "secret-marker") || !strings.Contains(df.Diff, "+b") || df.HiddenSecrets != 1 {
		t.Fatalf("view diff %+v %v", df, err)
	}
	if df, _ := PullDiff(ctx, r, closed, trust.Full, 3); !strings.Contains(df.Diff, "secret-marker") {
		t.Fatal("full does not see the secret section")
	}
	done, err := PullMerge(ctx, r, closed, 3, PullMergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	calls := g.calls(t)
	if last := calls[len(calls)-1].args; !slices.Contains(last, "--squash") || done.URL == "" {
		t.Fatalf("merge used %q (the repository allows squash and rebase, not merge commits)", last)
	}
}

// A pull request from a fork: the branch is pushed (through the gate, to
// where git push goes), the head is named owner:branch and the base is the
// base repository's default branch. (The desktop's trust: the test's
// push goes to a local folder through url.pushInsteadOf, which the closed
// gate refuses.)
func TestPullCreateFromAFork(t *testing.T) {
	gittest.Home(t, "")
	remote := t.TempDir()
	git(t, remote, "init", "-q", "--bare")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"},
		"remote.origin.url", "https://github.com/me/hello.git", "remote.upstream.url", "https://github.com/octo/hello.git",
		"url."+remote+".pushInsteadOf", "https://github.com/me/hello.git")
	git(t, dir, "switch", "-q", "-c", "feature")
	write(t, dir, map[string]string{"f.txt": "f\n"})
	git(t, dir, "add", "f.txt")
	git(t, dir, "commit", "-qm", "feature")
	g := newRecordingGH(t, dir, "")
	done, err := PullCreate(ctx, openGH(t, dir, g), desktop, PullCreateOptions{Title: "-t Add f", Body: "why\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(git(t, remote, "branch"), "feature") {
		t.Fatal("the branch was not pushed")
	}
	calls := g.calls(t)
	last := calls[len(calls)-1]
	want := []string{"pr", "create", "--repo", "github.com/octo/hello", "--head", "me:feature", "--base", "trunk", "--title=-t Add f", "--body-file", "-"}
	if !slices.Equal(last.args, want) || last.stdin != "why\n" || done.URL != "https://github.com/octo/hello/pull/9" {
		t.Fatalf("pr create %q stdin %q done %+v", last.args, last.stdin, done)
	}
}

// A clone's folder is claimed by making it: a taken name (whoever took it)
// gets -2, -3 …, and what was there is never touched.
func TestClaimCloneFolder(t *testing.T) {
	clones := t.TempDir()
	write(t, clones, map[string]string{"hello/mine.txt": "mine\n"})
	repo := Repo{Host: "github.com", Owner: "octo", Name: "hello"}
	for _, want := range []string{"hello-2", "hello-3"} {
		f, err := ClaimCloneFolder(clones, repo)
		if err != nil || filepath.Base(f.Path) != want {
			t.Fatalf("claimed %+v %v, want %s", f, err, want)
		}
		f.Close()
	}
	if read(t, filepath.Join(clones, "hello", "mine.txt")) != "mine\n" {
		t.Fatal("a taken folder was touched")
	}
	for _, c := range []struct {
		in   string
		want string
	}{
		{"octo/hello", "github.com/octo/hello"}, {"github.com/octo/hello", "github.com/octo/hello"},
		{"evil.example/octo/hello", ""}, {"octo/-x", ""}, {"octo/../x", ""}, {"octo", ""}, {"a/b/c/d", ""}, {"octo/he llo", ""},
		{"octo/.git", ""}, {"octo/.GIT", ""}, {"octo/.git.", ""}, {"octo/git~1", ""}, {".git/x", ""},
	} {
		g, err := ParseRepoName(c.in)
		if got := g.String(); c.want != "" && (err != nil || got != c.want) || c.want == "" && err == nil {
			t.Errorf("ParseRepoName(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// gh clones (its git with the closed gate's options for a closed caller,
// no submodules); when it fails, the folder made for it is removed with
// what it wrote, and nothing beside it.
func TestCloneThroughGH(t *testing.T) {
	gittest.Home(t, "")
	src := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	clones := t.TempDir()
	write(t, clones, map[string]string{"keep/k.txt": "k\n"})
	bin := t.TempDir()
	envLog := filepath.Join(bin, "env")
	script := func(fail bool) string {
		s := "#!/bin/sh\nenv > '" + envLog + "'\n" +
			"[ \"$1 $2\" = 'repo clone' ] || exit 2\n" +
			// gh would clone over https; the test's source is a local folder,
			// which the closed gate's GIT_ALLOW_PROTOCOL rightly refuses, so
			// the stand-in lifts that for its own clone only.
			"env -u GIT_ALLOW_PROTOCOL git -c protocol.file.allow=always clone -q '" + src + "' \"$4\" || exit 1\n"
		if fail {
			s += "echo 'failed to clone: network is down' >&2; exit 1\n"
		}
		return s
	}
	repo := Repo{Host: "github.com", Owner: "octo", Name: "hello"}
	for _, fail := range []bool{false, true} {
		gh := filepath.Join(bin, fmt.Sprintf("gh-%v", fail))
		if err := os.WriteFile(gh, []byte(script(fail)), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := ClaimCloneFolder(clones, repo)
		if err != nil {
			t.Fatal(err)
		}
		f.toolWritableForTest = []string{bin, src} // the stand-in's record and its local source, inside the kernel wall
		dir := f.Path
		err = Clone(ctx, gh, closed, repo, f)
		env, _ := os.ReadFile(envLog)
		if !strings.Contains(string(env), "=core.hooksPath") || !strings.Contains(string(env), "GIT_ALLOW_PROTOCOL=") {
			t.Fatalf("gh's git lacks the closed gate's options:\n%s", env)
		}
		if fail {
			wantRefusal(t, err, gate.ErrGHFailed)
			if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
				t.Fatal("a failed clone's folder stayed")
			}
		} else if err != nil || read(t, filepath.Join(dir, "a.txt")) != "a\n" {
			t.Fatalf("clone: %v", err)
		}
	}
	if read(t, filepath.Join(clones, "keep", "k.txt")) != "k\n" {
		t.Fatal("a failed clone touched another folder")
	}
}

// The repository is the one git's own view of the remotes gives, as gh
// reads it (git remote -v): the first url of a remote, sections repeated,
// insteadOf applied, config.worktree included. Each row is what the real
// gh 2.23 resolved for that config (checked with GH_DEBUG=api by the red
// team; the config file read on its own gave the second column before).
func TestGHResolvesAsGitSees(t *testing.T) {
	gittest.Home(t, "")
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"two url lines: the first", func(t *testing.T, dir string) {
			git(t, dir, "config", "--add", "remote.origin.url", "https://github.com/owner/repo")
			git(t, dir, "config", "--add", "remote.origin.url", "https://github.com/evil/second")
		}, "github.com/owner/repo"},
		{"a repeated section: the first url", func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			fmt.Fprint(f, "[remote \"origin\"]\n\turl = https://github.com/owner/repo\n[remote \"origin\"]\n\turl = https://github.com/evil/dup\n")
			f.Close()
		}, "github.com/owner/repo"},
		{"insteadOf applied", func(t *testing.T, dir string) {
			git(t, dir, "config", "remote.origin.url", "https://github.com/owner/repo")
			git(t, dir, "config", "url.https://github.com/evil/.insteadOf", "https://github.com/owner/")
		}, "github.com/evil/repo"},
		{"upstream in config.worktree", func(t *testing.T, dir string) {
			git(t, dir, "config", "remote.origin.url", "https://github.com/owner/repo")
			git(t, dir, "config", "extensions.worktreeConfig", "true")
			git(t, dir, "config", "--worktree", "remote.upstream.url", "https://github.com/evil/wt")
		}, "github.com/evil/wt"},
		{"github before origin, gh-resolved over both", func(t *testing.T, dir string) {
			git(t, dir, "config", "remote.origin.url", "https://github.com/owner/repo")
			git(t, dir, "config", "remote.github.url", "https://github.com/gh/first")
			git(t, dir, "config", "remote.zz.url", "https://github.com/marked/one")
			git(t, dir, "config", "remote.zz.gh-resolved", "base")
		}, "github.com/marked/one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
			c.setup(t, dir)
			g := newRecordingGH(t, dir, "")
			l, err := ListOf(ctx, openGH(t, dir, g), desktop, "issues", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			args := g.calls(t)[0].args
			if i := slices.Index(args, "--repo"); i < 0 || args[i+1] != c.want || "github.com/"+l.Repo != c.want {
				t.Fatalf("gh %q (repo %s), want --repo %s", args, l.Repo, c.want)
			}
		})
	}
}

// A failed clone's cleanup removes the folder it claimed, found by the
// descriptor held since the claim: the clones folder renamed and a symlink
// to another folder put in its place while gh ran (the red team's attack,
// which removed the other folder's twin while cleanup went by path) leaves
// the other folder whole.
func TestFailedCloneCleanupFollowsNoSwap(t *testing.T) {
	gittest.Home(t, "")
	base := t.TempDir()
	clones, victim := filepath.Join(base, "clones"), filepath.Join(base, "victim")
	write(t, victim, map[string]string{"hello/precious": "keep\n"})
	gh := filepath.Join(t.TempDir(), "gh")
	script := "#!/bin/sh\necho partial > \"$4/written\"\nmv '" + clones + "' '" + clones + ".moved'\nln -s '" + victim + "' '" + clones + "'\necho 'failed' >&2\nexit 1\n"
	if err := os.WriteFile(gh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := ClaimCloneFolder(clones, Repo{Host: "github.com", Owner: "octo", Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Clone(ctx, gh, closed, Repo{Host: "github.com", Owner: "octo", Name: "hello"}, f); err == nil {
		t.Fatal("the clone did not fail")
	}
	if read(t, filepath.Join(victim, "hello", "precious")) != "keep\n" {
		t.Fatal("cleanup removed another folder")
	}
	if _, err := os.Stat(filepath.Join(clones+".moved", "hello")); !os.IsNotExist(err) {
		t.Fatal("the claimed folder stayed")
	}
}

// RepoName reads a remote URL as gh does and names it owner/name only on a
// GitHub host; Origin is that of the checkout's origin, from its config.
func TestRepoNameAndOrigin(t *testing.T) {
	for u, want := range map[string]string{
		"https://github.com/a/b.git": "a/b", "ssh://git@github.com/a/b": "a/b", "git@github.com:a/b": "a/b",
		"https://github.com/a": "", "https://evil.com/github.com/a/b": "", "git@github.com:a/b/c": "", "https://github.com/-a/b": "",
		"https://gitlab.com/x/a": "",
	} {
		if got := RepoName(u); got != want {
			t.Errorf("RepoName(%q) = %q, want %q", u, got, want)
		}
	}
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	gittest.Git(t, dir, "remote", "add", "origin", "git@github.com:me/app.git")
	r := openGH(t, dir, &recordingGH{})
	if got := Origin(r); got != "me/app" {
		t.Fatalf("Origin of a checkout whose origin is git@github.com:me/app.git: %q", got)
	}
}
