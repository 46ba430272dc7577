package gate

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// attack is a repository that makes git run a program (the payload creates
// a marker file in the test's own folder) through one gatehouse operation.
type attack struct {
	name string
	// build makes the hostile checkout with plain git and returns it; cmd is
	// the payload command line (a shell script creating marker).
	build func(t *testing.T, cmd string) string
	// op is the victim operation.
	op func(r *Repo, tr trust.Trust) error
	// plain, when set, proves the exploit with plain git instead of the
	// desktop trust (for operations that never run the program, even for
	// the desktop).
	plain func(t *testing.T, dir string)
	// want is the closed gate's answer: nil for a safe success.
	want error
	// served lists other checkouts to serve (a worktree's main one).
	served func(dir string) []string
}

func runAttacks(t *testing.T, attacks []attack) {
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			gittest.Home(t, "")
			// 1. The exploit fires without the gate.
			prog, marker := gittest.PayloadFile(t)
			dir := a.build(t, prog)
			if a.plain != nil {
				a.plain(t, dir)
			} else {
				_ = a.op(open(t, dir, servedOf(a, dir)...), desktop)
			}
			if !gittest.Fired(marker) {
				t.Fatal("not reproduced: the payload did not run without the gate")
			}
			// 2. The closed gate stops it.
			prog, marker = gittest.PayloadFile(t)
			dir = a.build(t, prog)
			err := a.op(open(t, dir, servedOf(a, dir)...), closed)
			if gittest.Fired(marker) {
				t.Fatalf("the payload ran through the closed gate (err %v)", err)
			}
			if a.want == nil && err != nil {
				t.Fatalf("want a safe success, got %v", err)
			}
			if a.want != nil {
				wantRefusal(t, err, a.want)
			}
		})
	}
}

func servedOf(a attack, dir string) []string {
	if a.served == nil {
		return nil
	}
	return a.served(dir)
}

// repoWith builds a checkout with one commit, then applies local config
// (key value pairs).
func repoWith(t *testing.T, files map[string]string, config ...string) string {
	t.Helper()
	return gittest.InitConfig(t, files, config...)
}

// dirty changes a tracked file so status and add must read it: the same
// size with other content, so git cannot tell from the size alone and runs
// the file through its clean filter to compare.
func dirty(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, map[string]string{"a.txt": "b\n"})
}

var (
	opStatus = func(r *Repo, tr trust.Trust) error { _, err := r.Status(ctx, tr); return err }
	opDiff   = func(r *Repo, tr trust.Trust) error { _, err := r.Diff(ctx, tr, trust.Full, DiffOptions{}); return err }
	opStage  = func(r *Repo, tr trust.Trust) error {
		_, err := r.Stage(ctx, tr, trust.Full, StageOptions{All: true})
		return err
	}
	opCommit = func(r *Repo, tr trust.Trust) error { _, err := r.Commit(ctx, tr, "msg", false); return err }
	opFetch  = func(r *Repo, tr trust.Trust) error { _, err := r.Fetch(ctx, tr); return err }
	opPush   = func(r *Repo, tr trust.Trust) error { return r.Push(ctx, tr) }
)

// withStaged builds a checkout with a change staged, ready to commit.
func withStaged(t *testing.T, config ...string) string {
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, config...)
	write(t, dir, map[string]string{"a.txt": "staged\n"})
	git(t, dir, "add", "a.txt")
	return dir
}

