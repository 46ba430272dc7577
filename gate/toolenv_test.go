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

// TestToolEnvIsAnAllowlist: a variable nobody listed never reaches a tool
// that runs git for a phone, whatever its name. BASH_ENV names a file every
// non-interactive bash runs first (a tool's script, an alias or hook written
// for bash): a denylist of GIT_* and a few program names let it through.
func TestToolEnvIsAnAllowlist(t *testing.T) {
	prog, marker := gittest.PayloadFile(t)
	hostile := append(os.Environ(), "BASH_ENV="+prog, "GH_EDITOR=evil", "BROWSER=evil", "LD_PRELOAD=/nonexistent.so",
		"GIT_SSH_COMMAND=evil", "GIT_DIR=/elsewhere", "PAGER=evil", "GH_TOKEN=tok", "SSH_AUTH_SOCK=/agent", "LC_CTYPE=C.UTF-8")
	bash := func(env []string) {
		cmd := exec.Command("bash", "-c", "true")
		cmd.Env = env
		_ = cmd.Run()
	}
	bash(hostile)
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: bash did not run BASH_ENV")
	}
	os.Remove(marker)
	for _, tr := range []trust.Trust{desktop, closed} {
		env := ToolEnv(tr, hostile)
		bash(env)
		if gittest.Fired(marker) {
			t.Fatalf("%v: a tool's bash ran BASH_ENV", tr)
		}
		names := map[string]bool{}
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			names[name] = true
		}
		for _, bad := range []string{"BASH_ENV", "GH_EDITOR", "BROWSER", "LD_PRELOAD", "GIT_SSH_COMMAND", "GIT_DIR", "PAGER"} {
			if names[bad] {
				t.Errorf("%v: %s survived", tr, bad)
			}
		}
		for _, want := range []string{"PATH", "GH_TOKEN", "SSH_AUTH_SOCK", "LC_CTYPE"} {
			if !names[want] {
				t.Errorf("%v: %s dropped", tr, want)
			}
		}
		if closedGate := slices.Contains(env, "GIT_CONFIG_KEY_0="+everyone[0].Key); closedGate != tr.Closed() {
			t.Errorf("%v: closed gate in the environment: %v", tr, closedGate)
		}
	}
}
