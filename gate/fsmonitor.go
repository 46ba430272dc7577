package gate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"github.com/gatehouse/gatehouse/trust"
)

// The status monitor makes git status cheap while the serve's watcher
// covers the checkout. git can be told which files changed since its last
// run (its fsmonitor hook, protocol version 2), and keeps the untracked
// files of each folder in the index (the untracked cache); with both, a
// status looks only at what changed. Neither is anything the repository
// names:
//
//   - The hook is gatehouse's own program (Options.Monitor, the serve's own
//     binary), forced with -c core.fsmonitor= over whatever the checkout's
//     config says, allowed by the kernel wall by its exact path. It runs
//     no logic of its own: the serve writes the whole answer into a file
//     of its private folder before git starts, and the hook prints it
//     (MonitorHook). The answer is the watcher's list of paths changed
//     since the token git passes, or "/" (everything may have changed)
//     when the token is not exactly the one the serve issued last.
//   - The untracked cache and the hook's token live in gatehouse's own
//     copy of the index (GIT_INDEX_FILE in the private folder), made
//     afresh whenever the user's index changes: the user's index is never
//     written, as a closed status never writes it.
//
// What may make git's answer differ from a plain status is the cache being
// wrong, so on any doubt git is told "/" (a full look, the untracked cache
// then checked by each folder's stat data, as git does without a monitor)
// or given a fresh copy of the index (no cache at all):
//
//   - a folder made, removed, renamed or changed mode, a .gitignore changed,
//     the watcher overflowing or failing (Watch.Doubt): "/" once;
//   - more changed paths than maxMonitorPaths: "/";
//   - the index, info/exclude, a config file or an excludes file changed
//     (their identity, as the list cache checks it), changed within the
//     racy window, or the wall clock jumped against the monotonic one:
//     a fresh copy;
//   - a token git passes that the serve did not issue last (a new copy, a
//     run that did not write the copy, another process): "/";
//   - a new watcher (a restart of the serve or of its watcher): a new
//     private folder and a fresh copy.
//
// Without a watcher, without Options.Monitor, for the desktop's own calls,
// with a split index, or when the program's path would make git start a
// shell, status runs as before.

// maxMonitorPaths bounds the paths one answer names; past it git looks at
// everything ("/"), which is then the cheaper way.
const maxMonitorPaths = 2000

// maxMonitorAnswer bounds the answer file the hook reads.
const maxMonitorAnswer = 8 << 20

// monitorAnswerEnv names the answer file in the hook's environment.
const monitorAnswerEnv = "GATEHOUSE_FSMONITOR_ANSWER"

// monitorClockSkew is how far the wall clock may move against the monotonic
// clock between two statuses before the copy is made afresh: git's
// untracked cache compares folders' times.
const monitorClockSkew = time.Second

// maxKeptStatus bounds the answer kept between calls.
const maxKeptStatus = 4 << 20

// keptStatus is git's last answer and what it depended on: the watcher's
// events of the work tree (seq), the git folder's generation (its shape
// cover, shapewatch.go: refs, HEAD, packed-refs, the index and everything
// else there), and the identity of the index, the excludes and config
// files (fp). While all three are unchanged, git would print the same, and
// the serve answers without running it.
type keptStatus struct {
	out    []byte
	seq    uint64
	gitGen int
	fp     string
}

// monitor is one watcher's status monitor.
type monitor struct {
	mu   sync.Mutex // one monitored status at a time: the copy and its token
	dir  string     // private folder: the index copy and the answer
	hook string     // the hook program

	// Guarded by mu, except what the watcher's calls touch (under evMu).
	issued  string    // the token the copy holds, "" when unknown
	srcFP   string    // the sources' identity when the copy was made
	lastRun time.Time // wall and monotonic clock of the last run
	// lastFull is when git last looked at everything; past fullLook it
	// does again, and no answer older than that is given again: the bound
	// on a change no event reports (a write through a hard link from
	// outside the checkout, a shared mapping, a mount inside the tree).
	lastFull time.Time
	fullLook time.Duration

	evMu    sync.Mutex
	seq     uint64                // events seen
	changed map[string]pathEvents // work-tree path (slash-separated) → its events since the copy's token
	// dirty are the paths the last git run found changed in the work
	// tree or untracked, by the token the copy holds: git looks at them
	// again at every run whatever it is told (their entries are not
	// marked valid), and an untracked file's content is not in the
	// untracked cache, so a content write to one of them need not be
	// named, and the copy need not be written for it.
	dirty  map[string]bool
	doubt  uint64      // seq of the last doubt; 0 when none
	epoch  string      // names this monitor's tokens
	kept   *keptStatus // the last answer, while nothing it depends on changed
	fresh  bool        // the next status starts from a fresh copy (Refresh)
	busy   bool        // a status runs with it
	closed bool        // its watcher let go: the folder goes when unused
}