func TestHooksOnEveryOperation(t *testing.T) {
	hook := func(name string, setup func(t *testing.T) string) func(t *testing.T, cmd string) string {
		return func(t *testing.T, cmd string) string {
			dir := setup(t)
			p := filepath.Join(dir, ".git", "hooks", name)
			if err := os.WriteFile(p, []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	staged := func(t *testing.T) string { return withStaged(t) }
	var attacks []attack
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"} {
		attacks = append(attacks, attack{name: "commit runs " + h, build: hook(h, staged), op: opCommit})
	}
	attacks = append(attacks,
		attack{name: "push runs pre-push", build: hook("pre-push", func(t *testing.T) string { return withDaemonRemote(t, true) }), op: opPush},
		attack{name: "fetch runs reference-transaction", build: hook("reference-transaction", func(t *testing.T) string { return withDaemonRemote(t, false) }), op: opFetch},
		attack{name: "pull runs post-merge", build: hook("post-merge", func(t *testing.T) string { return withDaemonRemote(t, false) }),
			op: func(r *Repo, tr trust.Trust) error { _, err := r.Pull(ctx, tr); return err }},
		attack{name: "switch runs post-checkout (never, for anyone)",
			build: hook("post-checkout", func(t *testing.T) string { d := gittest.Init(t, nil); git(t, d, "branch", "b"); return d }),
			op:    func(r *Repo, tr trust.Trust) error { return r.Switch(ctx, tr, "b") },
			plain: func(t *testing.T, dir string) { git(t, dir, "switch", "-q", "b") }},
		attack{name: "worktree add runs post-checkout (never, for anyone)",
			build: hook("post-checkout", func(t *testing.T) string { return gittest.Init(t, nil) }),
			op:    func(r *Repo, tr trust.Trust) error { _, err := r.CreateWorktree(ctx, tr, "wt"); return err },
			plain: func(t *testing.T, dir string) { git(t, dir, "worktree", "add", "-q", filepath.Join(t.TempDir(), "w")) }},
		attack{name: "core.hooksPath into a tracked folder",
			build: func(t *testing.T, cmd string) string {
				dir := repoWith(t, map[string]string{"a.txt": "a\n", ".githooks/pre-commit": "#!/bin/sh\nexec '" + cmd + "'\n"}, "core.hooksPath", ".githooks")
				if err := os.Chmod(filepath.Join(dir, ".githooks/pre-commit"), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, dir, map[string]string{"a.txt": "staged\n"})
				git(t, dir, "add", "a.txt")
				return dir
			}, op: opCommit},
	)
	changed := func(t *testing.T) string {
		d := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		dirty(t, d)
		return d
	}
	attacks = append(attacks,
		attack{name: "stage runs post-index-change", build: hook("post-index-change", changed), op: opStage},
		attack{name: "unstage runs post-index-change", build: hook("post-index-change", staged),
			op: func(r *Repo, tr trust.Trust) error {
				_, err := r.Stage(ctx, tr, trust.Full, StageOptions{All: true, Unstage: true})
				return err
			}},
		attack{name: "discard runs post-index-change", build: hook("post-index-change", staged),
			op: func(r *Repo, tr trust.Trust) error {
				_, err := r.Discard(ctx, tr, DiscardOptions{Paths: []string{"a.txt"}})
				return err
			}},
	)
	attacks = append(attacks, mergeHookAttacks()...)
	runAttacks(t, attacks)
}

// withDaemonRemote makes a checkout whose origin is a bare repository served
// over git:// on loopback (a transport the closed gate allows), with its
// upstream set and, when ahead is false, one commit to fetch or pull.
func withDaemonRemote(t *testing.T, ahead bool) string {
	base := t.TempDir()
	url := gittest.Daemon(t, base)
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	git(t, "", "clone", "-q", "--bare", dir, filepath.Join(base, "remote.git"))
	git(t, dir, "remote", "add", "origin", url+"remote.git")
	git(t, dir, "fetch", "-q", "origin")
	git(t, dir, "branch", "-q", "--set-upstream-to=origin/main")
	if ahead {
		write(t, dir, map[string]string{"a.txt": "ahead\n"})
		git(t, dir, "commit", "-qam", "ahead")
		return dir
	}
	other := filepath.Join(t.TempDir(), "other")
	git(t, "", "clone", "-q", url+"remote.git", other)
	write(t, other, map[string]string{"b.txt": "b\n"})
	git(t, other, "add", "b.txt")
	git(t, other, "commit", "-qm", "upstream change")
	git(t, other, "push", "-q", "origin", "HEAD:main")
	return dir
}

// mergeHookAttacks: merging a worktree runs pre-merge-commit and post-merge
// in the main checkout.
func mergeHookAttacks() []attack {
	var out []attack
	for _, h := range []string{"pre-merge-commit", "post-merge", "commit-msg"} {
		wtPath := map[string]string{}
		out = append(out, attack{
			name: "worktree merge runs " + h,
			build: func(t *testing.T, cmd string) string {
				main := gittest.Init(t, map[string]string{"a.txt": "a\n"})
				wt := filepath.Join(t.TempDir(), "wt")
				git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
				write(t, wt, map[string]string{"w.txt": "w\n"})
				git(t, wt, "add", "w.txt")
				git(t, wt, "commit", "-qm", "w")
				write(t, main, map[string]string{"m.txt": "m\n"})
				git(t, main, "add", "m.txt")
				git(t, main, "commit", "-qm", "m")
				if err := os.WriteFile(filepath.Join(main, ".git", "hooks", h), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				wtPath[wt] = main
				return wt
			},
			served: func(wt string) []string { return []string{wtPath[wt]} },
			op: func(r *Repo, tr trust.Trust) error {
				main, err := tryOpenFor(r.MainPath())
				if err != nil {
					return err
				}
				return r.MergeWorktree(ctx, tr, main)
			},
		})
	}
	return out
}

// tryOpenFor opens a main checkout without a test handle (merge attacks).
func tryOpenFor(dir string) (*Repo, error) {
	t := &testing.T{}
	return tryOpen(t, dir)
}

func TestFiltersDriversAndFsmonitor(t *testing.T) {
	attr := func(kind string) map[string]string {
		return map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt " + kind + "=evil\n"}
	}
	filterRepo := func(key string) func(t *testing.T, cmd string) string {
		return func(t *testing.T, cmd string) string {
			dir := repoWith(t, attr("filter"))
			git(t, dir, "config", "--local", "filter.evil."+key, cmd)
			dirty(t, dir)
			return dir
		}
	}
	smudgeRepo := func(t *testing.T, cmd string) string {
		dir := repoWith(t, attr("filter"))
		git(t, dir, "switch", "-q", "-c", "other")
		write(t, dir, map[string]string{"a.txt": "other side\n"})
		git(t, dir, "commit", "-qam", "other")
		git(t, dir, "switch", "-q", "main")
		git(t, dir, "config", "--local", "filter.evil.smudge", cmd)
		return dir
	}
	runAttacks(t, []attack{
		{name: "clean filter on status is switched off", build: filterRepo("clean"), op: opStatus},
		{name: "clean filter on diff is switched off", build: filterRepo("clean"), op: opDiff},
		{name: "process filter on status is switched off", build: filterRepo("process"), op: opStatus},
		{name: "clean filter on stage is refused", build: filterRepo("clean"), op: opStage, want: ErrRefused},
		{name: "smudge filter on switch is refused", build: smudgeRepo, want: ErrRefused,
			op: func(r *Repo, tr trust.Trust) error { return r.Switch(ctx, tr, "other") }},
		{name: "smudge filter on discard is refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string { d := smudgeRepo(t, cmd); dirty(t, d); return d },
			op: func(r *Repo, tr trust.Trust) error {
				_, err := r.Discard(ctx, tr, DiscardOptions{Paths: []string{"a.txt"}})
				return err
			}},
		{name: "smudge filter on worktree add is refused", build: smudgeRepo, want: ErrRefused,
			op: func(r *Repo, tr trust.Trust) error { _, err := r.CreateWorktree(ctx, tr, "w"); return err }},
		{name: "textconv on diff is switched off",
			build: func(t *testing.T, cmd string) string {
				d := repoWith(t, attr("diff"), "diff.evil.textconv", cmd)
				dirty(t, d)
				return d
			}, op: opDiff},
		{name: "textconv on show is switched off",
			build: func(t *testing.T, cmd string) string {
				d := repoWith(t, attr("diff"), "diff.evil.textconv", cmd)
				dirty(t, d)
				git(t, d, "commit", "-qam", "two")
				return d
			},
			op: func(r *Repo, tr trust.Trust) error { _, err := r.Show(ctx, tr, trust.Full, headOf(r), ""); return err }},
		{name: "external diff driver never runs",
			build: func(t *testing.T, cmd string) string {
				d := repoWith(t, attr("diff"), "diff.evil.command", cmd)
				dirty(t, d)
				return d
			}, op: opDiff, plain: func(t *testing.T, dir string) { git(t, dir, "!", "diff") }},
		{name: "diff.external never runs",
			build: func(t *testing.T, cmd string) string {
				d := repoWith(t, map[string]string{"a.txt": "a\n"}, "diff.external", cmd)
				dirty(t, d)
				return d
			}, op: opDiff, plain: func(t *testing.T, dir string) { git(t, dir, "!", "diff") }},
		{name: "fsmonitor in local config is forced off",
			build: func(t *testing.T, cmd string) string { d := repoWith(t, nil, "core.fsmonitor", cmd); return d },
			op:    opStatus},
		{name: "fsmonitor in config.worktree is forced off",
			build: func(t *testing.T, cmd string) string {
				d := repoWith(t, nil, "extensions.worktreeConfig", "true")
				git(t, d, "config", "--worktree", "core.fsmonitor", cmd)
				return d
			}, op: opStatus},
		{name: "merge driver on worktree merge is refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				main := repoWith(t, attr("merge"), "merge.evil.driver", cmd)
				wt := filepath.Join(t.TempDir(), "wt")
				git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
				write(t, wt, map[string]string{"a.txt": "worktree\n"})
				git(t, wt, "commit", "-qam", "w")
				write(t, main, map[string]string{"a.txt": "main\n"})
				git(t, main, "commit", "-qam", "m")
				return wt
			},
			served: func(wt string) []string { return []string{mainOf(wt)} },
			op: func(r *Repo, tr trust.Trust) error {
				main, err := tryOpenFor(r.MainPath())
				if err != nil {
					return err
				}
				return r.MergeWorktree(ctx, tr, main)
			}},
		{name: "include.path is refused before a status",
			build: func(t *testing.T, cmd string) string {
				inc := filepath.Join(t.TempDir(), "included.cfg")
				if err := os.WriteFile(inc, []byte("[core]\n\tfsmonitor = "+cmd+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return repoWith(t, nil, "include.path", inc)
			}, op: opStatus, want: ErrRefused},
		{name: "includeIf is refused before a diff",
			build: func(t *testing.T, cmd string) string {
				inc := filepath.Join(t.TempDir(), "included.cfg")
				if err := os.WriteFile(inc, []byte("[filter \"evil\"]\n\tclean = "+cmd+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				d := repoWith(t, attr("filter"))
				git(t, d, "config", "--local", "includeIf.gitdir:/.path", inc)
				dirty(t, d)
				return d
			}, op: opDiff, want: ErrRefused},
	})
}

func mainOf(wt string) string {
	data, _ := os.ReadFile(filepath.Join(wt, ".git"))
	gitdir := strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir: "))
	return filepath.Dir(filepath.Dir(filepath.Dir(gitdir)))
}

func headOf(r *Repo) string {
	st, err := r.Status(ctx, trust.Desktop())
	if err != nil {
		return "unknown"
	}
	return st.Head
}

func TestNetworkPrograms(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer server.Close()
	bare := func(t *testing.T) string {
		b := filepath.Join(t.TempDir(), "remote.git")
		git(t, "", "init", "-q", "--bare", b)
		return b
	}
	runAttacks(t, []attack{
		{name: "credential helper on fetch is refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return repoWith(t, nil, "remote.origin.url", server.URL+"/repo.git", "credential.helper", cmd)
			}, op: opFetch},
		{name: "askpass on fetch is refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return repoWith(t, nil, "remote.origin.url", server.URL+"/repo.git", "core.askPass", cmd)
			}, op: opFetch},
		{name: "insteadOf to ext:: is refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return repoWith(t, nil, "remote.origin.url", "https://example.invalid/x.git",
					"url.ext::"+cmd+" %S.insteadOf", "https://example.invalid/", "protocol.ext.allow", "always")
			}, op: opFetch},
		{name: "local-path remote runs its receive hooks: refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				b := bare(t)
				if err := os.WriteFile(filepath.Join(b, "hooks", "pre-receive"), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				d := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", b)
				return d
			}, op: opPush},
		{name: "file:// remote runs its receive hooks: refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				b := bare(t)
				if err := os.WriteFile(filepath.Join(b, "hooks", "pre-receive"), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				return repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "file://"+b)
			}, op: opPush},
		{name: "uploadpack names a program: refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return repoWith(t, nil, "remote.origin.url", bare(t), "remote.origin.uploadpack", cmd)
			}, op: opFetch},
		{name: "receivepack names a program: refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return repoWith(t, nil, "remote.origin.url", bare(t), "remote.origin.receivepack", cmd)
			}, op: opPush},
		{name: "gpg.program signs a commit: refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return withStaged(t, "commit.gpgSign", "true", "gpg.program", cmd)
			},
			op: opCommit},
		{name: "ssh signing program: refused", want: ErrRefused,
			build: func(t *testing.T, cmd string) string {
				return withStaged(t, "commit.gpgSign", "true", "gpg.format", "ssh", "gpg.ssh.program", cmd, "user.signingKey", "key")
			}, op: opCommit},
	})
}

