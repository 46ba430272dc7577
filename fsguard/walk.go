package fsguard

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// walkLimits bound one walk of a tree.
type walkLimits struct {
	workers    int   // folders read at once
	maxEntries int64 // entries looked at in all, then stop (truncated)
	// gitNames: show entries named .git (in any spelling) to visit; they are
	// never descended into either way. Only the hazard scan asks.
	gitNames bool
	// skip: entries left out and never descended into (git's ignored
	// files, for a search that follows .gitignore).
	skip Ignored
}

// Ignored is a set of paths a search leaves out, as git ls-files --others
// --ignored --exclude-standard --directory prints them: a file by its path,
// a wholly ignored folder by its path and a trailing slash. Git decides
// what is ignored (every .gitignore, info/exclude, core.excludesFile);
// nothing here reads a pattern.
type Ignored map[string]struct{}

// has says whether the entry rel (a folder when dir) is in the set.
func (ig Ignored) has(rel string, dir bool) bool {
	if len(ig) == 0 {
		return false
	}
	if dir {
		rel += "/"
	}
	_, ok := ig[rel]
	return ok
}

// maxDepth bounds how deep a walk goes; deeper folders are skipped and the
// walk reports truncated.
const maxDepth = 128

// dirBatch is how many entries are read from a folder at a time.
const dirBatch = 1024

// visitFunc sees one folder's entries (never .git unless asked), with the
// folder open as dirfd for opening them. It returns false to stop the walk.
type visitFunc func(dirfd int, dirRel string, ents []fs.DirEntry) bool

// walk visits every folder under the root with several workers, folders in
// depth-first order. Folders are opened from the root's descriptor by the
// kernel walk (no symlink followed, nothing outside the root), and a
// symlinked folder is never entered. It reports whether it stopped early:
// the context ended, the visit said stop, or a bound was hit.
func (r *Root) walk(ctx context.Context, lim walkLimits, visit visitFunc) bool {
	w := &walkState{r: r, ctx: ctx, lim: lim, visit: visit, stack: []string{"."}}
	w.cond = sync.NewCond(&w.mu)
	n := lim.workers
	if n <= 0 {
		n = min(runtime.GOMAXPROCS(0), 4)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(w.work)
	}
	wg.Wait()
	return w.truncated.Load()
}

type walkState struct {
	r     *Root
	ctx   context.Context
	lim   walkLimits
	visit visitFunc

	mu     sync.Mutex
	cond   *sync.Cond
	stack  []string
	active int
	done   bool

	seen      atomic.Int64
	truncated atomic.Bool
}

func (w *walkState) work() {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.active > 0 && !w.done {
			w.cond.Wait()
		}
		if w.done || len(w.stack) == 0 {
			w.done = true
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		dir := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.active++
		w.mu.Unlock()

		subdirs, stop := w.one(dir)

		w.mu.Lock()
		w.stack = append(w.stack, subdirs...)
		w.active--
		if stop {
			w.done = true
		}
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

func (w *walkState) stop() bool {
	w.truncated.Store(true)
	return true
}

// one reads the folder dir, hands its entries to visit and returns its
// subfolders.
func (w *walkState) one(dir string) (subdirs []string, stop bool) {
	if w.ctx.Err() != nil {
		return nil, w.stop()
	}
	fd, err := openDirIn(w.r.fd, dir)
	if err != nil {
		return nil, false // gone, or swapped for a symlink: skip it
	}
	// The name is used only if the file system gives no entry types, for an
	// lstat that decides whether to descend; every open is by descriptor.
	f := os.NewFile(uintptr(fd), filepath.Join(w.r.canonical, dir))
	defer f.Close()
	depth := strings.Count(dir, "/") + 1
	for {
		ents, err := f.ReadDir(dirBatch)
		kept := ents[:0]
		for _, e := range ents {
			if IsGitName(e.Name()) && !w.lim.gitNames {
				continue
			}
			if w.lim.skip.has(joinRel(dir, e.Name()), e.IsDir()) {
				continue
			}
			if w.seen.Add(1) > w.lim.maxEntries {
				return subdirs, w.stop()
			}
			kept = append(kept, e)
			if e.IsDir() && !IsGitName(e.Name()) {
				if depth >= maxDepth {
					w.truncated.Store(true)
				} else {
					subdirs = append(subdirs, joinRel(dir, e.Name()))
				}
			}
		}
		if len(kept) > 0 && !w.visit(fd, dir, kept) {
			return subdirs, w.stop()
		}
		if err == io.EOF || len(ents) == 0 {
			return subdirs, false
		}
		if err != nil {
			return subdirs, false
		}
		if w.ctx.Err() != nil {
			return subdirs, w.stop()
		}
	}
}

// lstatAt stats one entry of an open folder without following it.
func lstatAt(dirfd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// Folders lists the folders under the root (never .git, never through a
// symlink), at most max of them, for a watcher. truncated says there were
// more, or that a .git name (a folder, a file, a link) lies below the root's
// own .git:
// git looks into some of those (a nested repository's, to call its folder
// one; a .GIT or git~1 on a case-sensitive system, as an ordinary folder)
// and the walk never does, so a watcher of these folders alone does not
// see every change git would.
func (r *Root) Folders(ctx context.Context, max int) (folders []string, truncated bool) {
	var mu sync.Mutex
	folders = []string{"."}
	gitNamed := false
	truncated = r.walk(ctx, walkLimits{maxEntries: maxWalkEntries, gitNames: true}, func(_ int, dir string, ents []fs.DirEntry) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range ents {
			if IsGitName(e.Name()) && (dir != "." || e.Name() != ".git") {
				gitNamed = true
			}
			if e.IsDir() && !IsGitName(e.Name()) {
				if len(folders) >= max {
					return false
				}
				folders = append(folders, joinRel(dir, e.Name()))
			}
		}
		return true
	})
	return folders, truncated || gitNamed || len(folders) >= max
}

// Names lists every entry under the root that is not a folder (files,
// symlinks, special files; never .git), at most max, for the audit of a
// plain folder. truncated says there were more.
func (r *Root) Names(ctx context.Context, max int) (names []string, truncated bool) {
	var mu sync.Mutex
	truncated = r.walk(ctx, walkLimits{maxEntries: maxHazardEntries}, func(_ int, dir string, ents []fs.DirEntry) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range ents {
			if !e.IsDir() {
				if len(names) >= max {
					return false
				}
				names = append(names, joinRel(dir, e.Name()))
			}
		}
		return true
	})
	sort.Strings(names)
	return names, truncated || len(names) >= max
}
