// Package gittest builds fixture repositories with the real git binary, for
// tests. It is the one place outside gate that starts git, and only tests
// import it (an invariant test names it as an exception).
//
// Every call runs with a test-owned HOME whose .gitconfig sets an identity
// and the default branch, no system config, and nothing inherited from the
// developer's own git setup.
package gittest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/procgroup"
)

// Home makes a fresh HOME for the test process (t.Setenv), with a global
// .gitconfig, and returns it. gate passes HOME to git, so the global config
// gatehouse's own git calls see is this one too.
func Home(t testing.TB, extraConfig string) string {
	t.Helper()
	home := t.TempDir()
	cfg := "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n" + extraConfig
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	return home
}

// Git runs plain git in dir (no gatehouse in between) and returns its
// output. It fails the test on an error unless the args start with "!".
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	mayFail := len(args) > 0 && args[0] == "!"
	if mayFail {
		args = args[1:]
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil && !mayFail {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Init makes a repository in a new folder with one commit of the given
// files (name → content) and returns the folder.
func Init(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	Git(t, "", "init", "-q", dir)
	if len(files) == 0 {
		files = map[string]string{"README.md": "hello\n"}
	}
	Write(t, dir, files)
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// InitConfig is Init, then local config set from key value pairs.
func InitConfig(t testing.TB, files map[string]string, config ...string) string {
	t.Helper()
	dir := Init(t, files)
	for i := 0; i+1 < len(config); i += 2 {
		Git(t, dir, "config", "--local", config[i], config[i+1])
	}
	return dir
}

// Read returns a file's content, failing t when it cannot be read.
func Read(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Write writes files (name → content) under dir, making folders.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Payload returns a shell script that creates marker, and the marker's path
// (in the test's own temporary folder). Nothing else runs.
func Payload(t testing.TB) (script, marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "marker")
	return "#!/bin/sh\ntouch '" + marker + "'\nexit 0\n", marker
}

// PayloadFile writes the payload as an executable file and returns its path
// and the marker.
func PayloadFile(t testing.TB) (program, marker string) {
	t.Helper()
	script, marker := Payload(t)
	program = filepath.Join(t.TempDir(), "payload.sh")
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, marker
}

// Fired reports whether the payload ran.
func Fired(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

// Hook installs the payload as the named hook in repo's .git/hooks.
func Hook(t testing.TB, repo, name string) (marker string) {
	t.Helper()
	script, marker := Payload(t)
	p := filepath.Join(repo, ".git", "hooks", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return marker
}

// Daemon serves the bare repositories under base over git:// on loopback,
// pushes allowed, until the test ends, and returns the base URL
// ("git://127.0.0.1:PORT/").
func Daemon(t testing.TB, base string) string {
	t.Helper()
	for attempt := 0; attempt < 5; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command("git", "daemon", "--reuseaddr", "--listen=127.0.0.1", "--port="+strconv.Itoa(port),
			"--export-all", "--enable=receive-pack", "--base-path="+base, base)
		cmd.Env = os.Environ()
		// In a group of its own: `git daemon` is the git wrapper over the
		// git-daemon program, and killing the wrapper alone left git-daemon
		// listening, pushes enabled, after the test
		// (TestKillingTheWrapperLeavesGitDaemon in internal/procgroup).
		g, err := procgroup.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Stop() })
		for range 100 {
			if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				c.Close()
				return "git://127.0.0.1:" + strconv.Itoa(port) + "/"
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = g.Stop()
	}
	t.Fatal("git daemon did not start")
	return ""
}