// The user's own global signing program is theirs, but a checkout's
// commit.gpgSign=true (on the allowlist) must not make a phone's commit run
// it: signing is forced off.
func TestSigningIsForcedOff(t *testing.T) {
	prog, marker := gittest.PayloadFile(t)
	gittest.Home(t, "[gpg]\n\tprogram = "+prog+"\n")
	dir := withStaged(t, "commit.gpgSign", "true")
	_, _ = open(t, dir).Commit(ctx, desktop, "m", false)
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: the desktop commit did not sign")
	}
	prog, marker = gittest.PayloadFile(t)
	gittest.Home(t, "[gpg]\n\tprogram = "+prog+"\n")
	dir = withStaged(t, "commit.gpgSign", "true")
	if _, err := open(t, dir).Commit(ctx, closed, "m", false); err != nil {
		t.Fatal(err)
	}
	if gittest.Fired(marker) {
		t.Fatal("the closed commit ran the signing program")
	}
}

// A phone with the switch on is the desktop for git: its hooks run.
func TestFullAccessPhoneIsTheDesktop(t *testing.T) {
	gittest.Home(t, "")
	dir := withStaged(t)
	marker := gittest.Hook(t, dir, "pre-commit")
	if _, err := open(t, dir).Commit(ctx, phoneOn, "m", false); err != nil {
		t.Fatal(err)
	}
	if !gittest.Fired(marker) {
		t.Fatal("a full-access phone's commit skipped the user's hook")
	}
}

