package procgroup

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/leakcheck"
)

// daemonCmd is `git daemon` as the tests used to start it: pushes enabled,
// serving dir, on a free loopback port.
func daemonCmd(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	return exec.Command("git", "daemon", "--reuseaddr", "--listen=127.0.0.1",
		"--port="+strconv.Itoa(l.Addr().(*net.TCPAddr).Port),
		"--export-all", "--enable=receive-pack", "--base-path="+dir, dir), addr
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for range 250 {
		if listening(addr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("git daemon did not start")
}

// The bug: killing the pid of `git daemon` kills only git's
// wrapper; the git-daemon program it ran keeps listening, pushes enabled.
func TestKillingTheWrapperLeavesGitDaemon(t *testing.T) {
	cmd, addr := daemonCmd(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListening(t, addr)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !listening(addr) {
		t.Fatal("git daemon stopped with its wrapper: the leak no longer reproduces, and this test lost its point")
	}
	// The orphan came to us (TestMain made this process a subreaper):
	// the leak check names it and kills it.
	left := leakcheck.Sweep(0)
	if len(left) == 0 || !strings.Contains(left[0].Args, "git-daemon") {
		t.Fatalf("the leak check did not find the orphaned git-daemon: %v", left)
	}
	if listening(addr) {
		t.Fatal("still listening after the leak check killed it")
	}
}

// The fix: the daemon leads a group, and Stop ends the group, also the
// child git-daemon forked for a connection still open.
func TestStopLeavesNothing(t *testing.T) {
	cmd, addr := daemonCmd(t)
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	waitListening(t, addr)
	conn, err := net.Dial("tcp", addr) // git-daemon forks a child for it
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %v", time.Since(start))
	if listening(addr) {
		t.Fatal("git daemon still listens after Stop")
	}
	if left := leakcheck.Sweep(leakcheck.Grace); len(left) > 0 {
		t.Fatalf("still running after Stop: %v", left)
	}
	if err := g.Stop(); err != nil {
		t.Fatalf("a second Stop: %v", err)
	}
}

// A child that ignores SIGTERM is killed after the grace.
func TestStopKillsWhatIgnoresTerm(t *testing.T) {
	g, err := Start(exec.Command("sh", "-c", "trap '' TERM; sleep 60 & wait"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < Grace || d > Grace+2*time.Second {
		t.Fatalf("Stop took %v, want about %v", d, Grace)
	}
	if left := leakcheck.Sweep(leakcheck.Grace); len(left) > 0 {
		t.Fatalf("still running after Stop: %v", left)
	}
}

// A server that died on its own is reported by Stop.
func TestStopReportsAnEarlyExit(t *testing.T) {
	g, err := Start(exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := g.Stop(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stop after an early exit: %v", err)
	}
}
