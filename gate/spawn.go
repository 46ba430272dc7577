package gate

import (
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// spawn is one program a request causes: git (Repo.run) or gh (runGH).
// Both start through Repo.spawn, so what bounds a child is written once.
type spawn struct {
	path  string // the program
	args  []string
	dir   string
	env   []string
	stdin io.Reader
	// timeout bounds the whole run; maxOut the bytes kept of its standard
	// output (more stops it, and the result says truncated).
	timeout time.Duration
	maxOut  int
	// processes is how many children's memory it holds of the closed
	// children's budget (budget.go); tool: gh's floor.
	processes int
	tool      bool
	// start starts cmd: for a closed trust inside the kernel wall and the
	// memory bound (confine_linux.go's Repo.start and startTool).
	start func(cmd *exec.Cmd) error
	// watchFIFO stops it early when it waits on a FIFO (failures.go).
	watchFIFO bool
	// counted adds it to Repo.started (git processes, for tests and doctor).
	counted bool
}

// spawned is what a spawn gave.
type spawned struct {
	stdout, stderr []byte
	truncated      bool  // more output than maxOut: stopped
	exit           int   // its exit code, when it ran
	err            error // from starting or waiting for it
	started        bool  // it started
	expired        bool  // its time ran out
	stopped        bool  // stopped by gatehouse (time, output) or by the caller
	waitedOnFIFO   bool  // stopped waiting on a FIFO
}

// spawn starts l and waits for it, with everything every child gets: its
// own process group, stopped at the deadline or when its output is full by
// SIGTERM to the group and SIGKILL stopGrace later (stopGroup), standard
// output and error bounded, and its share of the closed children's memory
// held while it runs. It is the one function of gate that starts a program
// for a request (internal/invariants holds that). An error is one from
// before the start (the memory budget); the child's own is in spawned.
func (r *Repo) spawn(ctx context.Context, t trust.Trust, l spawn) (*spawned, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.path, l.args...)
	cmd.Dir, cmd.Env = l.dir, l.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return stopGroup(cmd.Process.Pid) }
	cmd.WaitDelay = stopGrace + 2*time.Second // then exec kills the leader and closes the pipes
	if l.stdin != nil {
		cmd.Stdin = l.stdin
	}
	out := &bounded{max: l.maxOut, full: cancel}
	errOut := &bounded{max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, errOut
	release, err := r.holdMemory(ctx, t, l.processes, l.tool) // its share of the closed children's memory (budget.go)
	if err != nil {
		return nil, err
	}
	defer release()
	if l.counted && r != nil {
		r.started.Add(1)
	}
	res := &spawned{}
	err = l.start(cmd)
	if err == nil {
		if l.watchFIFO {
			watch := watchFIFO(cmd.Process.Pid, cancel) // a FIFO it opens stops it early (failures.go)
			err = cmd.Wait()
			res.waitedOnFIFO = watch.end() && err != nil
		} else {
			err = cmd.Wait()
		}
	}
	res.stdout, res.stderr, res.truncated = out.buf.Bytes(), errOut.buf.Bytes(), out.over
	if cmd.ProcessState != nil {
		res.exit = cmd.ProcessState.ExitCode()
	}
	res.err, res.started = err, cmd.Process != nil
	res.expired, res.stopped = ctx.Err() == context.DeadlineExceeded, ctx.Err() != nil
	return res, nil
}