func TestClosedPushWorksOverAnAllowedTransport(t *testing.T) {
	gittest.Home(t, "")
	dir := withDaemonRemote(t, true)
	if err := open(t, dir).Push(ctx, closed); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "status", "-sb"); strings.Contains(out, "ahead") {
		t.Fatalf("not pushed: %s", out)
	}
}

// With pull.ff=only a pull that is not a fast-forward is refused; see
// pull_test.go for the merge and rebase it makes otherwise.
func TestPullIsFastForwardOnlyWithPullFFOnly(t *testing.T) {
	gittest.Home(t, "")
	dir := withDaemonRemote(t, false)
	r := open(t, dir)
	res, err := r.Pull(ctx, closed)
	if err != nil || !res.FastForward || read(t, filepath.Join(dir, "b.txt")) != "b\n" {
		t.Fatalf("pull: %+v %v", res, err)
	}
	// Both sides move: refused, and nothing changes.
	dir = withDaemonRemote(t, false)
	write(t, dir, map[string]string{"local.txt": "l\n"})
	git(t, dir, "add", "local.txt")
	git(t, dir, "commit", "-qm", "local")
	git(t, dir, "config", "pull.ff", "only")
	before := git(t, dir, "rev-parse", "HEAD")
	_, err = open(t, dir).Pull(ctx, closed)
	wantRefusal(t, err, ErrNotFastForward, "Pull on the computer")
	if git(t, dir, "rev-parse", "HEAD") != before {
		t.Fatal("a refused pull moved HEAD")
	}
}

