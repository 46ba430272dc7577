package gate

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"github.com/gatehouse/gatehouse/trust"
)

// The list cache keeps two of git's answers between calls while a file
// watcher covers the checkout: the untracked files (git ls-files --others
// --exclude-standard, for the diff's previews) and the ignored ones (the
// same with --ignored --directory, for searches). Neither is ever computed
// here: each is git's own answer, reused only while nothing it depends on
// can have changed.
//
// What each list depends on, and who says it changed:
//
//   - the work tree's shape (a file or folder created, removed or renamed,
//     a folder's mode) and every .gitignore in it: the watcher, which calls
//     Watch.Changed for each such event (content writes to other files do
//     not change either list);
//   - the index (a file added or removed from it), .git/info/exclude, the
//     repository's and the user's config (core.excludesFile, and the
//     includes that could name it) and the excludes file itself: their
//     identity (device, inode, size, times), taken before git is asked and
//     compared at every use. A file changed in the same clock tick as that
//     identity was taken is not trusted (racyWindow, as layout.go): the answer
//     is used once and not kept.
//
// A watcher's events arrive late; Watch.sync waits until the watcher has
// handled every event the kernel queued before the call, so a change made
// before the call has always invalidated the cache by the time it is read.
// A change racing git's answer is caught by the generation counter: it is
// read before git is asked, and the answer is stored only while unchanged
// (and an event handled later bumps it, so a stored answer dies then).
//
// Without a watcher (none subscribed, a watcher that could not cover every
// folder, one that stopped), after an overflow or error, or when the sync
// fails, every call asks git, as before the cache existed.

// maxCachedList bounds the memory one cached list holds (names plus their
// map or slice overhead); a longer list is used once and not kept.
const maxCachedList = 4 << 20

// listEntryOverhead is what one name costs beyond its bytes: a string
// header, and a map slot for the ignored set.
const listEntryOverhead = 48

// Watch is a file watcher's hold on a checkout's list cache: while it is
// open the cache may keep git's answers, and the watcher says when they may
// be stale. A Watch is what the serve's watcher (rpc/events.go) opens once
// it watches every folder of the work tree.
type Watch struct {
	r    *Repo
	gen  atomic.Uint64
	sync func(ctx context.Context) bool
	mon  *monitor // the status monitor (fsmonitor.go); nil without Options.Monitor
}

// Watch opens the list cache for a watcher that now watches every folder of
// the work tree. sync must return once the watcher has handled every event
// queued before it was called (false if it could not tell). The cache keeps
// nothing from before this call.
func (r *Repo) Watch(sync func(ctx context.Context) bool) *Watch {
	w := &Watch{r: r, sync: sync, mon: r.newMonitor()}
	r.lists.mu.Lock()
	defer r.lists.mu.Unlock()
	r.lists.watch = w
	r.lists.entries = map[listKey]*listEntry{}
	return w
}

// Changed says the work tree's shape or a .gitignore changed, or that the
// watcher may have missed something (an overflow, an error): every cached
// answer is dropped.
func (w *Watch) Changed() { w.gen.Add(1) }

// Close says the watcher stopped or no longer covers the checkout: calls
// ask git again every time.
func (w *Watch) Close() {
	w.gen.Add(1)
	w.r.lists.mu.Lock()
	defer w.r.lists.mu.Unlock()
	if w.r.lists.watch == w {
		w.r.lists.watch = nil
		w.r.lists.entries = nil
	}
	if w.mon != nil {
		w.mon.close()
	}
}

type listKind int

const (
	listIgnored listKind = iota
	listUntracked
)

// listKey: closed and open calls run git with different forced options,
// so each keeps its own answer.
type listKey struct {
	kind   listKind
	closed bool
}

type listEntry struct {
	gen   uint64
	fp    string // the sources' identity when git was asked
	value any
}

type listCache struct {
	mu      sync.Mutex
	watch   *Watch
	entries map[listKey]*listEntry
	// sources are the config files and excludes files git named when
	// last asked (listSources), whose identity every use compares;
	// sourcesFP is the identity of all sources then.
	sources   []string
	sourcesFP string
}

// cachedList returns git's answer for key: the cached one while valid,
// else ask's (stored when nothing changed while git answered). size is the
// memory the answer holds, for maxCachedList.
func (r *Repo) cachedList(ctx context.Context, t trust.Trust, d *decision, kind listKind,
	ask func() (any, int, error)) (any, error) {
	r.lists.mu.Lock()
	w := r.lists.watch
	r.lists.mu.Unlock()
	if w == nil || !w.sync(ctx) {
		v, _, err := ask()
		return v, err
	}
	key := listKey{kind, t.Closed()}
	fp, racy := r.listFingerprint(ctx, t, d)
	gen := w.gen.Load()
	r.lists.mu.Lock()
	e := r.lists.entries[key]
	r.lists.mu.Unlock()
	if e != nil && e.gen == gen && e.fp == fp && !racy {
		return e.value, nil
	}
	v, size, err := ask()
	if err != nil || racy || size > maxCachedList {
		return v, err
	}
	r.lists.mu.Lock()
	defer r.lists.mu.Unlock()
	if r.lists.watch == w && w.gen.Load() == gen {
		r.lists.entries[key] = &listEntry{gen: gen, fp: fp, value: v}
	}
	return v, nil
}