// newMonitor is the status monitor of a watcher now covering the checkout;
// nil without Options.Monitor, when the program is inside (or above) the
// checkout's folders or inside any git work tree at all, where a
// repository can write (a ./gatehouse built in a checkout and ignored
// there is replaced by any branch that tracks one, and a served worktree
// or another served checkout of it makes that a phone's switch away), or
// when the work tree is on a file system whose changes may not all reach
// this kernel's watcher (a network or shared one).
func (r *Repo) newMonitor() *monitor {
	if r.monitorHook == "" || r.holds(r.monitorHook) || inWorkTree(r.monitorHook) || !localFileSystem(r.workTree) {
		return nil
	}
	m := newMonitor(r.monitorHook)
	if m != nil {
		m.fullLook = r.monitorFullLook
		if m.fullLook <= 0 {
			m.fullLook = defaultMonitorFullLook
		}
	}
	return m
}

// defaultMonitorFullLook is Options.MonitorFullLook's default.
const defaultMonitorFullLook = 30 * time.Second

// newMonitor makes the private folder; nil when it cannot, or when the hook
// cannot be named to git without a shell.
func newMonitor(hook string) *monitor {
	if hook == "" || !filepath.IsAbs(hook) || strings.ContainsAny(hook, shellSpecials) {
		return nil
	}
	dir, err := os.MkdirTemp("", "gatehouse-status-")
	if err != nil {
		return nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &monitor{dir: dir, hook: hook, changed: map[string]pathEvents{}, doubt: 1, seq: 1, epoch: hex.EncodeToString(b[:])}
}

// shellSpecials are the bytes that make git run a hook through /bin/sh
// (run-command.c, prepare_shell_cmd): a hook path holding one is not used.
const shellSpecials = "|&;<>()$`\\\"' \t\n*?[#~=%"

// close removes the private folder, or has the status running with it do
// so when it ends (close runs on the watcher's loop, which that status may
// be waiting for).
func (m *monitor) close() {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	m.closed = true
	if !m.busy {
		_ = os.RemoveAll(m.dir)
	}
}

// use marks the monitor in use by one status; false once closed. done ends
// the use.
func (m *monitor) use() bool {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	m.busy = !m.closed
	return m.busy
}

func (m *monitor) done() {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	m.busy = false
	if m.closed {
		_ = os.RemoveAll(m.dir)
	}
}

// index is gatehouse's own index copy; answer the file the hook prints.
func (m *monitor) index() string  { return filepath.Join(m.dir, "index") }
func (m *monitor) answer() string { return filepath.Join(m.dir, "answer") }

// touched records a change at rel, a slash-separated work-tree path;
// content says it was only written or changed mode.
func (m *monitor) touched(rel string, content bool) {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	m.seq++
	if len(m.changed) >= maxMonitorPaths {
		m.doubt = m.seq
		return
	}
	e := m.changed[rel]
	m.changed[rel] = pathEvents{seq: m.seq, shape: e.shape || !content}
}

// pathEvents are a path's events since the token the copy holds: the last
// one's seq, and whether any made, removed or renamed it (not only wrote
// it or changed its mode).
type pathEvents struct {
	seq   uint64
	shape bool
}

// doubted records a change git must be told of as "/".
func (m *monitor) doubted() {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	m.seq++
	m.doubt = m.seq
}

// Touched tells the status monitor that path (absolute, in the work tree)
// changed: a file written, made, removed or renamed. content says it was
// only written, or its mode changed.
func (w *Watch) Touched(path string, content bool) {
	if w.mon == nil {
		return
	}
	rel, err := filepath.Rel(w.r.workTree, path)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		w.mon.doubted()
		return
	}
	w.mon.touched(filepath.ToSlash(rel), content)
}