// Each Read-gate refusal refuses a status and names its key; the desktop is
// not refused.
func TestEveryReadRefusal(t *testing.T) {
	gittest.Home(t, "")
	missing := filepath.Join(t.TempDir(), "missing") // a file the keys name, never made (not /tmp/x: anyone can make that)
	for _, c := range [][2]string{
		{"core.sshCommand", "ssh -i key"}, {"core.askPass", "/bin/askpass"}, {"credential.helper", "store"},
		{"credential.https://example.com.username", "me"}, {"extensions.partialClone", "origin"},
		{"remote.origin.promisor", "true"}, {"include.path", missing}, {"includeIf.gitdir:/x/.path", missing},
		{"core.worktree", "/tmp"}, {"core.excludesFile", missing}, {"core.attributesFile", missing},
		{"diff.orderFile", missing},
	} {
		dir := gittest.Init(t, nil)
		git(t, dir, "config", "--local", c[0], c[1])
		r := open(t, dir)
		_, err := r.Status(ctx, closed)
		wantRefusal(t, err, ErrRefused, strings.ToLower(c[0])[:strings.IndexByte(c[0], '.')], "see its status from the phone")
		if c[0] == "core.worktree" {
			continue // the desktop's status of a moved work tree is its own business
		}
		if _, err := r.Status(ctx, desktop); err != nil {
			t.Errorf("%s: the desktop was refused: %v", c[0], err)
		}
	}
	// A promisor set to false and an empty partialClone are not partial clones.
	dir := repoWith(t, nil, "remote.origin.promisor", "false", "remote.origin.url", "https://github.com/a/b")
	if _, err := open(t, dir).Status(ctx, closed); err != nil {
		t.Fatalf("promisor=false: %v", err)
	}
}

