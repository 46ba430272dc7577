package rpc

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
)

// A watcher watches one target's folders and its git folder, and calls
// fire at most once a second after changes (the page's live updates).
//
// It also keeps the checkout's list cache (gate/listcache.go) honest: while
// it watches every folder of the work tree it holds a gate.Watch, and tells
// it of every event that can change git's lists of untracked and ignored
// files (a create, remove or rename anywhere, a folder's mode, any change to
// a .gitignore), of an overflow or error, and of its own stop. A watched
// folder renamed leaves inotify's watches under stale names (fsnotify drops
// the moved folder's own watch), so the watcher then starts afresh (a new
// inotify instance over every folder) before the cache is trusted again.
//
// sync is the cache's barrier: it makes a name in the watcher's own
// private folder (never the checkout) and waits until the loop sees it.
// inotify queues one instance's events in order and fsnotify hands them on
// in order, so every event queued before the call has been handled then.
type watcher struct {
	t        *Target
	root     string // the work tree, canonical
	gitDir   string
	fire     func()
	done     chan struct{}
	stopOnce sync.Once

	// Owned by the loop (and by startWatcher before the loop starts).
	fw         *fsnotify.Watcher
	folders    map[string]bool // work-tree folders watched, absolute
	gitWatched int             // folders of the git folder watched
	lists      *gate.Watch     // nil while the cache is not covered
	rescan     bool            // a watched folder moved, or events were lost

	shape *gate.ShapeWatch // the git folder's shape cover (watcher_gitdir.go); nil without one

	syncDir string // private folder for sync's names; "" when none
	mu      sync.Mutex
	seq     uint64
	waiting map[uint64]chan bool
	closed  bool
}

// syncWait bounds how long a call waits for the watcher to catch up before
// it asks git instead.
const syncWait = 2 * time.Second

func startWatcher(t *Target, fire func()) *watcher {
	w := &watcher{t: t, root: t.Root.Path(), fire: fire, done: make(chan struct{}),
		waiting: map[uint64]chan bool{}}
	if t.Repo != nil {
		w.gitDir = t.Repo.GitDir()
		if dir, err := os.MkdirTemp("", "gatehouse-watch-"); err == nil {
			w.syncDir = dir
		}
	}
	fw, complete := w.watchAll()
	if fw == nil {
		if w.syncDir != "" {
			_ = os.RemoveAll(w.syncDir)
		}
		return nil
	}
	w.fw = fw
	w.cover(complete)
	w.coverGitFolder()
	go w.loop()
	return w
}

// watchAll starts an inotify instance over the private folder, every
// folder of the work tree (at most maxWatchFolders) and the git folder.
// complete says every work-tree folder and the private folder are watched.
func (w *watcher) watchAll() (*fsnotify.Watcher, bool) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, false
	}
	complete := w.syncDir != "" && fw.Add(w.syncDir) == nil
	folders, truncated := w.t.Root.Folders(context.Background(), maxWatchFolders)
	complete = complete && !truncated
	w.folders = make(map[string]bool, len(folders))
	for _, f := range folders {
		p := filepath.Join(w.root, f)
		if fw.Add(p) != nil {
			complete = false
			continue
		}
		w.folders[p] = true
	}
	w.gitWatched = 0
	if w.gitDir != "" {
		_ = fw.Add(w.gitDir) // index and HEAD
	}
	return fw, complete
}

// cover opens the list cache when the watcher covers every folder, and
// closes it when it no longer does.
func (w *watcher) cover(complete bool) {
	if w.lists != nil {
		w.lists.Close()
		w.lists = nil
	}
	if complete && w.t.Repo != nil {
		w.lists = w.t.Repo.Watch(w.sync)
	}
}

// loop coalesces changes: the first schedules one call a second later, and
// changes until then ride along, so a busy checkout fires once a second.
func (w *watcher) loop() {
	tick := make(chan struct{}, 1)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		w.shut()
	}()
	for {
		select {
		case <-w.done:
			return
		case <-tick:
			timer = nil
			w.fire()
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if w.syncDir != "" && filepath.Dir(ev.Name) == w.syncDir {
				w.synced(ev)
				continue
			}
			w.handle(ev)
			if timer == nil {
				timer = time.AfterFunc(debounce, func() { tick <- struct{}{} })
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.lost() // an overflow or a read error: events may be missing
		}
	}
}