// listFingerprint names the identity of every file outside the work tree
// the lists depend on; racy says one of them changed within racyWindow.
func (r *Repo) listFingerprint(ctx context.Context, t trust.Trust, d *decision) (fp string, racy bool) {
	r.lists.mu.Lock()
	sources, sourcesFP := r.lists.sources, r.lists.sourcesFP
	r.lists.mu.Unlock()
	fixed := r.fixedSources()
	fp, newest := listIdentity(append(fixed, sources...))
	if sources == nil || fp != sourcesFP {
		// The first use, or a file changed since git named the sources:
		// ask again which files the config names (core.excludesFile,
		// includes).
		sources = r.listSources(ctx, t, d)
		fp, newest = listIdentity(append(fixed, sources...))
		r.lists.mu.Lock()
		r.lists.sources, r.lists.sourcesFP = sources, fp
		r.lists.mu.Unlock()
	}
	return fp, time.Since(newest) < racyWindow
}

// fixedSources are the files git reads for the lists wherever the config
// points: the index, info/exclude, the repository's config, and the user's
// config files and global excludes file where git looks for them.
func (r *Repo) fixedSources() []string {
	user, xdgGit := r.userConfigPlaces()
	files := []string{
		filepath.Join(r.gitDir, "index"),
		filepath.Join(r.commonDir, "info", "exclude"),
		filepath.Join(r.commonDir, "config"),
		filepath.Join(r.gitDir, "config.worktree"),
	}
	if xdgGit != "" {
		files = append(files, filepath.Join(xdgGit, "ignore"), filepath.Join(xdgGit, "attributes"))
	}
	files = append(files, filepath.Join(r.commonDir, "info", "attributes"))
	return append(files, user...)
}

// subConfigSources asks which files the config names for the lists.
var subConfigSources = sub{name: "config", readOnly: true, timeout: 10 * time.Second, maxOut: 256 << 10}

// listSources asks git which config files name an excludes file or an
// include, and the files they name: a change to any changes the
// fingerprint. On failure it returns an empty list, and the fixed sources
// alone decide (a new include would then go unnoticed only until the
// fixed config files change, as they must to name it).
func (r *Repo) listSources(ctx context.Context, t trust.Trust, d *decision) []string {
	res, err := r.run(ctx, t, d, call{sub: subConfigSources,
		opts:   []string{"--includes", "--show-origin", "--null", "--type=path", "--get-regexp", `^(include\.path|includeif\..*\.path|core\.excludesfile|core\.attributesfile)$`},
		okExit: []int{1}})
	files := []string{}
	if err != nil {
		return files
	}
	fields := strings.Split(string(res.stdout), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin, ok := strings.CutPrefix(fields[i], "file:")
		_, value, _ := strings.Cut(fields[i+1], "\n")
		if !ok {
			continue
		}
		if !filepath.IsAbs(origin) {
			origin = filepath.Join(r.workTree, origin)
		}
		files = append(files, origin)
		if value == "" {
			continue
		}
		if !filepath.IsAbs(value) {
			value = filepath.Join(filepath.Dir(origin), value)
		}
		files = append(files, value)
	}
	return files
}

// listIdentity is the identity of each file (missing ones too) and the
// newest of their change times.
func listIdentity(paths []string) (string, time.Time) {
	var b strings.Builder
	var newest int64
	for _, p := range paths {
		id, err := fileid.Lstat(p)
		if err != nil {
			b.WriteString("-;")
			continue
		}
		fmt.Fprintf(&b, "%d:%d:%d:%d:%d;", id.Dev, id.Ino, id.Size, id.Mtime, id.Ctime)
		newest = max(newest, id.Mtime, id.Ctime)
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			// git reads what a link names (a dotfiles manager's
			// ~/.config/git/ignore): that file's identity too.
			if t := fileid.FromStat(&st); t != id {
				fmt.Fprintf(&b, ">%d:%d:%d:%d:%d;", t.Dev, t.Ino, t.Size, t.Mtime, t.Ctime)
				newest = max(newest, t.Mtime, t.Ctime)
			}
		}
	}
	return b.String(), time.Unix(0, newest)
}