// Each allowlist family lets a change through with an inert value and
// refuses a value that could name a program, a path or another transport.
func TestAllowlistFamilies(t *testing.T) {
	gittest.Home(t, "")
	cases := []struct {
		key, good, bad string
	}{
		{"core.filemode", "false", "/bin/sh"},
		{"core.autocrlf", "input", ""},
		{"core.hooksPath", ".githooks", ""},
		{"core.fsmonitor", "false", "/tmp/payload"},
		{"remote.origin.url", "https://github.com/a/b.git", "/srv/local/repo.git"},
		{"remote.origin.url", "git@github.com:a/b.git", "file:///srv/repo.git"},
		{"remote.origin.url", "ssh://git@host/a/b", "ext::sh -c id"},
		{"remote.origin.url", "host.example:a/b", "C:repo"},
		{"remote.origin.url", "git+ssh://host/a", "-oProxyCommand=id:x"},
		{"remote.origin.pushurl", "https://github.com/a/b", "fd::17"},
		{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", ""},
		{"remote.origin.prune", "true", "sometimes"},
		{"branch.main.remote", "origin", "."},
		{"branch.main.remote", "upstream", "../elsewhere"},
		{"branch.main.pushRemote", "https://github.com/a/b", "/local/path"},
		{"branch.main.merge", "refs/heads/main", ""},
		{"submodule.active", "true", ""},
		{"user.name", "Ann", ""},
		{"pull.rebase", "true", ""},
		{"push.default", "simple", ""},
		{"init.defaultBranch", "main", ""},
		{"extensions.worktreeConfig", "true", "/bin/sh"},
		{"fetch.prune", "true", "yes please"},
		{"gc.auto", "0", ""},
		{"gc.refs/heads/*.reflogExpire", "30.days", ""},
		{"commit.gpgSign", "true", "/bin/gpg"},
		{"lfs.repositoryformatversion", "0", ""},
		{"lfs.https://github.com/a/b.git/info/lfs.access", "basic", ""},
		{"advice.detachedHead", "false", "/bin/sh"},
		{"rerere.enabled", "true", "maybe"},
	}
	for _, c := range cases {
		dir := gittest.Init(t, nil)
		git(t, dir, "config", "--local", c.key, c.good)
		if _, err := open(t, dir).decide(ctx, closed, changeGate, "commit"); err != nil {
			t.Errorf("%s=%q refused: %v", c.key, c.good, err)
		}
		if c.bad == "" {
			continue
		}
		dir = gittest.Init(t, nil)
		git(t, dir, "config", "--local", c.key, c.bad)
		_, err := open(t, dir).decide(ctx, closed, changeGate, "commit")
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s=%q: %v, want refused", c.key, c.bad, err)
		}
	}
	// Keys no rule knows refuse, including ones git may add later.
	for _, key := range []string{"gc.recentObjectsHook", "core.editor", "core.gitProxy", "http.proxy", "url.https://x/.insteadOf",
		"protocol.allow", "core.alternateRefsCommand", "remote.origin.vcs", "trailer.sign.command", "alias.st", "future.newKey"} {
		dir := gittest.Init(t, nil)
		git(t, dir, "config", "--local", key, "x")
		_, err := open(t, dir).decide(ctx, closed, changeGate, "stage files")
		wantRefusal(t, err, ErrRefused, shownKey(strings.ToLower(key)), "to stage files from the phone")
	}
}

