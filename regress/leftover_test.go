package regress

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/leakcheck"
)

// The runner fails a case that leaves a process running, names it, and
// kills it (internal/leakcheck).
func TestTheRunnerFailsACaseThatLeavesAProcess(t *testing.T) {
	leaves := Case{Name: "leaves-a-process", Attack: "a program outlives the case", Build: func(e *Env) { e.Init(nil) },
		Plain: func(e *Env) string {
			// The shell exits at once: its sleep is orphaned, as git-daemon
			// was when only the git wrapper was killed.
			out, _ := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo started").Output()
			return string(out)
		},
		Fired: func(e *Env, out string) bool { return strings.Contains(out, "started") }, Method: "git.status", Params: target}
	results, err := Run(context.Background(), []Case{leaves}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Status != "FAIL" || !strings.Contains(results[0].Reason, "sleep 60") {
		t.Fatalf("a case that leaves sleep 60 running: %+v", results)
	}
	if left := leakcheck.Sweep(0); len(left) > 0 {
		t.Fatalf("the runner left %v running", left)
	}
}

// A case whose build panics after starting git daemon fails, and the daemon
// is stopped on the way out.
func TestAPanickingCaseStopsItsDaemon(t *testing.T) {
	panics := Case{Name: "panics", Attack: "the build panics", Method: "git.status", Params: target,
		Build: func(e *Env) { withRemote(e, true); panic("in the build") }}
	results, err := Run(context.Background(), []Case{panics}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Status != "FAIL" || !strings.Contains(results[0].Reason, "panicked: in the build") {
		t.Fatalf("a panicking case: %+v", results)
	}
	if left := leakcheck.Sweep(0); len(left) > 0 {
		t.Fatalf("left running after a panic: %v", left)
	}
}

// The corpus cases that serve a remote with git daemon leave nothing.
func TestDaemonCasesLeaveNothing(t *testing.T) {
	results, err := Run(context.Background(), Corpus(), Options{Run: regexp.MustCompile(`^hook-(pre-push|post-merge-on-pull)$`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("picked %d cases", len(results))
	}
	for _, r := range results {
		if r.Status != "pass" {
			t.Errorf("%s: %s %s", r.Name, r.Status, r.Reason)
		}
	}
}
