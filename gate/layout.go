package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"golang.org/x/sys/unix"
)

// The shape of the git folder.
//
// git reads and writes its state through plain opens of names in its folder
// (HEAD, refs, logs, index, COMMIT_EDITMSG, FETCH_HEAD, info/attributes and
// many more: gitrepository-layout lists what it keeps there and every version
// adds names). An open follows a symlink, blocks on a FIFO and runs a
// device's driver; an in-place write (a reflog append, COMMIT_EDITMSG)
// lands in every name a hard-linked file has. So a symlink in .git moves
// git's reads or writes outside the checkout, a FIFO stalls it, /dev/zero
// feeds it forever. Rather than list the names git uses (a list the next
// git outgrows), the closed gate checks the whole folder, every entry,
// without following links:
//
//   - a folder: walked;
//   - a regular file: allowed; outside objects/ it must have exactly one
//     link (objects are named by their hash and never written in place, and
//     git clone --local hard-links them, so a link count there is normal;
//     making such a link needs the right to the original file anyway);
//   - a symlink, FIFO, device or socket: refused, naming the entry. The one
//     socket allowed is git's own fsmonitor daemon's (fsmonitor--daemon.ipc
//     at the top of a git folder): closed calls force core.fsmonitor=false,
//     so git never connects to it, and an open() of a socket fails at once.
//
// Three folders are not walked, because no closed git call ever opens them:
// hooks/ (closed calls force core.hooksPath=/dev/null), lfs/ (git-lfs's
// store, read only by its filter, which closed calls switch off) and
// modules/ (submodules' own git folders: the Change gate refuses a
// repository that has one, and reads ignore submodules). All three can be
// large, and hooks are often symlinks into the work tree.
//
// objects/info/alternates and objects/info/http-alternates are refused for
// the closed gate whatever they say (docs/policy.md: following them exactly
// as git does would mean re-implementing git's quoting, whitespace, relative
// paths and recursion; refusing needs none of it, and a clone that borrows
// objects is made on the computer, by its owner).
//
// The walk's result is cached by the identity of every folder it saw: an
// entry added, removed or renamed changes its folder's mtime and ctime, so a
// repeated call costs one fstatat per folder and no read. While a watcher
// covers the git folder (shapewatch.go), the kernel's change events stand in
// for those stats: one poll(2) says whether anything changed since the walk.
// On Linux the kernel (Landlock) is the second wall: a link planted between
// the check and git's open still cannot reach outside.

// Walk bounds: a git folder past them is refused as too large to check.
const (
	maxLayoutEntries = 1_000_000
	maxLayoutDepth   = 40
)

// ErrGitFolder refuses a git folder whose shape git could be led astray by.
var ErrGitFolder = refusal.New(refusal.Refused, "git folder shape",
	"This checkout's git folder holds a link or a special file where git keeps its state; turn on Full access for remote devices on this computer to use Git on this checkout from the phone.")

// layout is the last walk's verdict and the folders it saw.
type layout struct {
	mu   sync.Mutex
	dirs []layoutDir // every folder walked, relative to the common folder
	err  error       // the verdict for exactly these folders
	// racy: a folder changed so shortly before the walk that a change
	// right after it could carry the same timestamps; walk again next time.
	racy bool
	// watch, while a watcher covers the git folder, says whether anything
	// changed since the walk, instead of a stat of every folder
	// (shapewatch.go).
	watch *ShapeWatch
	// walks and restats count the walks and the re-stats of every folder,
	// for tests that count the work a decision does.
	walks, restats int
}

type layoutDir struct {
	rel string
	id  fileid.ID
}