func TestSubmodulesRefuseChanges(t *testing.T) {
	gittest.Home(t, "")
	sub := gittest.Init(t, nil)
	dir := gittest.Init(t, nil)
	git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	git(t, dir, "commit", "-qm", "sub")
	git(t, dir, "config", "submodule.sub.url", "https://github.com/a/sub.git") // an allowlisted URL: only the submodule refuses
	r := open(t, dir)
	_, err := r.Stage(ctx, closed, trust.Control, StageOptions{All: true})
	wantRefusal(t, err, ErrSubmodules, "to stage files from the phone")
	if _, err := r.Status(ctx, closed); err != nil {
		t.Fatalf("status with submodules (ignored): %v", err)
	}
	if _, err := r.Stage(ctx, desktop, trust.Full, StageOptions{All: true}); err != nil {
		t.Fatalf("desktop: %v", err)
	}
}

// A submodule carries its own config; a closed status never enters it.
func TestSubmoduleConfigIsNeverRead(t *testing.T) {
	runAttacks(t, []attack{{
		name: "fsmonitor in a submodule's own config",
		build: func(t *testing.T, cmd string) string {
			sub := gittest.Init(t, nil)
			dir := gittest.Init(t, nil)
			git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			git(t, dir, "commit", "-qm", "sub")
			git(t, filepath.Join(dir, "sub"), "config", "core.fsmonitor", cmd)
			return dir
		},
		op: opStatus,
	}})
}

func TestRepositoryLocation(t *testing.T) {
	gittest.Home(t, "")
	t.Run("symlinked .git", func(t *testing.T) {
		other := gittest.Init(t, map[string]string{"theirs.txt": "x"})
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(other, ".git"), filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		if out := git(t, dir, "ls-files"); !strings.Contains(out, "theirs.txt") {
			t.Fatalf("not reproduced: plain git did not follow the link: %s", out)
		}
		_, err := tryOpen(t, dir)
		wantRefusal(t, err, ErrRedirected)
	})
	t.Run("commondir planted in .git", func(t *testing.T) {
		other := gittest.Init(t, map[string]string{"theirs.txt": "x"})
		dir := gittest.Init(t, nil)
		write(t, dir, map[string]string{".git/commondir": filepath.Join(other, ".git")})
		if out := git(t, dir, "rev-parse", "--git-common-dir"); !strings.Contains(out, other) {
			t.Fatalf("not reproduced: %s", out)
		}
		_, err := tryOpen(t, dir)
		wantRefusal(t, err, ErrRedirected)
	})
	t.Run("alternates leading outside", func(t *testing.T) {
		other := gittest.Init(t, map[string]string{"theirs.txt": "secret object\n"})
		blob := strings.TrimSpace(git(t, other, "rev-parse", "HEAD:theirs.txt"))
		dir := gittest.Init(t, nil)
		write(t, dir, map[string]string{".git/objects/info/alternates": filepath.Join(other, ".git", "objects") + "\n"})
		if out := git(t, dir, "cat-file", "-p", blob); !strings.Contains(out, "secret object") {
			t.Fatalf("not reproduced: %s", out)
		}
		// The desktop may use a clone that borrows objects; the closed gate
		// refuses it before any git call.
		r := open(t, dir)
		if _, err := r.Status(ctx, desktop); err != nil {
			t.Fatalf("desktop: %v", err)
		}
		_, err := r.Status(ctx, closed)
		wantRefusal(t, err, ErrGitFolder, "borrows objects", ".git/objects/info/alternates")
		// Planted after a first call: the next decision sees it.
		dir = gittest.Init(t, nil)
		r = open(t, dir)
		if _, err := r.Status(ctx, closed); err != nil {
			t.Fatal(err)
		}
		write(t, dir, map[string]string{".git/objects/info/alternates": filepath.Join(other, ".git", "objects") + "\n"})
		_, err = r.Status(ctx, closed)
		wantRefusal(t, err, ErrGitFolder, "borrows objects")
	})
	t.Run("core.worktree outside", func(t *testing.T) {
		elsewhere := t.TempDir()
		write(t, elsewhere, map[string]string{"elsewhere.txt": "x"})
		dir := gittest.Init(t, nil)
		git(t, dir, "config", "core.worktree", elsewhere)
		if out := git(t, dir, "status", "--porcelain"); !strings.Contains(out, "elsewhere.txt") {
			t.Fatalf("not reproduced: %s", out)
		}
		_, err := open(t, dir).Status(ctx, closed)
		wantRefusal(t, err, ErrRefused, "core.worktree")
	})
}

