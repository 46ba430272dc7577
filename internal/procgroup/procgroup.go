// Package procgroup starts a long-lived child (a server a test or a
// regression case needs) in a process group of its own, and stops the whole
// group: the child and everything it forked.
//
// Why a group: signalling one pid leaves that process's children running.
// `git daemon` is the git wrapper waiting on the git-daemon program, which
// forks a child per connection; SIGKILL to the wrapper's pid (what
// cmd.Process.Kill does) orphans git-daemon, still listening on loopback with
// pushes enabled, serving a folder that is then deleted. A signal to the
// group reaches every one of them.
//
// Limits: a descendant that leaves the group (setsid, setpgid) is not
// stopped here; internal/leakcheck finds and kills those, and fails the run.
// Short commands that are waited for need none of this: use it for what runs
// in the background.
package procgroup

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Grace is how long Stop waits after SIGTERM before SIGKILL: enough for
// git's wrapper to pass the signal on and reap its child.
const Grace = 2 * time.Second

// Group is a started child and the process group it leads.
type Group struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the leader is reaped
	err  error         // the leader's Wait error, set before done closes
	stop sync.Once
}

// Start starts cmd as the leader of a new process group. cmd must not be
// started yet; its other SysProcAttr fields are kept.
func Start(cmd *exec.Cmd) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0 // a group of its own, never a caller's
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("procgroup: start %s: %w", cmd.Path, err)
	}
	g := &Group{cmd: cmd, done: make(chan struct{})}
	go func() {
		g.err = cmd.Wait()
		close(g.done)
	}()
	return g, nil
}

// Pid is the leader's process id, which is also the group's id.
func (g *Group) Pid() int { return g.cmd.Process.Pid }

// Stop ends the group: SIGTERM to every member, then after Grace (or as soon
// as the leader has exited) SIGKILL to every member still there, and reaps
// the leader. It is safe to call more than once and from a cleanup that runs
// after a panic. It returns the leader's exit error only when the leader
// exited on its own before Stop (a server that died early); being stopped is
// not an error.
func (g *Group) Stop() error {
	exitedEarly := false
	g.stop.Do(func() {
		select {
		case <-g.done:
			exitedEarly = true
		default:
		}
		g.signal(syscall.SIGTERM)
		select {
		case <-g.done:
		case <-time.After(Grace):
		}
		// Always, even once the leader is gone: git-daemon's connection
		// children may still be exiting, or ignore SIGTERM. The group id
		// stays reserved while any member (even a zombie) is left, so this
		// reaches only our group, or nothing (ESRCH).
		g.signal(syscall.SIGKILL)
		<-g.done
	})
	if exitedEarly && g.err != nil {
		return fmt.Errorf("procgroup: %s exited before it was stopped: %w", g.cmd.Path, g.err)
	}
	return nil
}

func (g *Group) signal(sig syscall.Signal) {
	if err := syscall.Kill(-g.Pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		// EPERM cannot happen for our own child's group; nothing else to do
		// but fall back to the leader alone.
		_ = g.cmd.Process.Signal(sig)
	}
}
