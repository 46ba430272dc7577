// Package leakcheck fails a test binary or a command whose child processes
// outlive it, names them, and kills them, so nothing it started is left
// running: a forgotten `git daemon --enable=receive-pack` on loopback is a
// server any local user can push to.
//
// How: Start makes this process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER), so a grandchild orphaned by its parent's death is
// re-parented to this process instead of init and stays visible as our
// descendant. Sweep, called when nothing is meant to run any more, waits a
// short grace for descendants to exit, then kills and reports every one still
// alive, and reaps the zombies left to us.
//
// A test package wires it in one line:
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
//
// Limits: a process that escapes before Start, or that another program (a
// service manager, a terminal multiplexer) adopts, is not seen. On systems
// other than Linux, Start and Sweep do nothing.
package leakcheck

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Grace is how long Sweep waits for descendants that are already exiting
// (a group just sent SIGKILL, a background command being stopped).
const Grace = 3 * time.Second

// Proc is a process that outlived its run.
type Proc struct {
	PID  int
	Args string // its command line, shortened
}

func (p Proc) String() string { return fmt.Sprintf("pid %d: %s", p.PID, p.Args) }

// M is what a TestMain runs: *testing.M, or anything with its Run.
type M interface{ Run() int }

// Run makes the process a subreaper, runs m, and then fails (exit code 1,
// unless m already failed) naming every descendant still alive, which it
// kills. For TestMain: os.Exit(leakcheck.Run(m)).
func Run(m M) int {
	return run(m, os.Stderr, Grace)
}

func run(m M, w io.Writer, grace time.Duration) int {
	if err := Start(); err != nil {
		fmt.Fprintf(w, "leakcheck: %v\n", err)
		return 1
	}
	code := m.Run()
	leaked := Sweep(grace)
	if len(leaked) == 0 {
		return code
	}
	fmt.Fprintf(w, "FAIL: %d process(es) started by these tests still ran after them (killed now):\n", len(leaked))
	for _, p := range leaked {
		fmt.Fprintf(w, "\t%s\n", p)
	}
	if code == 0 {
		code = 1
	}
	return code
}

// Wrap is Run for a caller that takes an M and exits itself
// (testscript.Main).
func Wrap(m M) M { return wrapped{m} }

type wrapped struct{ m M }

func (w wrapped) Run() int { return Run(w.m) }