// checkLayout refuses a git folder whose shape the closed gate does not
// accept, or one that borrows objects (alternates). action names what the
// refusal stops.
func (r *Repo) checkLayout(action string) error {
	r.shape.mu.Lock()
	defer r.shape.mu.Unlock()
	switch watched := r.shape.watch.state(); {
	case r.shape.dirs != nil && watched == shapeFresh:
		// Covered, and the kernel queued no change since the walk: no
		// folder to stat (shapewatch.go).
	case r.shape.dirs == nil || watched == shapeStale || r.shape.racy || !r.shapeUnchanged():
		start := time.Now()
		r.shape.walks++
		w := &layoutWalk{commonDir: r.commonDir, watch: r.shape.watch.begin(r.commonDir)}
		r.shape.err = w.walk(".", 0)
		w.watch.end(r.shape.err == nil)
		r.shape.dirs, r.shape.racy = w.dirs, false
		for _, d := range w.dirs {
			r.shape.racy = r.shape.racy || racy(d.id, start)
		}
	}
	err := r.shape.err
	if err == nil {
		// Every call: an empty alternates file filled in place changes no
		// folder.
		err = r.alternates()
	}
	if err != nil {
		return layoutRefusal(err, action)
	}
	return nil
}

// gitFolderGeneration names the git folder's state as the shape cover
// sees it: the same number from two calls, both ok, means the kernel
// queued no change in any of its folders between them (shapewatch.go; a
// change drops the walk, and the next decision walks again and counts
// it). ok is false without a cover, or when a change is queued now.
func (r *Repo) gitFolderGeneration() (gen int, ok bool) {
	r.shape.mu.Lock()
	defer r.shape.mu.Unlock()
	if r.shape.dirs == nil || r.shape.watch.state() != shapeFresh {
		return 0, false
	}
	return r.shape.walks, true
}

// racyWindow is how close to a check a file's change time must be for the
// check not to be trusted later: file systems stamp times from a coarse
// clock, so two changes within one tick can leave the same mtime and ctime
// (git's index has the same "racy" problem and the same answer).
const racyWindow = 50 * time.Millisecond

func racy(id fileid.ID, checked time.Time) bool {
	return id.Ctime >= checked.Add(-racyWindow).UnixNano() || id.Mtime >= checked.Add(-racyWindow).UnixNano()
}

// shapeUnchanged re-stats every folder the last walk saw. The git folder
// itself is stat'ed by its path, as git reaches it: a folder swapped for a
// symlink since Open is a change, though the descriptor held still names
// the old one.
func (r *Repo) shapeUnchanged() bool {
	r.shape.restats++
	for i, d := range r.shape.dirs {
		var id fileid.ID
		var err error
		if i == 0 {
			id, err = fileid.Lstat(r.commonDir)
		} else {
			id, err = r.common.at(d.rel)
		}
		if err != nil || id != d.id {
			return false
		}
	}
	return true
}

// layoutWalk is one walk of the common git folder.
type layoutWalk struct {
	commonDir string
	dirs      []layoutDir
	entries   int
	buf       []byte      // readFolder's, reused from folder to folder
	watch     *ShapeWatch // watches each folder before it is listed; nil without a cover
}

// shapeError is a walk's finding: the entry (relative to the common folder)
// and what is wrong with it.
type shapeError struct {
	rel, what string
}

func (e *shapeError) Error() string { return fmt.Sprintf("git folder: %s %s", e.rel, e.what) }

var errLayoutTooLarge = errors.New("git folder too large to check")

