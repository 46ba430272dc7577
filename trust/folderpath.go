package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The state folder holds the switch, the grants and the paired devices'
// keys, so whoever can change what its path names decides what a phone may
// do. A red team put XDG_STATE_HOME in a shared folder: another local user
// renamed the parent aside, made their own folder under the old name with
// "fullAccess": true in it, and the running serve read it from then on.
// Owning the state folder itself is not enough; every folder on the way
// there must be one that only root or the current user can change.
//
// The rule, checked from / to the state folder one component at a time (as
// OpenSSH's StrictModes checks the path to ~/.ssh, with one exception more):
//
//   - every component, symlinks included, belongs to root or to the
//     current user: the owner of a folder may rename or remove anything in
//     it, whatever its mode, and the owner of a symlink chose where it leads;
//   - no folder on the way is writable by its group or by others (an ACL
//     that lets another user write shows in the group bits, which hold the
//     ACL's mask), because write permission on a folder is what rename(2)
//     and unlink(2) of its entries need;
//   - except a sticky folder, like /tmp: there rename(2) and unlink(2) of
//     an entry are refused (EPERM) to everyone but the entry's owner, the
//     folder's owner and root. With the folder and its entry both belonging
//     to root or the current user (the first rule), nobody else can move
//     the entry away or put another in its place. They can still create
//     other names beside it, which gatehouse never looks at, and they could
//     have created the entry first, but then it is theirs and refused;
//   - the state folder itself belongs to the current user and is writable
//     by nobody else, sticky or not: its entries are gatehouse's files.
//
// A symlink is followed to where it leads and the real folders there are
// checked by the same rule; the chain up to the symlink was checked already,
// so nobody else could have swapped the link itself. A symlink that belongs
// to another user is refused even in a folder they cannot write: they made
// it, so they chose where the state folder is, and in a sticky folder its
// owner may replace it at any time (Linux's fs.protected_symlinks refuses to
// follow such a link for that reason).
//
// Known limits: the chain is read by path, so a change made between a
// check and the read after it is seen by the next check, not by that read.
// But once a chain passes, only root or the user can change it: another
// user can act only after one of them opened a folder on the path, which
// the next check sees. A mount point is judged like any folder, by its
// owner and mode, as the kernel's permission checks judge it.

// ErrFolderUnsafe is why a state folder is refused: another user could
// change what its path names. The error is a *FolderError.
var ErrFolderUnsafe = errors.New("another user could replace the state folder")

// ErrFolderReplaced: the state folder's path no longer names the folder the
// Store was guarding (moved, or replaced by another).
var ErrFolderReplaced = errors.New("the state folder was moved or replaced while in use")

// FolderError names the component of the state folder's path (or the
// config folder's, which is checked by the same rule) that lets another
// user replace it, and why.
type FolderError struct {
	Dir       string // the state folder, as named
	Component string // the folder or symlink at fault, as resolved
	Problem   string // what lets another user change it
	Folder    string // "config folder" for the config folder; "" is the state folder
}

func (e *FolderError) Error() string {
	folder := e.Folder
	if folder == "" {
		folder = stateFolder
	}
	what := "replace gatehouse's " + folder + " " + e.Dir + " with their own"
	if e.Component == e.Dir {
		what = "replace the files in gatehouse's " + folder
	}
	return fmt.Sprintf("%s %s, so another user could %s; set GATEHOUSE_HOME to a folder only you can change",
		e.Component, e.Problem, what)
}

func (e *FolderError) Unwrap() error { return ErrFolderUnsafe }

// maxLinks bounds the symlinks followed in one check, as the kernel's 40
// does for one path (ELOOP).
const maxLinks = 40

// CheckFolder reports whether only root and the current user can change
// what dir (an absolute path) names: nil, a *FolderError naming the
// component that lets another user replace it, or the error that kept a
// component from being looked at (a missing folder reads as fs.ErrNotExist).
func CheckFolder(dir string) error {
	_, err := walkFolder(stateFolder, dir, os.Geteuid())
	return err
}

// CheckConfigFolder is CheckFolder for the config folder (DefaultConfigDir),
// which names where a device's clone is written: the same rule, and errors
// that name the config folder.
func CheckConfigFolder(dir string) error {
	_, err := walkFolder(configFolder, dir, os.Geteuid())
	return err
}

// The folders a walk checks, as its errors name them.
const (
	stateFolder  = "state folder"
	configFolder = "config folder"
)

