package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// sub describes one git subcommand gatehouse runs: the fixed part of its
// shape, decided here and nowhere else.
type sub struct {
	name string
	// endOfOptions: the subcommand takes --end-of-options before its
	// positional arguments.
	endOfOptions bool
	// network: it may reach a remote. It keeps the user's own credential
	// helper, askpass and SSH agent (docs/gate-rules.md, "Programs that
	// run for the network"); everything else gets them cleared for a
	// closed gate.
	network bool
	// processes is how many processes it may run at once, each under the
	// same memory bound (0: one): a fetch or push runs its transport helper
	// and index-pack or pack-objects beside it, worktree add its checkout.
	// The memory budget counts each (budget.go).
	processes int
	// readOnly: it changes nothing, so it may skip optional locks.
	readOnly bool
	timeout  time.Duration
	maxOut   int
	// flags go on every call of the subcommand, right after its name: they
	// pin what a repository's config could otherwise change (the diff
	// prefixes the secret filter reads, an external diff program, a
	// signature check that runs gpg), for everyone.
	flags []string
	// closedFlags go on every closed call of it as well: no conversion
	// program and no submodule, whose config the gate never reads.
	closedFlags []string
	// ownPathspecs: the subcommand's own child gits name pathspecs with
	// magic (git stash -u cleans the stashed untracked files with
	// "git clean :/"), which GIT_LITERAL_PATHSPECS would turn into a
	// file named ":/": the files stayed and the pop failed. It takes no
	// path from a device: run refuses a call of it that has paths.
	ownPathspecs bool
	// monitor, set on one call's copy of subStatus only, is the status
	// monitor it answers to (fsmonitor.go): git reads and writes
	// gatehouse's own index copy in the monitor's private folder, takes
	// optional locks there, and may run the monitor's hook, which the
	// kernel wall then allows by its exact path.
	monitor *monitor
}

// The flags of the diff family, each for the reason beside it. A call site
// adds only the shape of its own output (-z, --name-only, a format).
var (
	// diffFlags: names always carry a/ and b/ (docs/gate-rules.md, "The
	// names the secret filter reads"), no colour
	// codes in front of the lines the secret filter reads, and no
	// diff.external or diff.<driver>.command program.
	diffFlags = []string{"--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/"}
	// historyFlags: showing a signature runs gpg.program or
	// gpg.ssh.program; a .mailmap (or mailmap.file) may be a FIFO that
	// hangs the read, or name any file.
	historyFlags = append([]string{"--no-show-signature", "--no-mailmap"}, diffFlags...)
	// noTextconv: diff.<driver>.textconv names a program that turns a
	// file into text; the closed gate shows the bytes instead.
	noTextconv = []string{"--no-textconv"}
	// noSubmodules: a submodule carries its own config, which the gate
	// never reads (docs/gate-rules.md, "Submodules").
	noSubmodules = []string{"--ignore-submodules=all"}
)

var (
	subConfig      = sub{name: "config", readOnly: true, timeout: 10 * time.Second, maxOut: 1 << 20}
	subStatus      = sub{name: "status", readOnly: true, timeout: 60 * time.Second, maxOut: 64 << 20, closedFlags: noSubmodules}
	subDiff        = sub{name: "diff", readOnly: true, timeout: 60 * time.Second, maxOut: 16 << 20, flags: diffFlags, closedFlags: slices.Concat(noTextconv, noSubmodules)}
	subLog         = sub{name: "log", endOfOptions: true, readOnly: true, timeout: 30 * time.Second, maxOut: 4 << 20, flags: historyFlags, closedFlags: noTextconv}
	subShow        = sub{name: "show", endOfOptions: true, readOnly: true, timeout: 30 * time.Second, maxOut: 16 << 20, flags: historyFlags, closedFlags: noTextconv}
	subDiffFiles   = sub{name: "diff-files", readOnly: true, timeout: 60 * time.Second, maxOut: 64 << 20, closedFlags: noSubmodules}
	subLsTree      = sub{name: "ls-tree", readOnly: true, timeout: 120 * time.Second, maxOut: 256 << 20}
	subDiffIndex   = sub{name: "diff-index", readOnly: true, timeout: 120 * time.Second, maxOut: 64 << 20}
	subLsFiles     = sub{name: "ls-files", readOnly: true, timeout: 120 * time.Second, maxOut: 256 << 20}
	subForEachRef  = sub{name: "for-each-ref", readOnly: true, timeout: 30 * time.Second, maxOut: 16 << 20}
	subRevParse    = sub{name: "rev-parse", readOnly: true, timeout: 10 * time.Second, maxOut: 64 << 10}
	subRevList     = sub{name: "rev-list", endOfOptions: true, readOnly: true, timeout: 30 * time.Second, maxOut: 64 << 10}
	subUpdateIndex = sub{name: "update-index", timeout: 120 * time.Second, maxOut: 1 << 20}
	subReset       = sub{name: "reset", timeout: 60 * time.Second, maxOut: 1 << 20}
	subRm          = sub{name: "rm", timeout: 60 * time.Second, maxOut: 1 << 20}
	subRestore     = sub{name: "restore", timeout: 120 * time.Second, maxOut: 1 << 20}
	subCommit      = sub{name: "commit", timeout: 120 * time.Second, maxOut: 1 << 20}
	subRemote      = sub{name: "remote", readOnly: true, timeout: 10 * time.Second, maxOut: 64 << 10}
	subPush        = sub{name: "push", network: true, processes: 3, timeout: 180 * time.Second, maxOut: 1 << 20}
	subFetch       = sub{name: "fetch", network: true, processes: 3, timeout: 180 * time.Second, maxOut: 1 << 20}
	subMerge       = sub{name: "merge", endOfOptions: true, timeout: 120 * time.Second, maxOut: 1 << 20}
	subMergeTree   = sub{name: "merge-tree", endOfOptions: true, readOnly: true, timeout: 60 * time.Second, maxOut: 1 << 20}
	subSwitch      = sub{name: "switch", endOfOptions: true, timeout: 120 * time.Second, maxOut: 1 << 20}
	subBranch      = sub{name: "branch", endOfOptions: true, timeout: 30 * time.Second, maxOut: 1 << 20}
	subWorktree    = sub{name: "worktree", processes: 2, timeout: 120 * time.Second, maxOut: 1 << 20}

	// subApply changes only the index (--cached: never the work tree, so
	// no filter or attribute conversion runs), reads the patch gatehouse
	// built from its own diff on stdin, names with the a/ b/ prefixes
	// diffFlags pin (-p1), and takes each line as written whatever
	// apply.whitespace says (=fix would change what the device saw). It
	// reads no program-naming config, so it has no closed flags.
	subApply = sub{name: "apply", timeout: 60 * time.Second, maxOut: 1 << 20, flags: []string{"--cached", "-p1", "--whitespace=nowarn"}}
)