// handle follows one event of the checkout or its git folder: a new
// folder is watched, and the list cache hears of what can change git's
// lists.
func (w *watcher) handle(ev fsnotify.Event) {
	if w.gitDir != "" && (ev.Name == w.gitDir || strings.HasPrefix(ev.Name, w.gitDir+string(filepath.Separator))) {
		// The git folder's files the lists read are checked by their
		// identity at each use (gate/listcache.go).
		if ev.Has(fsnotify.Create) && len(w.folders)+w.gitWatched < maxWatchFolders {
			if err := w.fw.Add(ev.Name); err == nil { // fails for files, as it should
				w.gitWatched++
			}
		}
		return
	}
	if fsguard.IsGitName(filepath.Base(ev.Name)) && ev.Name != filepath.Join(w.root, ".git") && w.lists != nil {
		// A .git name made, removed or renamed below the checkout's
		// own: a folder becoming a nested repository or no longer one,
		// or a folder git calls ordinary that the watcher never looks
		// into (fsguard.Root.Folders). The watcher no longer sees every
		// change git would, until it starts afresh without one.
		w.cover(false)
	}
	folder := w.folders[ev.Name]
	if ev.Has(fsnotify.Create) {
		folder = w.watchNew(ev.Name) || folder
	}
	if ev.Has(fsnotify.Rename) && w.folders[ev.Name] {
		w.rescan = true // its watch is gone, its subfolders' have stale names
	}
	if ev.Has(fsnotify.Remove) {
		delete(w.folders, ev.Name)
	}
	if w.lists == nil {
		return
	}
	if changesLists(ev) {
		w.lists.Changed()
	}
	// The status monitor (gate/fsmonitor.go) hears of every change: a
	// file's path, or a doubt for what git's untracked cache cannot be
	// told precisely (a folder, a .gitignore).
	switch base := filepath.Base(ev.Name); {
	case base == ".gitattributes":
		w.lists.Refresh()
	case folder || base == ".gitignore":
		w.lists.Doubt()
	default:
		w.lists.Touched(ev.Name, !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename))
	}
}

// changesLists says whether an event in the work tree can change git's
// lists of untracked or ignored files: anything but a content write or a
// mode change of a file other than a .gitignore.
func changesLists(ev fsnotify.Event) bool {
	if filepath.Base(ev.Name) == ".gitignore" || ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		return true
	}
	if ev.Has(fsnotify.Chmod) {
		info, err := os.Lstat(ev.Name)
		return err != nil || info.IsDir() // a folder made unreadable changes git's walk
	}
	return false
}

// watchNew watches a folder created in (or moved into) the work tree, and
// every folder already inside it: they can be made before the watch is.
// Past maxWatchFolders the watcher no longer covers the checkout. It says
// whether name is a folder.
func (w *watcher) watchNew(name string) bool {
	info, err := os.Lstat(name)
	if err != nil || !info.IsDir() {
		return false
	}
	if fsguard.IsGitName(filepath.Base(name)) {
		return true
	}
	_ = filepath.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != name && fsguard.IsGitName(d.Name()) {
			w.cover(false) // as handle says of a .git name made (a folder or a gitlink file)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if len(w.folders) >= maxWatchFolders {
			w.cover(false)
			return filepath.SkipAll
		}
		if w.fw.Add(p) != nil {
			w.rescan = true
			return nil
		}
		w.folders[p] = true
		return nil
	})
	return true
}

// lost: events may be missing, so the cache is dropped and the watcher
// starts afresh before it is trusted again.
func (w *watcher) lost() {
	w.rescan = true
	if w.lists != nil {
		w.lists.Changed()
		w.lists.Doubt()
	}
}

// restart replaces the inotify instance with a fresh one over every
// folder, then drops the cache: a change before the new instance watched
// its folder is older than the drop, a change after it is an event.
func (w *watcher) restart() {
	w.rescan = false
	fw, complete := w.watchAll()
	if fw == nil {
		w.cover(false)
		return
	}
	old := w.fw
	w.fw = fw
	_ = old.Close()
	w.cover(complete)
	w.releaseAll(true) // their sentinels were in the old queue
}

// sync returns once the loop has handled every event queued before it was
// called; false when it could not tell (stopped, timed out, no private
// folder), and the caller asks git.
func (w *watcher) sync(ctx context.Context) bool {
	ch := make(chan bool, 1)
	w.mu.Lock()
	if w.closed || w.syncDir == "" {
		w.mu.Unlock()
		return false
	}
	w.seq++
	seq := w.seq
	w.waiting[seq] = ch
	w.mu.Unlock()
	name := filepath.Join(w.syncDir, strconv.FormatUint(seq, 10))
	ok := os.Symlink(".", name) == nil
	if ok {
		timer := time.NewTimer(syncWait)
		defer timer.Stop()
		select {
		case ok = <-ch:
		case <-timer.C:
			ok = false
		case <-ctx.Done():
			ok = false
		}
	}
	w.mu.Lock()
	delete(w.waiting, seq)
	w.mu.Unlock()
	return ok
}

// synced handles an event in the private folder: a sync's name appearing
// releases it, after a restart if one is due.
func (w *watcher) synced(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) {
		return
	}
	_ = os.Remove(ev.Name)
	if w.rescan {
		w.restart()
	}
	seq, err := strconv.ParseUint(filepath.Base(ev.Name), 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch := w.waiting[seq]; ch != nil {
		ch <- w.lists != nil
		delete(w.waiting, seq)
	}
}

// releaseAll answers every waiting sync.
func (w *watcher) releaseAll(ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for seq, ch := range w.waiting {
		ch <- ok
		delete(w.waiting, seq)
	}
}

// shut ends the watcher: the cache stops being trusted first.
func (w *watcher) shut() {
	w.cover(false)
	w.uncoverGitFolder()
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.releaseAll(false)
	_ = w.fw.Close()
	if w.syncDir != "" {
		_ = os.RemoveAll(w.syncDir)
	}
}

// stop ends the loop, which closes everything: never waited for, as the
// loop's own fire can stop it. A second stop does nothing.
func (w *watcher) stop() { w.stopOnce.Do(func() { close(w.done) }) }