// walk checks the folder rel and everything beneath it.
func (w *layoutWalk) walk(rel string, depth int) error {
	abs := filepath.Join(w.commonDir, rel)
	var st unix.Stat_t
	err := unix.Lstat(abs, &st)
	switch {
	case err == unix.ENOENT && rel != ".":
		return nil // gone since its folder was listed (a gc): nothing to check
	case err != nil:
		return fmt.Errorf("git folder: %w", err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return &shapeError{rel, "is not a folder"}
	}
	w.dirs = append(w.dirs, layoutDir{rel: rel, id: fileid.FromStat(&st)})
	if depth > maxLayoutDepth {
		return errLayoutTooLarge
	}
	if w.watch != nil {
		w.watch.watch(abs, uint64(st.Dev)) // before the listing: a change after it is an event
	}
	inObjects := rel == "objects" || hasPathPrefix(rel, "objects")
	ents, gone, err := w.readFolder(rel, inObjects)
	if gone && rel != "." {
		return nil
	}
	if gone {
		return fmt.Errorf("git folder: %w", fs.ErrNotExist)
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := w.entry(path.Join(rel, e.name), e.typ, depth, inObjects); err != nil {
			return err
		}
	}
	return nil
}

// folderEntry is one name readFolder found and its type as the folder's
// record gives it.
type folderEntry struct {
	name string
	typ  fs.FileMode
}

// entry checks one name found in a folder.
func (w *layoutWalk) entry(rel string, typ fs.FileMode, depth int, inObjects bool) error {
	switch {
	case typ.IsDir():
		if rel == "hooks" || rel == "lfs" || rel == "modules" {
			return nil
		}
		return w.walk(rel, depth+1)
	case typ.IsRegular():
		if inObjects {
			return nil
		}
		return w.singleLink(rel)
	case typ&fs.ModeSymlink != 0:
		return &shapeError{rel, "is a symlink"}
	case typ&fs.ModeNamedPipe != 0:
		return &shapeError{rel, "is a FIFO"}
	case typ&fs.ModeSocket != 0:
		if path.Base(rel) == "fsmonitor--daemon.ipc" && (path.Dir(rel) == "." || isWorktreeDir(path.Dir(rel))) {
			return nil
		}
		return &shapeError{rel, "is a socket"}
	case typ&fs.ModeDevice != 0:
		return &shapeError{rel, "is a device"}
	}
	// A type the directory entry did not tell (some file systems): ask.
	fi, err := os.Lstat(filepath.Join(w.commonDir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("git folder: %w", err)
	}
	if fi.Mode().Type() == 0 || fi.IsDir() {
		return w.entry(rel, fi.Mode().Type()|dirBit(fi), depth, inObjects)
	}
	return w.entry(rel, fi.Mode().Type(), depth, inObjects)
}

func dirBit(fi os.FileInfo) fs.FileMode {
	if fi.IsDir() {
		return fs.ModeDir
	}
	return 0
}

// singleLink refuses a regular file with more than one link.
func (w *layoutWalk) singleLink(rel string) error {
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(w.commonDir, rel), &st); err == unix.ENOENT {
		return nil // gone since its folder was listed
	} else if err != nil {
		return fmt.Errorf("git folder: %w", err)
	}
	if st.Nlink > 1 {
		return &shapeError{rel, "is hard-linked elsewhere"}
	}
	return nil
}

// alternates refuses a repository that borrows objects from another folder.
func (r *Repo) alternates() error {
	for _, rel := range []string{"objects/info/alternates", "objects/info/http-alternates"} {
		id, err := r.common.at(rel)
		if err != nil {
			return fmt.Errorf("git folder: %w", err)
		}
		if id != (fileid.ID{}) && id.Size > 0 {
			return &shapeError{rel, "borrows objects from another folder"}
		}
	}
	return nil
}

// isWorktreeDir: worktrees/NAME, a linked worktree's own git folder.
func isWorktreeDir(rel string) bool {
	return path.Dir(rel) == "worktrees"
}

func hasPathPrefix(p, prefix string) bool {
	return len(p) > len(prefix) && p[:len(prefix)] == prefix && p[len(prefix)] == '/'
}

// layoutRefusal turns a walk's finding into the device's sentence: the entry
// named as .git/REL (never an absolute path), the cause kept for the log.
func layoutRefusal(err error, action string) error {
	var se *shapeError
	switch {
	case errors.As(err, &se) && se.what == "borrows objects from another folder":
		return refusal.Errorf(ErrGitFolder,
			"This repository borrows objects from another folder (.git/%s); turn on Full access for remote devices on this computer to %s from the phone.", se.rel, action)
	case errors.As(err, &se):
		return refusal.Errorf(ErrGitFolder,
			"This checkout's git folder holds .git/%s, which %s; turn on Full access for remote devices on this computer to %s from the phone.", se.rel, se.what, action)
	case errors.Is(err, errLayoutTooLarge):
		return refusal.Errorf(ErrGitFolder,
			"This checkout's git folder is too large to check; turn on Full access for remote devices on this computer to %s from the phone.", action)
	}
	return fmt.Errorf("%w: %w", ErrGitFolder, err)
}
