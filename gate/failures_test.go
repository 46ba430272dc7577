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
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// runGit runs one git call through the gate's runner with the closed gate's
// Change decision, and maps its failure as the operations do: for the
// messages the operations' own checks usually catch first (nothing staged,
// detached HEAD, no upstream), so git's wording is still proven.
func runGit(t *testing.T, dir string, c call) error {
	t.Helper()
	r := open(t, dir)
	d, err := r.decide(ctx, closed, changeGate, "test")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.run(ctx, closed, d, c)
	return gitFailure(res, err)
}

// conflicted leaves a merge conflict in a.txt, as a merge on the computer does.
func conflicted(t *testing.T) string {
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	git(t, dir, "switch", "-q", "-c", "side")
	write(t, dir, map[string]string{"a.txt": "side\n"})
	git(t, dir, "commit", "-qam", "side")
	git(t, dir, "switch", "-q", "main")
	write(t, dir, map[string]string{"a.txt": "main\n"})
	git(t, dir, "commit", "-qam", "main")
	git(t, dir, "!", "merge", "-q", "side")
	return dir
}

// noIdentity makes HOME's config name nobody (useConfigOnly: git may not
// guess one from the host name either).
func noIdentity(t *testing.T) {
	cfg := "[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n"
	if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), ".gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// authServer is an HTTP remote that refuses every request for want of
// credentials, as a hosting service does for a private repository.
func authServer(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestGitFailureSentences makes each of git's usual failures with real git
// through the closed gate and checks the device reads a sentence that says
// what to do, while git's own words stay in the chain for the host's log and
// out of the sentence.
func TestGitFailureSentences(t *testing.T) {
	for _, c := range []struct {
		name string
		want error
		// phrase the sentence holds; stderr, a part of git's own message
		// the chain holds ("" when the gate's own check answers first).
		phrase, stderr string
		run            func(t *testing.T) error
	}{
		{"no author identity", ErrNoIdentity, "git config --global user.name", "Please tell me who you are", func(t *testing.T) error {
			dir := withStaged(t)
			noIdentity(t)
			_, err := open(t, dir).Commit(ctx, closed, "m", false)
			return err
		}},
		{"nothing to commit (gate)", ErrNothingToCommit, "Stage the changes", "", func(t *testing.T) error {
			_, err := open(t, gittest.Init(t, nil)).Commit(ctx, closed, "m", false)
			return err
		}},
		{"nothing to commit (git)", ErrNothingToCommit, "Stage the changes", "", func(t *testing.T) error {
			return runGit(t, gittest.Init(t, nil), call{sub: subCommit, opts: []string{"-q", "-m", "m"}})
		}},
		{"push rejected, not a fast-forward", ErrPushRejected, "Pull, then push again", "Updates were rejected", func(t *testing.T) error {
			dir := withDaemonRemote(t, false)
			write(t, dir, map[string]string{"c.txt": "c\n"})
			git(t, dir, "add", "c.txt")
			git(t, dir, "commit", "-qm", "local")
			return open(t, dir).Push(ctx, closed)
		}},
		{"authentication failed", ErrAuthFailed, "Sign in to the remote on the computer", "Authentication failed for", func(t *testing.T) error {
			dir := gittest.Init(t, nil)
			u := strings.Replace(authServer(t), "http://", "http://user:wrong@", 1)
			git(t, dir, "remote", "add", "origin", u+"/r.git")
			return open(t, dir).Push(ctx, closed)
		}},
		{"no credentials to give", ErrAuthFailed, "Sign in to the remote on the computer", "could not read Username", func(t *testing.T) error {
			dir := gittest.Init(t, nil)
			git(t, dir, "remote", "add", "origin", authServer(t)+"/r.git")
			return open(t, dir).Push(ctx, closed)
		}},
		{"lock file left by another git", ErrLocked, ".git/index.lock", "index.lock': File exists", func(t *testing.T) error {
			dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
			write(t, dir, map[string]string{"a.txt": "changed\n", ".git/index.lock": ""})
			_, err := open(t, dir).Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"a.txt"}})
			return err
		}},
		{"detached HEAD (gate)", ErrDetached, "Switch to a branch", "", func(t *testing.T) error {
			dir := withDaemonRemote(t, true)
			git(t, dir, "checkout", "-q", "--detach")
			return open(t, dir).Push(ctx, closed)
		}},
		{"detached HEAD (git)", ErrDetached, "Switch to a branch", "You are not currently on a branch", func(t *testing.T) error {
			dir := withDaemonRemote(t, true)
			git(t, dir, "checkout", "-q", "--detach")
			return runGit(t, dir, call{sub: subPush, opts: []string{"--porcelain"}})
		}},
		{"conflict: commit", ErrUnmerged, "Open Conflicts", "unresolved conflict", func(t *testing.T) error {
			_, err := open(t, conflicted(t)).Commit(ctx, closed, "m", false)
			return err
		}},
		{"conflict: switch", ErrUnmerged, "Open Conflicts", "while merging", func(t *testing.T) error {
			return open(t, conflicted(t)).Switch(ctx, closed, "side")
		}},
		{"upstream branch gone", ErrNoUpstream, "--set-upstream-to", "not something we can merge", func(t *testing.T) error {
			dir := withDaemonRemote(t, false)
			git(t, dir, "config", "branch.main.merge", "refs/heads/gone")
			_, err := open(t, dir).Pull(ctx, closed)
			return err
		}},
		{"no upstream (git)", ErrNoUpstream, "--set-upstream-to", "no upstream configured", func(t *testing.T) error {
			return runGit(t, gittest.Init(t, nil), call{sub: subMerge, opts: []string{"--ff-only", "-q"}, args: []string{"@{upstream}"}})
		}},
		{"unrecognised: the default sentence", ErrGitFailed, "Check the checkout on the computer", "", func(t *testing.T) error {
			dir := gittest.Init(t, nil)
			git(t, dir, "remote", "add", "origin", gittest.Daemon(t, t.TempDir())+"missing.git")
			return open(t, dir).Push(ctx, closed)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gittest.Home(t, "")
			err := c.run(t)
			wantRefusal(t, err, c.want, c.phrase)
			s := refusal.Sentence(err)
			var ee *ExitError
			if c.stderr != "" {
				if !errors.As(err, &ee) || !strings.Contains(err.Error(), c.stderr) {
					t.Fatalf("the log's cause %q lacks git's %q", err, c.stderr)
				}
			}
			if errors.As(err, &ee) {
				for _, line := range strings.Split(strings.TrimSpace(ee.Stderr), "\n") {
					if len(line) > 12 && strings.Contains(s, strings.TrimSpace(line)) {
						t.Errorf("sentence %q carries git's %q", s, line)
					}
				}
			}
			if strings.Contains(s, os.Getenv("HOME")) || strings.Contains(s, "127.0.0.1") {
				t.Errorf("sentence %q names a place on this computer", s)
			}
		})
	}
}