// call is one git invocation.
type call struct {
	sub    sub
	config []Option // operation-specific -c options (a decision's filter overrides)
	opts   []string // options: constants, never a device's input
	args   []string // positional arguments, validated (ref names, object ids)
	paths  []string // pathspecs, validated, after "--"
	stdin  io.Reader
	// okExit lists exit codes that are answers, not failures (diff
	// --exit-code, merge-tree's 1 for a conflict).
	okExit []int
}

// result is what a git process gave back.
type result struct {
	stdout    []byte
	stderr    []byte
	exit      int
	truncated bool // stdout reached the call's bound; the process was stopped
}

// maxStderr bounds the error output kept for the log.
const maxStderr = 64 << 10

// ExitError is a git process that ended with a failure. Its Error is for the
// host's log (it may name paths of this computer); a device sees the
// sentence of ErrGitFailed.
type ExitError struct {
	Sub    string
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("git %s: exit %d: %s", e.Sub, e.Code, strings.TrimSpace(e.Stderr))
}
func (e *ExitError) Unwrap() error { return ErrGitFailed }

// run starts git: the one place in gatehouse that does, on a device's behalf
// or anyone's. It pins the repository, rebuilds the environment from an
// allowlist, adds the forced options (and for a closed gate, the closed
// ones), puts every argument in its fixed place, bounds the output and the
// time, and stops the whole process group on expiry (stopGroup). d is the
// decision made for this operation; for a closed trust it must not be nil.
func (r *Repo) run(ctx context.Context, t trust.Trust, d *decision, c call) (*result, error) {
	if t.Closed() && d == nil {
		return nil, errors.New("gate: closed call without a decision")
	}
	if err := fixedShape(c); err != nil {
		return nil, err
	}
	if c.sub.ownPathspecs && len(c.paths) > 0 {
		return nil, fmt.Errorf("git %s: %w: paths without literal pathspecs", c.sub.name, ErrOptionShaped)
	}
	timeout := c.sub.timeout
	if r.maxTime > 0 && r.maxTime < timeout {
		timeout = r.maxTime
	}
	dir := r.workTree
	if dir == "" { // a bare repository
		dir = r.gitDir
	}
	l, err := r.spawn(ctx, t, spawn{path: r.git, args: r.argv(t, d, c), dir: dir, env: r.environ(t, c.sub), stdin: c.stdin,
		timeout: timeout, maxOut: c.sub.maxOut, processes: c.sub.processes, counted: true, watchFIFO: true,
		start: func(cmd *exec.Cmd) error { return r.start(cmd, t, c.sub) }}) // closed: inside the kernel wall (confine_linux.go)
	if err != nil {
		return nil, err
	}
	res := &result{stdout: l.stdout, stderr: l.stderr, truncated: l.truncated, exit: l.exit}
	switch {
	case res.truncated:
		return res, nil
	case l.waitedOnFIFO || l.expired:
		return res, r.whyStopped(fmt.Errorf("git %s: %w", c.sub.name, ErrTimeout), l.waitedOnFIFO)
	case l.err == nil:
		return res, nil
	}
	var ee *exec.ExitError
	if errors.As(l.err, &ee) {
		for _, ok := range c.okExit {
			if res.exit == ok {
				return res, nil
			}
		}
		if t.Closed() && !l.stopped && outOfMemory(ee, res.stderr) { // not our own kill
			return res, r.whyStopped(refuseMemory(c.sub, r.wall.limit(), res), false)
		}
		return res, &ExitError{Sub: c.sub.name, Code: res.exit, Stderr: string(res.stderr)}
	}
	return res, fmt.Errorf("git %s: %w", c.sub.name, l.err)
}

