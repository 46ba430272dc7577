package gate

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// TestGHEnvIsAnAllowlist: a variable nobody listed never reaches gh, or
// the git gh starts, whatever its name. BASH_ENV names a file every
// non-interactive bash runs first (a gh alias or extension written for
// bash): a denylist of GIT_* and a few program names let it through. The
// variables gh itself reads for a program (GH_EDITOR, BROWSER, PAGER) are
// forced to harmless values rather than inherited.
func TestGHEnvIsAnAllowlist(t *testing.T) {
	prog, marker := gittest.PayloadFile(t)
	hostile := map[string]string{"BASH_ENV": prog, "GH_EDITOR": "evil", "BROWSER": "evil", "LD_PRELOAD": "/nonexistent.so",
		"GIT_SSH_COMMAND": "evil", "GIT_DIR": "/elsewhere", "PAGER": "evil", "GH_TOKEN": "tok", "LC_CTYPE": "C.UTF-8"}
	bash := func(env []string) {
		cmd := exec.Command("bash", "-c", "true")
		cmd.Env = env
		_ = cmd.Run()
	}
	var inherited []string
	for k, v := range hostile {
		t.Setenv(k, v)
		inherited = append(inherited, k+"="+v)
	}
	bash(append(os.Environ(), inherited...))
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: bash did not run BASH_ENV")
	}
	os.Remove(marker)
	for _, tr := range []trust.Trust{desktop, closed} {
		env := (*Repo)(nil).ghEnv(tr, nil)
		bash(env)
		if gittest.Fired(marker) {
			t.Fatalf("%v: gh's bash ran BASH_ENV", tr)
		}
		for _, kv := range env {
			name, value, _ := strings.Cut(kv, "=")
			if slices.Contains([]string{"BASH_ENV", "LD_PRELOAD", "GIT_SSH_COMMAND", "GIT_DIR"}, name) || value == "evil" {
				t.Errorf("%v: %s survived", tr, kv)
			}
		}
		for _, want := range []string{"PATH=", "GH_TOKEN=tok", "LC_CTYPE=C.UTF-8", "GH_EDITOR=:", "BROWSER=false", "PAGER=cat"} {
			if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, want) }) {
				t.Errorf("%v: no %s", tr, want)
			}
		}
		if closedGate := slices.Contains(env, "GIT_CONFIG_KEY_0="+everyone[0].Key); closedGate != tr.Closed() {
			t.Errorf("%v: closed gate in the environment: %v", tr, closedGate)
		}
	}
}

// The git gh runs gets the closed gate through the environment (gh runs
// git itself, out of gatehouse's reach, so the forced options travel as
// GIT_CONFIG_COUNT entries: docs/github.md, "gh's git is the closed
// gate's"): a hook the checkout sets up runs for the desktop's gh, not for
// a closed call's.
func TestGHEnvCarriesTheClosedGate(t *testing.T) {
	gittest.Home(t, "")
	build := func() (string, string) {
		dir := withStaged(t)
		return dir, gittest.Hook(t, dir, "pre-commit")
	}
	run := func(dir string, env []string) {
		cmd := exec.Command("git", "commit", "-q", "-m", "m")
		cmd.Dir, cmd.Env = dir, env
		_ = cmd.Run()
	}
	dir, marker := build()
	run(dir, (*Repo)(nil).ghEnv(desktop, nil))
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: the desktop's gh git did not run the hook")
	}
	dir, marker = build()
	t.Setenv("GIT_SSH_COMMAND", "evil")
	env := (*Repo)(nil).ghEnv(closed, nil)
	run(dir, env)
	if gittest.Fired(marker) {
		t.Fatal("a closed gh's git ran the hook")
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_SSH_COMMAND=") {
			t.Fatalf("%s survived", kv)
		}
	}
}
