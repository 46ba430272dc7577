package leakcheck

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxArgs bounds a reported command line.
const maxArgs = 200

// Start makes this process the reaper of its orphaned descendants. Call it
// before starting anything.
func Start() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("leakcheck: becoming a child subreaper: %w", err)
	}
	return nil
}

// Sweep waits up to grace for this process's descendants to exit, then
// kills every one still alive and returns them; it reaps the zombies among
// our children. Call it only when nothing this process started is meant to
// run (after m.Run, between regression cases): a child another goroutine is
// still waiting for would be reported, and its exit status taken.
func Sweep(grace time.Duration) []Proc {
	deadline := time.Now().Add(grace)
	for {
		reapZombies()
		alive := descendants()
		if len(alive) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return kill(alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill SIGKILLs the processes, then reaps them as they die.
func kill(procs []proc) []Proc {
	var out []Proc
	for _, p := range procs {
		out = append(out, Proc{PID: p.pid, Args: args(p)})
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	// Killed parents hand their children to us; keep killing until no live
	// descendant is left, bounded: SIGKILL cannot be ignored.
	for range 100 {
		reapZombies()
		rest := descendants()
		if len(rest) == 0 {
			break
		}
		for _, p := range rest {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A killed process may still be a zombie when the loop above sees no
	// live one (on a loaded machine the kill lands after the last reap):
	// reap until each is gone, bounded as above.
	for _, p := range out {
		for range 100 {
			reapZombies()
			if _, ok := stat(p.PID); !ok {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// reapZombies waits for every child of ours that has exited.
func reapZombies() {
	self := os.Getpid()
	for _, p := range scan() {
		if p.ppid == self && p.state == 'Z' {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// proc is one line of /proc/PID/stat, the fields we need.
type proc struct {
	pid, ppid int
	state     byte
	comm      string
}

// descendants lists the live (not zombie) processes below this one.
func descendants() []proc {
	all := scan()
	children := map[int][]proc{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []proc
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			queue = append(queue, c.pid)
			if c.state != 'Z' && c.state != 'X' {
				out = append(out, c)
			}
		}
	}
	return out
}

// scan reads every process's stat; a process that exits meanwhile is
// skipped.
func scan() []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// stat parses /proc/PID/stat: "pid (comm) state ppid ...". comm may hold
// spaces and parentheses, so the fields start after the last ')'.
func stat(pid int) (proc, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return proc{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, state: f[0][0], comm: string(data[open+1 : end])}, true
}

// args is the process's command line, or its name when that is gone.
func args(p proc) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
	s := strings.TrimSpace(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '})))
	if err != nil || s == "" {
		s = "[" + p.comm + "]"
	}
	if len(s) > maxArgs {
		s = s[:maxArgs] + "..."
	}
	return s
}