func TestDiffPrefixesAndColourNeverHideASecret(t *testing.T) {
	for _, c := range [][]string{
		{"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"}, {"diff.srcPrefix", "x/"},
		{"diff.dstPrefix", ".env"}, {"color.ui", "always"}, {"color.diff", "always"},
	} {
		t.Run(c[0], func(t *testing.T) {
			gittest.Home(t, "")
			if strings.HasSuffix(c[0], "Prefix") && strings.Contains(c[0], "src") || strings.Contains(c[0], "dstPrefix") {
				requireGit(t, 2, 45, c[0])
			}
			dir := gittest.Init(t, map[string]string{".env": "A=1\n", "config/é.env": "B=1\n"})
			git(t, dir, "config", c[0], c[1])
			write(t, dir, map[string]string{".env": "A=secret-marker\n", "config/é.env": "B=secret-marker\n"})
			plain := git(t, dir, "diff")
			if !strings.Contains(plain, "secret-marker") {
				t.Fatal("fixture")
			}
			// Without the fixed prefixes a filter keyed on
			// "diff --git a/<name>" (as the first one was) does not see
			// the secret's name.
			if strings.HasPrefix(plain, "diff --git a/.env b/.env\n") {
				t.Fatalf("not reproduced: %s changed nothing:\n%s", c[0], plain)
			}
			for _, tr := range []trust.Trust{closed, phoneOn} {
				d, err := open(t, dir).Diff(ctx, tr, trust.View, DiffOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(d.Diff, "secret-marker") || strings.Contains(d.Diff, "\x1b[") || d.HiddenSecrets != 2 {
					t.Fatalf("%v: hidden %d\n%s", tr, d.HiddenSecrets, d.Diff)
				}
			}
		})
	}
}

func TestHardLinksNeverReachGitFromAPhone(t *testing.T) {
	gittest.Home(t, "")
	key := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := gittest.Init(t, nil)
	if err := os.Link(key, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	_, err := r.Stage(ctx, phoneOn, trust.Full, StageOptions{All: true})
	wantRefusal(t, err, ErrHardLinked, "notes.txt is hard-linked elsewhere, so gatehouse won't stage it from your phone.")
	_, err = r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"notes.txt"}})
	wantRefusal(t, err, ErrHardLinked)
	// The desktop staged it; a phone may not commit it.
	git(t, dir, "add", "notes.txt")
	_, err = r.Commit(ctx, phoneOn, "m", false)
	wantRefusal(t, err, ErrHardLinked, "won't commit it from your phone")
	d, err := r.Diff(ctx, closed, trust.Full, DiffOptions{Staged: true})
	if err != nil || strings.Contains(d.Diff, "PRIVATE KEY") || d.HiddenSecrets != 1 {
		t.Fatalf("staged diff: %v %d\n%s", err, d.HiddenSecrets, d.Diff)
	}
}

func TestPathspecMagicAndDashesAreLiteral(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", ":(glob)*.txt": "m\n", "--force": "f\n"})
	write(t, dir, map[string]string{"a.txt": "changed\n", ":(glob)*.txt": "changed\n", "--force": "changed\n"})
	r := open(t, dir)
	if _, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{":(glob)*.txt", "--force"}}); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "a.txt")) != "changed\n" {
		t.Fatal("pathspec magic in a name discarded another file")
	}
	if read(t, filepath.Join(dir, ":(glob)*.txt")) != "m\n" || read(t, filepath.Join(dir, "--force")) != "f\n" {
		t.Fatal("the named files were not restored")
	}
}

func TestFIFOsStopAtTheDeadline(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	if err := mkfifo(filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	root, err := tryOpen(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	root.maxTime = 2 * 1e9
	_, err = root.Status(ctx, closed)
	wantRefusal(t, err, ErrTimeout)
	d2 := gittest.Init(t, nil)
	if err := mkfifo(filepath.Join(d2, "main.go")); err != nil {
		t.Fatal(err)
	}
	diff, err := open(t, d2).Diff(ctx, closed, trust.Full, DiffOptions{})
	if err != nil || strings.Contains(diff.Diff, "main.go") {
		t.Fatalf("a FIFO named like source: %v\n%s", err, diff.Diff)
	}
}