// Refresh says the index copy's file times cannot be trusted: an
// attributes file changed, so a file git called clean by its times in the
// copy may not be clean by the new rules, which git sees only where the
// user's own index (with the times it had) sends it to read the file. The
// next status starts from a fresh copy.
func (w *Watch) Refresh() {
	if w.mon != nil {
		w.mon.evMu.Lock()
		w.mon.fresh = true
		w.mon.evMu.Unlock()
		w.mon.doubted()
	}
}

// Doubt says git's untracked cache cannot be told precisely what changed (a
// folder made, removed or renamed, a .gitignore, lost events): the next
// status looks at everything.
func (w *Watch) Doubt() {
	if w.mon != nil {
		w.mon.doubted()
	}
}

// monitoredStatus runs git status with the monitor; ok false when it did
// not (the caller runs a plain status).
func (r *Repo) monitoredStatus(ctx context.Context, t trust.Trust, d *decision) (_ *result, ok bool, _ error) {
	r.lists.mu.Lock()
	w := r.lists.watch
	r.lists.mu.Unlock()
	if w == nil || w.mon == nil || !t.Closed() {
		return nil, false, nil
	}
	m := w.mon
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.use() {
		return nil, false, nil
	}
	defer m.done()
	if !w.sync(ctx) {
		return nil, false, nil
	}
	fp, racy := r.listFingerprint(ctx, t, d)
	now := time.Now()
	skew := !m.lastRun.IsZero() && absDuration(now.Sub(m.lastRun)-now.Round(0).Sub(m.lastRun.Round(0))) > monitorClockSkew
	m.lastRun = now
	m.evMu.Lock()
	fresh := m.fresh
	m.fresh = false
	m.evMu.Unlock()
	if fp != m.srcFP || racy || skew || fresh || !fileExists(m.index()) {
		if r.copyIndex(m) != nil {
			return nil, false, nil // no index yet, a split one: git's own way
		}
		m.srcFP, m.issued, m.dirty = fp, "", nil
		if racy {
			m.srcFP = "" // used once: the next call copies again
		}
	}

	gitGen, gitCovered := r.gitFolderGeneration()
	m.evMu.Lock()
	seq := m.seq
	stale := now.Sub(m.lastFull) >= m.fullLook
	// A copy without the token issued last (a fresh one) gets "/" from
	// the hook whatever the watcher saw: a full look.
	trivial := m.doubt != 0 || stale || m.issued == ""
	if k := m.kept; k != nil && gitCovered && k.gitGen == gitGen && k.seq == seq && !trivial && k.fp == fp && !racy && !skew {
		m.evMu.Unlock()
		r.statusKept.Add(1)
		return &result{stdout: k.out}, true, nil
	}
	m.kept = nil
	var paths []string
	if !trivial {
		paths = make([]string, 0, len(m.changed))
		for p, e := range m.changed {
			if e.shape || !m.dirty[p] {
				paths = append(paths, p)
			}
		}
	}
	m.evMu.Unlock()
	slices.Sort(paths)
	token := "gatehouse:" + m.epoch + ":" + strconv.FormatUint(seq, 10)
	var body strings.Builder
	body.WriteString(m.issued + "\x00" + token + "\x00")
	if trivial {
		body.WriteString("/\x00")
	}
	for _, p := range paths {
		body.WriteString(p + "\x00")
	}
	if writeFileAtomic(m.answer(), []byte(body.String())) != nil {
		return nil, false, nil
	}
	index := m.index()
	before, _ := fileid.Lstat(index)
	_ = os.Remove(index + ".lock") // a lock left by a run stopped outright; only this folder's runs take it
	s := subStatus
	s.monitor = m
	r.monitored.Add(1)
	if !trivial {
		r.monitorPrecise.Add(1)
	}
	res, err := r.run(ctx, t, d, call{sub: s,
		config: []Option{
			{"core.fsmonitor", m.hook, "the status monitor: gatehouse's own program"},
			{"core.fsmonitorHookVersion", "2", "the protocol the monitor answers"},
			{"core.untrackedCache", "true", "kept in gatehouse's own index copy"},
			{"status.showUntrackedFiles", "all", "git keeps the untracked cache for -uall only when this says all"},
			{"core.splitIndex", "false", "the copy is one file in the private folder"},
		},
		opts: statusOpts})
	if err != nil || res.truncated {
		m.issued = "" // what the copy holds is unknown
		return res, true, err
	}
	if gitCovered && !res.truncated && len(res.stdout) <= maxKeptStatus && !racy && !skew {
		m.kept = &keptStatus{out: res.stdout, seq: seq, gitGen: gitGen, fp: fp}
	}
	after, _ := fileid.Lstat(index)
	if after != before || token == m.issued {
		// git wrote the copy with the new token (or needed not to):
		// what it was told is now in the copy.
		m.issued = token
		m.evMu.Lock()
		for p, e := range m.changed {
			if e.seq <= seq {
				delete(m.changed, p)
			}
		}
		m.dirty = dirtyPaths(res.stdout)
		if m.doubt <= seq {
			m.doubt = 0
		}
		if trivial {
			m.lastFull = now
		}
		m.evMu.Unlock()
	}
	return res, true, nil
}

