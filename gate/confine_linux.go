//go:build linux

package gate

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

// Landlock access rights, grouped the way the wall grants them. Each group
// is cut down to what the kernel's ABI knows (handledFS) before use.
const (
	fsRead = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fsExec: run a program (and read it: the loader maps it).
	fsExec = fsRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	// fsWrite is what git does in its own folders and the work tree:
	// files, folders and symlinks (a checkout of a symlink entry), renames
	// of lock files into place (REFER, across folders for objects), and
	// truncation. No FIFO, socket or device node: git makes none.
	fsWrite = fsRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
		unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// fsFileOnly are the rights a rule on a file (not a folder) may carry.
	fsFileOnly = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS is every filesystem right the ABI knows: all of them are
// refused unless a rule grants them. ABI 1 cannot handle REFER, so every
// rename across folders is refused there (git's lock files rename within
// one folder; a loose object too); TRUNCATE is ABI 3, IOCTL_DEV ABI 5.
// Rights of later ABIs than 7 (RESOLVE_UNIX) are left unhandled on
// purpose: a network call reaches the user's SSH agent through its socket.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: EXECUTE through MAKE_SYM
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// kernelWallOffForTest leaves Landlock off for every closed child of this
// process, so the gate's whole test suite runs once more as macOS and
// kernels without Landlock run it (wall A alone). Only the gate's
// TestMain sets it, from GATEHOUSE_KERNEL_WALL=off.
var kernelWallOffForTest atomic.Bool

// confinement is the Linux part of a Repo's wall.
type confinement struct {
	// landlockOffForTest leaves Landlock off, so a test proves the memory
	// bound alone. Only tests in this package set it.
	landlockOffForTest bool
	// offForTest starts closed children as the desktop's are, so a
	// benchmark measures what the wall costs. Only tests set it.
	offForTest bool
	// untracedForTest sets the memory bound right after the start instead
	// of at the exec stop, so a benchmark measures what atomicity costs.
	untracedForTest bool

	rulesetMu sync.Mutex
	rulesets  *rulesetCache // Linux: built on the first closed call, guarded by rulesetMu
}

// rulesetCache holds the Landlock rulesets built for one Repo, by kind of
// call, each with the identity of every file its rules name.
type rulesetCache struct {
	byKind map[string]cachedRuleset
	// userFiles are the files the user's own config names for git to
	// read (includes, excludes and attributes files), asked of git again
	// whenever userFP (the identity of the config files) changes.
	userFiles []string
	userFP    string
}

// cachedRuleset is one kind's launcher: a thread that carries the
// ruleset's domain and starts the children sent to it (Linux).
type cachedRuleset struct {
	fingerprint string
	starts      chan launch
}

// launch asks a launcher to start cmd bounded by limit.
type launch struct {
	cmd   *exec.Cmd
	limit uint64
	done  chan error
}

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6 (scoped); its
// size tells the kernel which fields are there.
type rulesetAttr struct {
	fs, net, scoped uint64
}

// landlock is the kernel's answer, asked once: its ABI version, 0 when
// Landlock is missing or switched off at boot.
var landlock = sync.OnceValue(func() int {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(abi)
})

// rule grants access beneath path (or to the file path).
type rule struct {
	path   string
	access uint64
}

// wallRules is the whole policy of one closed call, and why:
//
//   - the checkout's work tree and git folders: read and write, no execute.
//     They are what the operation is about; nothing in them may run.
//   - git's own installation (its binary, its exec path with the git-*
//     programs it starts, the ELF loader): read and execute. Every closed
//     call runs git and only git.
//   - /usr and /lib*: read only (shared libraries, templates, zoneinfo); a
//     program there still cannot run, except as the network rules say.
//   - the config files git reads for the user (/etc/gitconfig,
//     ~/.gitconfig, ~/.config/git): read only, each by name where it is a
//     file, so the rest of HOME stays closed.
//   - /dev/null: read and write; /dev/urandom: read.
//
// A network call (push, fetch) also runs the user's own SSH and credential
// helper (a phone's push uses what the person set up; docs/gate-rules.md,
// "Programs that run for the network"), which git starts through /bin/sh
// and finds on PATH: so it may execute the
// system shell and the folders of gatehouse's PATH (never one inside the
// checkout, where the repository could have written a program), and read
// TLS certificates, name-service files, ~/.ssh, ~/.netrc,
// ~/.git-credentials and ~/.config (a helper such as gh keeps its login
// there). The repository itself names no program for it: decide.go refuses
// every key that would.
//
// fixed are the rules whose files stay put; changing are those whose files
// the user may make, replace or remove while gatehouse runs (config files,
// the worktrees folder, the network's files), which rulesetFor watches.
func (r *Repo) wallRules(in *install, s sub) (fixed, changing []rule) {
	home := r.home
	if home == "" {
		home = os.Getenv("HOME")
	}
	fixed = []rule{
		{r.workTree, fsWrite}, {r.gitDir, fsWrite}, {r.commonDir, fsWrite},
		{r.git, fsExec}, {in.execPath, fsExec}, {in.loader, fsExec},
		{"/usr", fsRead}, {"/lib", fsRead}, {"/lib64", fsRead}, {"/lib32", fsRead}, {"/libx32", fsRead},
		{"/etc/ld.so.cache", fsRead},
		{"/etc/passwd", fsRead}, {"/etc/group", fsRead}, {"/etc/nsswitch.conf", fsRead}, {"/etc/localtime", fsRead},
		{"/dev/null", fsRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE},
		{"/dev/urandom", fsRead},
	}
	files, xdgGit := r.userConfigPlaces()
	for _, f := range files {
		changing = append(changing, rule{f, fsRead})
	}
	if xdgGit != "" {
		changing = append(changing, rule{xdgGit, fsRead}) // the global attributes and ignore files too
	}
	if s.monitor != nil {
		// The status monitor (fsmonitor.go): its hook, gatehouse's own
		// program, by its exact path, and the private folder of the index
		// copy git writes.
		changing = append(changing, rule{s.monitor.hook, fsExec}, rule{s.monitor.dir, fsWrite})
	}
	if s.name == subWorktree.name && r.workTree != "" {
		// git worktree add and remove write the new worktree, which
		// gatehouse (not the device) places beside the checkout: see
		// CreateWorktree.
		changing = append(changing, rule{filepath.Join(filepath.Dir(r.workTree), filepath.Base(r.workTree)+".worktrees"), fsWrite})
	}
	if !s.network {
		return fixed, changing
	}
	changing = append(changing, rule{"/bin/sh", fsExec}, rule{"/etc/ssl", fsRead}, rule{"/etc/pki", fsRead},
		rule{"/etc/ca-certificates", fsRead}, rule{"/etc/ssh", fsRead}, rule{"/etc/resolv.conf", fsRead},
		rule{"/etc/hosts", fsRead}, rule{"/etc/host.conf", fsRead}, rule{"/etc/services", fsRead}, rule{"/etc/gai.conf", fsRead})
	if home != "" {
		for _, p := range []string{".ssh", ".netrc", ".git-credentials", ".config"} {
			changing = append(changing, rule{filepath.Join(home, p), fsRead})
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(dir) && !r.holds(dir) {
			changing = append(changing, rule{dir, fsExec})
		}
	}
	return fixed, changing
}

// ruleset builds the Landlock ruleset of one closed call and returns its
// descriptor. A path that does not exist on this system is left out.
func ruleset(abi int, rules []rule, s sub) (int, error) {
	attr := rulesetAttr{fs: handledFS(abi)}
	size := unsafe.Sizeof(attr.fs)
	if abi >= 4 {
		// No TCP for a call that needs no network: nothing a repository
		// names can make status or commit connect anywhere.
		if !s.network {
			attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
		size += unsafe.Sizeof(attr.net)
	}
	if abi >= 6 {
		// No signal to, and no abstract socket of, any process outside
		// the child's own domain (gatehouse included).
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size += unsafe.Sizeof(attr.scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	for _, ru := range rules {
		if err := addRule(int(fd), ru, attr.fs); err != nil {
			unix.Close(int(fd))
			return -1, err
		}
	}
	return int(fd), nil
}

// startInWall starts cmd on the Repo's launcher for calls like s: a
// thread that carries the call's Landlock domain, made once and reused
// while every file its rules name is still the same file. Landlock rules
// hold files, not names, so a ~/.gitconfig made since (git would die
// unable to read it), a changed include or a new worktrees folder needs a
// new domain, hence a new launcher. Reusing the thread saves making and
// discarding one per call (about 70 µs here). One launcher starts one
// child at a time, so the lock is held for the start only.
func (r *Repo) startInWall(abi int, in *install, s sub, cmd *exec.Cmd, limit uint64, traced bool) error {
	fixed, changing := r.wallRules(in, s)
	kind := fmt.Sprintf("network=%t worktree=%t monitor=%t", s.network, s.name == subWorktree.name, s.monitor != nil)
	r.wall.rulesetMu.Lock()
	defer r.wall.rulesetMu.Unlock()
	c := r.wall.rulesets
	if c == nil {
		c = &rulesetCache{byKind: map[string]cachedRuleset{}}
		r.wall.rulesets = c
		// The launchers end with the Repo: their threads are discarded.
		runtime.AddCleanup(r, func(c *rulesetCache) {
			for _, got := range c.byKind {
				close(got.starts)
			}
		}, c)
	}
	cfg := fingerprint(changing[:r.configRuleCount()])
	if c.userFP != cfg+fingerprint(readRules(c.userFiles)) {
		c.userFiles = r.userFiles()
		c.userFP = cfg + fingerprint(readRules(c.userFiles))
	}
	changing = append(changing, readRules(c.userFiles)...)
	fp := fingerprint(changing)
	got, ok := c.byKind[kind]
	if !ok || got.fingerprint != fp {
		starts, err := newLauncher(abi, append(fixed, changing...), s, traced)
		if err != nil {
			return err
		}
		if ok {
			close(got.starts)
		}
		got = cachedRuleset{fingerprint: fp, starts: starts}
		c.byKind[kind] = got
	}
	done := make(chan error, 1)
	got.starts <- launch{cmd: cmd, limit: limit, done: done}
	return <-done
}

// newLauncher builds the ruleset and starts a launcher that carries it.
func newLauncher(abi int, rules []rule, s sub, traced bool) (chan launch, error) {
	fd, err := ruleset(abi, rules, s)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd) // the domain outlives the descriptor
	starts := make(chan launch)
	ready := make(chan error, 1)
	go launcher(fd, traced, starts, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return starts, nil
}

// launcher runs on a thread it locks and never unlocks: once restricted,
// the thread is the domain's, and the Go runtime discards it when the
// goroutine ends (starts closed), so gatehouse itself is never confined.
func launcher(fd int, traced bool, starts <-chan launch, ready chan<- error) {
	runtime.LockOSThread()
	err := restrict(fd)
	ready <- err
	if err != nil {
		return
	}
	for l := range starts {
		l.done <- startBounded(l.cmd, l.limit, traced)
	}
}

// restrict puts the calling thread, and every child it starts, inside the
// ruleset's domain.
func restrict(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// configRuleCount is how many of wallRules' changing rules are the
// system and global config files (they come first).
func (r *Repo) configRuleCount() int {
	if r.home == "" && os.Getenv("HOME") == "" {
		return 1
	}
	return 3
}

func readRules(paths []string) []rule {
	rules := make([]rule, 0, len(paths))
	for _, p := range paths {
		rules = append(rules, rule{p, fsRead})
	}
	return rules
}

// userFiles asks git which files the user's own config (system and
// global, never the repository's) names for git to read: included config
// files, and the global excludes and attributes files. A closed git dies
// on an include it cannot read. The user's config is theirs (doc.go's
// known limits); the repository's own include.* is refused by the gates.
// The query names no repository, so an includeIf that only matches inside
// a checkout is followed no further than its own path.
func (r *Repo) userFiles() []string {
	q := &Repo{git: r.git, home: r.home, workTree: "/", gitDir: "/nonexistent", commonDir: "/nonexistent"}
	res, err := q.run(context.Background(), trust.Desktop(), openDecision, call{
		sub:    sub{name: "config", readOnly: true, timeout: 10 * time.Second, maxOut: 256 << 10},
		opts:   []string{"--includes", "--show-origin", "--null", "--type=path", "--get-regexp", `^(include\.path|includeif\..*\.path|core\.excludesfile|core\.attributesfile)$`},
		okExit: []int{1},
	})
	if err != nil {
		return nil
	}
	var files []string
	fields := strings.Split(string(res.stdout), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin, ok := strings.CutPrefix(fields[i], "file:")
		_, value, _ := strings.Cut(fields[i+1], "\n")
		if !ok || value == "" {
			continue
		}
		files = append(files, origin)
		if !filepath.IsAbs(value) {
			value = filepath.Join(filepath.Dir(origin), value)
		}
		files = append(files, value)
	}
	return files
}

// fingerprint names the file each rule's path leads to now.
func fingerprint(rules []rule) string {
	var b strings.Builder
	for _, ru := range rules {
		var st unix.Stat_t
		if ru.path == "" || unix.Stat(ru.path, &st) != nil {
			b.WriteString("-;")
			continue
		}
		fmt.Fprintf(&b, "%d:%d;", st.Dev, st.Ino)
	}
	return b.String()
}

// addRule adds one path rule; a missing path is skipped.
func addRule(fd int, ru rule, handled uint64) error {
	if ru.path == "" {
		return nil
	}
	pfd, err := unix.Open(ru.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock rule %s: %w", ru.path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("landlock rule %s: %w", ru.path, err)
	}
	access := ru.access & handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFileOnly
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock rule %s: %w", ru.path, errno)
	}
	return nil
}

// install is what the wall needs to know of one git binary.
type install struct {
	execPath string // git --exec-path: the git-* programs git starts
	loader   string // the ELF interpreter the kernel opens to run git
}

// installs caches install per git binary: asked once each.
var installs sync.Map // git path → func() (*install, error)

func installOf(git string) (*install, error) {
	f, _ := installs.LoadOrStore(git, sync.OnceValues(func() (*install, error) {
		r := &Repo{git: git, workTree: "/", gitDir: "/nonexistent", commonDir: "/nonexistent"}
		res, err := r.run(context.Background(), trust.Desktop(), openDecision,
			call{sub: sub{name: "--exec-path", readOnly: true, timeout: 10 * time.Second, maxOut: 4 << 10}})
		if err != nil {
			return nil, err
		}
		in := &install{execPath: strings.TrimSpace(string(res.stdout))}
		if e, err := elf.Open(git); err == nil {
			for _, p := range e.Progs {
				if p.Type == elf.PT_INTERP {
					buf := make([]byte, p.Filesz)
					if _, err := p.ReadAt(buf, 0); err == nil {
						in.loader = strings.TrimRight(string(buf), "\x00")
					}
				}
			}
			e.Close()
		}
		return in, nil
	}))
	return f.(func() (*install, error))()
}

// start starts cmd; for a closed trust, inside the kernel wall. The wall is
// put up on a launcher thread that is never given back to the Go runtime
// (no UnlockOSThread: the runtime ends the thread with the goroutine), so
// gatehouse itself stays unconfined while the child, forked from that
// thread, inherits the Landlock domain (startInWall).
//
// The memory bound is made atomic with exec: the child is started traced
// (PTRACE_TRACEME), so it stops at its first instruction of git; the bound
// is set with prlimit while it is stopped, and only then does it run.
// Where ptrace is refused (Yama ptrace_scope 3), the bound is set right
// after the start instead: for those few microseconds git runs unbounded,
// far too short to read a hostile object.
func (r *Repo) start(cmd *exec.Cmd, t trust.Trust, s sub) error {
	if !t.Closed() || r.wall.offForTest {
		return cmd.Start()
	}
	st := wallState(r.git, r.wall.proofs)
	if st.broken != nil {
		return st.broken
	}
	limit, traced := r.wall.limit(), st.ptrace && !r.wall.untracedForTest
	if st.abi > 0 && !r.wall.landlockOffForTest && !kernelWallOffForTest.Load() {
		in, err := installOf(r.git)
		if err != nil {
			return err
		}
		return r.startInWall(st.abi, in, s, cmd, limit, traced)
	}
	return oneShot(cmd, -1, limit, traced)
}

// oneShot starts cmd from a thread of its own, inside the ruleset fd when
// it is not -1, and lets the thread be discarded: for the self-test, and
// for the memory bound alone where there is no Landlock.
func oneShot(cmd *exec.Cmd, fd int, limit uint64, traced bool) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see launcher
		if fd >= 0 {
			if err := restrict(fd); err != nil {
				done <- err
				return
			}
		}
		done <- startBounded(cmd, limit, traced)
	}()
	return <-done
}

// startBounded starts cmd from the calling (locked) thread with the memory
// bound: traced, so the bound is set at the exec stop (see start).
func startBounded(cmd *exec.Cmd, limit uint64, traced bool) error {
	cmd.SysProcAttr.Ptrace = traced
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := bound(cmd.Process.Pid, limit, traced); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	return nil
}

// bound sets RLIMIT_AS on the child; traced, it first waits for the stop
// at exec and lets the child go after.
func bound(pid int, limit uint64, traced bool) error {
	if traced {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
			return fmt.Errorf("wait for exec stop: %w", err)
		}
		if !ws.Stopped() {
			return fmt.Errorf("git ended before its memory bound was set (%v)", ws)
		}
	}
	lim := unix.Rlimit{Cur: limit, Max: limit}
	err := unix.Prlimit(pid, unix.RLIMIT_AS, &lim, nil)
	if traced {
		if derr := unix.PtraceDetach(pid); err == nil && derr != nil {
			err = derr
		}
	}
	if err != nil {
		return fmt.Errorf("memory bound: %w", err)
	}
	return nil
}

// state is what the once-only self-test found.
type state struct {
	abi    int   // Landlock ABI in force, 0 when missing
	ptrace bool  // the memory bound can be set at the exec stop
	broken error // non-nil: every closed call fails with it
	note   string
}

var (
	selfTestOnce sync.Once
	selfTested   state
)

// wallState runs the self-test once (the first closed call, or doctor) and
// returns what it found; with proofs, a record of this kernel, boot and
// binaries passing it stands for the test (keptWallState).
func wallState(git string, proofs WallProofs) state {
	selfTestOnce.Do(func() { selfTested = keptWallState(git, proofs, selfTest) })
	return selfTested
}

// selfTest proves the wall on this kernel before the first closed call
// relies on it: git confined to one folder must be able to make a
// repository there (the rules are enough for git) and must fail to make
// one next to it (the kernel enforces them). These two starts are the only
// ones outside run; they name no checkout.
func selfTest(git string) state {
	st := state{abi: landlock(), ptrace: ptraceWorks(git)}
	if st.abi == 0 {
		st.note = "missing (this kernel has no Landlock, or it is switched off)"
		return st
	}
	if err := probe(git, st); err != nil {
		st.broken = fmt.Errorf("%w: %v", ErrWallBroken, err)
		st.note = "not enforced: " + err.Error()
	}
	return st
}

// probe is the self-test's two confined runs of git init.
func probe(git string, st state) error {
	tmp, err := os.MkdirTemp("", "gatehouse-wall-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	inside, outside := filepath.Join(tmp, "inside"), filepath.Join(tmp, "outside")
	for _, d := range []string{inside, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if inside, err = filepath.EvalSymlinks(inside); err != nil {
		return err
	}
	r := &Repo{git: git, workTree: inside, gitDir: filepath.Join(inside, ".git"), commonDir: filepath.Join(inside, ".git")}
	in, err := installOf(git)
	if err != nil {
		return err
	}
	initIn := func(dir string) error {
		fixed, changing := r.wallRules(in, sub{name: "init"})
		fd, err := ruleset(st.abi, append(fixed, changing...), sub{name: "init"})
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		cmd := exec.Command(git, "init", "-q", dir)
		cmd.Env = []string{"HOME=" + inside, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		if err := oneShot(cmd, fd, DefaultMemoryLimitMiB<<20, st.ptrace); err != nil {
			return err
		}
		return cmd.Wait()
	}
	if err := initIn(filepath.Join(inside, "probe")); err != nil {
		return fmt.Errorf("git cannot run inside the wall: %w", err)
	}
	escaped := filepath.Join(outside, "probe")
	if err := initIn(escaped); err == nil {
		return errors.New("a confined git wrote outside its folder")
	}
	if _, err := os.Lstat(escaped); err == nil {
		return errors.New("a confined git made a folder outside its own")
	}
	return nil
}

// ptraceWorks reports whether a child may be started traced here (Yama's
// ptrace_scope 3 forbids even PTRACE_TRACEME).
func ptraceWorks(git string) bool {
	cmd := exec.Command(git, "--version")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if err := oneShot(cmd, -1, DefaultMemoryLimitMiB<<20, true); err != nil {
		return false
	}
	return cmd.Wait() == nil
}

// Walls runs the self-test (once per process) with the git binary named
// ("" means git on PATH) and reports which walls are in force, for
// gatehouse doctor.
func Walls(git string, opts Options) WallReport {
	path, err := gitBinary(Options{Git: git})
	if err != nil {
		return WallReport{Landlock: "unknown (git not found)", Memory: memoryReport(opts, false)}
	}
	st := wallState(path, nil) // doctor proves the kernel itself, whatever is kept
	rep := WallReport{Landlock: st.note, Enforced: st.abi > 0 && st.broken == nil, Broken: st.broken != nil, Memory: memoryReport(opts, st.ptrace)}
	if rep.Enforced {
		rep.Landlock = fmt.Sprintf("ABI %d (closed git children confined to their checkout)", st.abi)
	}
	return rep
}

func memoryReport(opts Options, atomic bool) string {
	how := "set at exec"
	if !atomic {
		how = "set right after start: ptrace is refused here"
	}
	return fmt.Sprintf("%s address space per closed git child (%s)", mib(memoryLimit(opts)), how)
}

// startTool starts a tool that runs git itself (gh) for a closed call
// inside the same walls as a closed git: the kernel wall, with the rules of
// a network call in this checkout (r nil: outside any checkout) plus the
// tool's own binary, and the memory bound, at least toolMemoryFloor. Its git
// children inherit both. Where Landlock is missing, the memory bound alone
// holds, as for git; the gate's forced options reach the tool's git through
// GIT_CONFIG_COUNT (ghEnv).
func startTool(cmd *exec.Cmd, r *Repo, t trust.Trust, tool string, writable []string) error {
	if !t.Closed() || r != nil && r.wall.offForTest {
		return cmd.Start()
	}
	git := ""
	w := &wall{}
	if r != nil {
		git, w = r.git, &r.wall
	} else if g, err := gitBinary(Options{}); err == nil {
		git = g
	}
	st := wallState(git, w.proofs)
	if st.broken != nil {
		return st.broken
	}
	limit := max(w.limit(), toolMemoryFloor)
	traced := st.ptrace && !w.untracedForTest
	if st.abi == 0 || w.landlockOffForTest || kernelWallOffForTest.Load() {
		return oneShot(cmd, -1, limit, traced)
	}
	in, err := installOf(git)
	if err != nil {
		return err
	}
	rules, err := toolRules(r, in, git, tool, writable)
	if err != nil {
		return err
	}
	fd, err := ruleset(st.abi, rules, subGH)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return oneShot(cmd, fd, limit, traced)
}

// subGH describes a gh run to the wall: it reaches the network (GitHub's
// API, and the user's own credentials for it), as a push does.
var subGH = sub{name: "gh", network: true}

// toolRules are a network call's rules in the checkout (or, outside one,
// only those of git's installation and the user's files), plus the tool's
// binary and its ELF loader (read and execute), the folders the call
// writes in outside any checkout (a clone's), and the tool's own
// configuration folder when the environment moves it out of ~/.config.
func toolRules(r *Repo, in *install, git, tool string, writable []string) ([]rule, error) {
	path, err := exec.LookPath(tool)
	if err != nil {
		return nil, err
	}
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return nil, err
	}
	q := r
	if q == nil {
		q = &Repo{git: git} // no checkout folders: nothing to read or write but the user's own files
	}
	fixed, changing := q.wallRules(in, subGH)
	if r == nil {
		fixed = slices.DeleteFunc(fixed, func(ru rule) bool { return ru.path == "" })
	}
	rules := append(fixed, changing...)
	rules = append(rules, rule{path, fsExec})
	if e, err := elf.Open(path); err == nil {
		for _, p := range e.Progs {
			if p.Type == elf.PT_INTERP {
				buf := make([]byte, p.Filesz)
				if _, err := p.ReadAt(buf, 0); err == nil {
					rules = append(rules, rule{strings.TrimRight(string(buf), "\x00"), fsExec})
				}
			}
		}
		e.Close()
	}
	for _, dir := range writable {
		rules = append(rules, rule{dir, fsWrite})
	}
	// Where the environment gh keeps (ghKeepEnv) moves its configuration
	// or its certificates out of the places read above.
	for _, v := range []string{"GH_CONFIG_DIR", "XDG_CONFIG_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR"} {
		if p := os.Getenv(v); filepath.IsAbs(p) && (r == nil || !r.holds(p)) {
			rules = append(rules, rule{p, fsRead})
		}
	}
	return rules, nil
}

// wallOff reports a test's switch that starts closed children as the
// desktop's are.
func (r *Repo) wallOff() bool { return r.wall.offForTest }