// walkFolder resolves dir, the state or config folder (folder), from / one
// component at a time, checking each (the rule above), and returns what
// lstat says of dir.
func walkFolder(folder, dir string, uid int) (unix.Stat_t, error) {
	var at, st unix.Stat_t // at: the folder reached so far; st: its next entry
	if !filepath.IsAbs(dir) {
		return at, fmt.Errorf("%s %q is not an absolute path", folder, dir)
	}
	unsafe := func(component, problem string) error {
		fe := &FolderError{Dir: dir, Component: component, Problem: problem}
		if folder != stateFolder {
			fe.Folder = folder
		}
		return fe
	}
	real := "/" // the path of at, free of symlinks
	if err := lstat(folder, real, &at); err != nil {
		return at, err
	}
	if p := ownerProblem(&at, uid); p != "" {
		return at, unsafe(real, p)
	}
	rest := components(dir)
	for links := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		if name == ".." { // real has no symlinks: its parent is the textual one, checked already
			real = filepath.Dir(real)
			if err := lstat(folder, real, &at); err != nil {
				return at, err
			}
			continue
		}
		next := filepath.Join(real, name)
		if at.Mode&0o022 != 0 && at.Mode&unix.S_ISVTX == 0 {
			return at, unsafe(real, fmt.Sprintf("is writable by other users (mode %o)", at.Mode&0o7777))
		}
		if err := lstat(folder, next, &st); err != nil {
			return at, err
		}
		if p := ownerProblem(&st, uid); p != "" {
			return at, unsafe(next, p)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			real, at = next, st
		case unix.S_IFLNK:
			if links++; links > maxLinks {
				return at, &fs.PathError{Op: folder, Path: dir, Err: unix.ELOOP}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return at, err
			}
			if filepath.IsAbs(target) {
				real = "/"
				if err := lstat(folder, real, &at); err != nil {
					return at, err
				}
			}
			rest = append(components(target), rest...)
		default:
			return at, &fs.PathError{Op: folder, Path: next, Err: unix.ENOTDIR}
		}
	}
	// The state folder itself: the current user's, and no sticky exception,
	// since its entries are gatehouse's files.
	if int(at.Uid) != uid {
		return at, unsafe(real, fmt.Sprintf("belongs to another user (uid %d)", at.Uid))
	}
	if at.Mode&0o022 != 0 {
		return at, unsafe(real, fmt.Sprintf("is writable by other users (mode %o)", at.Mode&0o7777))
	}
	return at, nil
}

// ownerProblem says why a component that belongs to neither root nor uid
// is refused, or "" when it belongs to one of them.
func ownerProblem(st *unix.Stat_t, uid int) string {
	switch {
	case st.Uid == 0 || int(st.Uid) == uid:
		return ""
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Sprintf("is a symlink that belongs to another user (uid %d), who chose where it leads and in a folder like /tmp may change it", st.Uid)
	}
	return fmt.Sprintf("belongs to another user (uid %d)", st.Uid)
}

func lstat(folder, path string, st *unix.Stat_t) error {
	if err := unix.Lstat(path, st); err != nil {
		return &fs.PathError{Op: folder + ": lstat", Path: path, Err: err}
	}
	return nil
}

// components splits a path into its names, leaving out empty ones and ".".
func components(path string) []string {
	var out []string
	for _, name := range strings.Split(path, "/") {
		if name != "" && name != "." {
			out = append(out, name)
		}
	}
	return out
}

// guard keeps a Store to the folders it was guarding when Guard was called
// (Store.Guard): the state folder, and the config folder when it is
// another.
type guard struct {
	folders []guarded
	uid     int

	mu  sync.Mutex
	err error // the first failure, kept: a folder once found unsafe is not trusted again
}

// guarded is one folder a guard keeps: its kind, its path and what it was.
type guarded struct {
	folder, dir string
	dev, ino    uint64
}

// newGuard checks each folder (kind, path, kind, path …) and remembers what
// it names now.
func newGuard(folders ...[2]string) (*guard, error) {
	g := &guard{uid: os.Geteuid()}
	for _, f := range folders {
		st, err := walkFolder(f[0], f[1], g.uid)
		if err != nil {
			return nil, err
		}
		g.folders = append(g.folders, guarded{folder: f[0], dir: f[1], dev: uint64(st.Dev), ino: st.Ino})
	}
	return g, nil
}

// check walks each chain again and compares the folder it reaches with the
// one guarded. A failure is kept for good, and stops the use of both
// folders: a serve whose clones folder another user could choose stops as
// one whose switch they could turn on does.
func (g *guard) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	for _, f := range g.folders {
		st, err := walkFolder(f.folder, f.dir, g.uid)
		if err == nil && (uint64(st.Dev) != f.dev || st.Ino != f.ino) {
			err = fmt.Errorf("%w: %s is no longer the folder gatehouse opened; find out who changed it, then start again", ErrFolderReplaced, f.dir)
		}
		if err != nil {
			g.err = err
			return err
		}
	}
	return nil
}
