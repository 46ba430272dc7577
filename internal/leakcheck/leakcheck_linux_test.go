package leakcheck

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// orphan starts `sleep 60` in the background of a shell that exits at once,
// so the sleep's parent dies: the way a wrapper killed alone leaves the
// program it ran. It returns the sleep's pid.
func orphan(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func alive(pid int) bool {
	p, ok := stat(pid)
	return ok && p.state != 'Z' && p.state != 'X'
}

// Without the subreaper the orphan goes to init (or whichever reaper is
// above us): it is no longer ours, and nothing here would see it leak.
func TestWithoutTheSubreaperTheOrphanEscapes(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := Start(); err != nil {
			t.Fatal(err)
		}
	}()
	pid := orphan(t)
	defer func() { _ = unix.Kill(pid, unix.SIGKILL) }()
	if !alive(pid) {
		t.Fatal("the orphan is not running")
	}
	for _, p := range descendants() {
		if p.pid == pid {
			t.Fatalf("pid %d is still ours without the subreaper", pid)
		}
	}
}

// With it, the orphaned grandchild is ours: Sweep names it and kills it.
func TestSweepFindsAndKillsAnOrphanedGrandchild(t *testing.T) {
	pid := orphan(t)
	if !alive(pid) {
		t.Fatal("the orphan is not running")
	}
	left := Sweep(200 * time.Millisecond)
	if len(left) != 1 || left[0].PID != pid || left[0].Args != "sleep 60" {
		t.Fatalf("Sweep found %v, want pid %d sleep 60", left, pid)
	}
	if _, ok := stat(pid); ok {
		t.Fatalf("pid %d still exists after Sweep (alive or an unreaped zombie)", pid)
	}
	if left := Sweep(0); len(left) != 0 {
		t.Fatalf("a second Sweep found %v", left)
	}
}

// A process that exits within the grace is not a leak.
func TestSweepWaitsForWhatIsExiting(t *testing.T) {
	if err := exec.Command("sh", "-c", "sleep 0.3 &").Run(); err != nil {
		t.Fatal(err)
	}
	if left := Sweep(Grace); len(left) != 0 {
		t.Fatalf("Sweep reported a process that exited in time: %v", left)
	}
}

type leakyM struct{ t *testing.T }

func (m leakyM) Run() int { orphan(m.t); return 0 }

// Run fails a passing test binary whose process outlived it, naming it.
func TestRunFailsTheTestsThatLeak(t *testing.T) {
	var out strings.Builder
	code := run(leakyM{t}, &out, 100*time.Millisecond)
	if code != 1 || !strings.Contains(out.String(), "sleep 60") || !strings.Contains(out.String(), "FAIL") {
		t.Fatalf("exit %d, output:\n%s", code, out.String())
	}
	t.Logf("what a leaking package prints:\n%s", out.String())
}

type cleanM struct{}

func (cleanM) Run() int { return 0 }

func TestRunPassesTheTestsThatDoNot(t *testing.T) {
	var out strings.Builder
	if code := run(cleanM{}, &out, 100*time.Millisecond); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
}

// comm may hold spaces and parentheses; the fields start after the last ')'.
func TestStatParsesItself(t *testing.T) {
	p, ok := stat(os.Getpid())
	if !ok || p.ppid != os.Getppid() || p.state == 0 {
		t.Fatalf("stat of this process: %+v %v", p, ok)
	}
}

// The whole wiring, as go test sees it: this test binary, run with only a
// test that passes but leaves `sleep 60` behind, exits non-zero naming it.
func TestATestBinaryThatLeaksFails(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeakHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GATEHOUSE_LEAK_HELPER=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("the leaking test binary: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "still ran after them") || !strings.Contains(string(out), "sleep 60") {
		t.Fatalf("the failure does not name the process:\n%s", out)
	}
}

func TestLeakHelper(t *testing.T) {
	if os.Getenv("GATEHOUSE_LEAK_HELPER") != "1" {
		t.Skip("run by TestATestBinaryThatLeaksFails")
	}
	orphan(t)
}