// stopGrace is how long a git told to stop has to clean up before SIGKILL.
const stopGrace = 2 * time.Second

// killAtOnceForTest stops a git the old way, SIGKILL to the whole group at
// once, so a test can show the lock file that leaves behind. Only this
// package's tests set it.
var killAtOnceForTest atomic.Bool

// stopGroup stops the process group a git call leads, at its deadline or
// when its output is full, so that git cleans up after itself. git deletes
// its lock files (index.lock, a ref's .lock) and temporary files from a
// handler for SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGPIPE (tempfile.c's
// sigchain_push_common; each process its own files), and nothing can for
// SIGKILL: a change killed outright left .git/index.lock, and every later
// change, the user's own git add too, failed until someone deleted it. So
// every process of the group gets SIGTERM (a child git, such as the
// checkout worktree add starts, holds locks of its own), and what is left
// stopGrace later gets SIGKILL: a hook or filter that ignores SIGTERM, or a
// git the signal met before it ran (still stopped at its exec for the memory
// bound, where the detach may drop it). The group's id stays reserved
// while any member is left, even a zombie, so that SIGKILL reaches this
// group or nothing (ESRCH), unless the kernel gave the id out again within
// stopGrace of the group emptying, which takes wrapping the whole pid space.
func stopGroup(pgid int) error {
	if killAtOnceForTest.Load() {
		return syscall.Kill(-pgid, syscall.SIGKILL)
	}
	time.AfterFunc(stopGrace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	return syscall.Kill(-pgid, syscall.SIGTERM)
}

// argv builds the command line: global options, -c options, the
// subcommand, its table flags, the call's options, then its arguments and
// paths in fixed places.
func (r *Repo) argv(t trust.Trust, d *decision, c call) []string {
	argv := []string{"--no-pager"}
	add := func(opts []Option) {
		for _, o := range opts {
			argv = append(argv, "-c", o.Key+"="+o.Value)
		}
	}
	add(everyone)
	if t.Closed() {
		add(closedAll)
		if !c.sub.network {
			add(closedOffline)
		}
		add(d.overrides)
	}
	add(c.config)
	argv = append(argv, c.sub.name)
	argv = append(argv, c.sub.flags...)
	if t.Closed() {
		argv = append(argv, c.sub.closedFlags...)
	}
	argv = append(argv, c.opts...)
	if len(c.args) > 0 {
		if c.sub.endOfOptions {
			argv = append(argv, "--end-of-options")
		}
		argv = append(argv, c.args...)
	}
	if len(c.paths) > 0 {
		argv = append(argv, "--")
		for _, p := range c.paths {
			argv = append(argv, pathspec(p))
		}
	}
	return argv
}

// environ is the child's environment: the allowlist, the pinned
// repository, and gatehouse's own variables.
func (r *Repo) environ(t trust.Trust, s sub) []string {
	var env []string
	keep := slices.Clone(keepEnv)
	if s.network {
		keep = append(keep, networkEnv...)
	}
	if r.home == "" && !r.userEnvOffForTest {
		keep = append(keep, userConfigEnv...)
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if kept(name, keep) && !(name == "HOME" && r.home != "") {
			env = append(env, kv)
		}
	}
	if r.home != "" {
		env = append(env, "HOME="+r.home)
	}
	env = append(env, "GIT_DIR="+r.gitDir, "GIT_COMMON_DIR="+r.commonDir)
	if r.workTree != "" {
		env = append(env, "GIT_WORK_TREE="+r.workTree, "GIT_CEILING_DIRECTORIES="+r.workTree)
	} else {
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(r.gitDir))
	}
	for _, o := range everyoneEnv {
		if s.ownPathspecs && o.Key == "GIT_LITERAL_PATHSPECS" {
			continue
		}
		env = append(env, o.Key+"="+o.Value)
	}
	if t.Closed() {
		for _, o := range closedEnv {
			env = append(env, o.Key+"="+o.Value)
		}
	}
	if s.monitor != nil {
		env = append(env, "GIT_INDEX_FILE="+s.monitor.index(), monitorAnswerEnv+"="+s.monitor.answer())
	} else if s.readOnly {
		env = append(env, "GIT_OPTIONAL_LOCKS=0")
	}
	return env
}

func kept(name string, keep []string) bool {
	if strings.HasPrefix(name, "LC_") && name != "LC_ALL" {
		return true
	}
	for _, k := range keep {
		if name == k {
			return true
		}
	}
	return false
}

// bounded keeps at most max bytes; past that it drops the rest, records
// that it did, and calls full (which stops the process).
type bounded struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
	full func()
}

func (b *bounded) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); len(p) > room {
		b.buf.Write(p[:max(room, 0)])
		if !b.over && b.full != nil {
			b.full()
		}
		b.over = true
		return len(p), nil
	}
	return b.buf.Write(p)
}