// dirtyPaths are the paths a status answer shows changed in the work tree
// or untracked.
func dirtyPaths(out []byte) map[string]bool {
	st := parseStatus(out)
	dirty := make(map[string]bool, len(st.Files))
	for _, f := range st.Files {
		if f.Worktree != "." {
			dirty[f.Path] = true
		}
	}
	return dirty
}

// inWorkTree says whether path lies in a git work tree: a folder above it
// holds a .git entry (folder, file or link), or cannot be read to tell.
func inWorkTree(path string) bool {
	canon, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true
	}
	for dir := filepath.Dir(canon); ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// copyIndex copies the user's index into the private folder with its own
// modification time, which git's racy-entry check compares against. A split
// index (its entries in sharedindex files beside it) is not copied: the
// copy's writes would make new shared files in the git folder.
func (r *Repo) copyIndex(m *monitor) error {
	if matches, _ := filepath.Glob(filepath.Join(r.gitDir, "sharedindex.*")); len(matches) > 0 {
		return errors.New("a split index")
	}
	src, err := os.Open(filepath.Join(r.gitDir, "index"))
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return errors.New("the index is not a regular file")
	}
	tmp, err := os.CreateTemp(m.dir, "index-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(tmp.Name(), info.ModTime(), info.ModTime())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), m.index())
	}
	return err
}

func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

// IsMonitorHook says whether this process was started by git as the
// status monitor's hook (git runs it as "PROGRAM VERSION TOKEN" with the
// answer file in its environment).
func IsMonitorHook(args []string, getenv func(string) string) bool {
	return len(args) == 2 && getenv(monitorAnswerEnv) != ""
}

// MonitorHook answers git's fsmonitor hook (protocol version 2) from the
// answer file the serve wrote: the new token, then the changed paths when
// git's token is exactly the one the serve issued last, else "/". It
// decides nothing itself. It returns the exit code.
func MonitorHook(args []string, getenv func(string) string, stdout io.Writer) int {
	if len(args) != 2 || args[0] != "2" {
		return 1 // git falls back to looking at everything
	}
	f, err := os.Open(getenv(monitorAnswerEnv))
	if err != nil {
		return 1
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMonitorAnswer+1))
	if err != nil || len(b) > maxMonitorAnswer {
		return 1
	}
	issued, rest, ok1 := strings.Cut(string(b), "\x00")
	token, paths, ok2 := strings.Cut(rest, "\x00")
	if !ok1 || !ok2 || token == "" {
		return 1
	}
	if issued == "" || args[1] != issued {
		paths = "/\x00"
	}
	if _, err := fmt.Fprintf(stdout, "%s\x00%s", token, paths); err != nil {
		return 1
	}
	return 0
}

// MonitoredStatuses counts the statuses this checkout ran with the status
// monitor, and of those the ones whose answer named the changed paths
// (the others told git "/"): for tests and benchmarks.
func (r *Repo) MonitoredStatuses() (all, precise uint64) {
	return r.monitored.Load() + r.statusKept.Load(), r.monitorPrecise.Load()
}

// KeptStatuses counts the statuses answered from the one kept, without git.
func (r *Repo) KeptStatuses() uint64 { return r.statusKept.Load() }
