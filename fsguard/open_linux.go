package fsguard

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// On Linux every walk inside a root is done by the kernel: openat2 relative
// to the root's descriptor with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS, so no component can be a symlink and nothing can
// leave the root during the walk, whatever is renamed meanwhile. Files are
// first opened O_PATH (which runs no driver, so a device node swapped in is
// harmless), checked on that handle, and only then reopened for reading
// through /proc/self/fd.
//
// Where openat2 is missing or refused (an old kernel, a seccomp filter), the
// same guarantees come from a per-folder walk: each component opened with
// O_PATH | O_NOFOLLOW relative to the previous one's descriptor. Whether
// openat2 works is asked on every call and never cached: a filter installed
// later can refuse it, and falling back is only a cost, never a downgrade.

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// noOpenat2 makes every walk take the fallback, as on a kernel that refuses
// openat2. Only tests set it (disableOpenat2ForTest, in
// hooks_linux_test.go, so no production build can reach the switch).
var noOpenat2 atomic.Bool

// openRootFD opens the root folder itself.
func openRootFD(canonical string) (int, error) {
	return unix.Open(canonical, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// walkIn opens rel (clean, relative, no "..") under dirfd with flags, never
// following a symlink in any component. An intermediate symlink gives
// errSymlinkInPath; a final one gives a handle to the link when flags hold
// O_PATH|O_NOFOLLOW, and errSymlinkInPath otherwise.
func walkIn(dirfd int, rel string, flags int) (int, error) {
	if noOpenat2.Load() {
		return walkComponents(dirfd, rel, flags)
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Resolve: resolveFlags}
	for {
		fd, err := unix.Openat2(dirfd, rel, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		case unix.ELOOP:
			return -1, errSymlinkInPath
		case unix.EXDEV:
			return -1, ErrOutsideRoot
		case unix.EAGAIN:
			// The kernel saw a rename race it could not rule out.
			return -1, ErrChanged
		case unix.ENOSYS, unix.EPERM, unix.EINVAL, unix.E2BIG:
			return walkComponents(dirfd, rel, flags)
		}
		return -1, err
	}
}

// walkComponents is the fallback walk: one component at a time, each opened
// O_PATH | O_NOFOLLOW relative to the descriptor of the folder before it.
func walkComponents(dirfd int, rel string, flags int) (int, error) {
	if rel == "." {
		return unix.Openat(dirfd, ".", flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	cur, owned := dirfd, false
	defer func() {
		if owned {
			_ = unix.Close(cur)
		}
	}()
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		f := unix.O_PATH | unix.O_DIRECTORY
		if last {
			f = flags
		}
		fd, err := unix.Openat(cur, seg, f|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			var st unix.Stat_t
			if unix.Fstatat(cur, seg, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, errSymlinkInPath
			}
		}
		if err != nil {
			return -1, err
		}
		if owned {
			_ = unix.Close(cur)
		}
		cur, owned = fd, true
	}
	owned = false
	return cur, nil
}

// lstatIn stats rel under the root without following any symlink, and reads
// the link's target when the last component is one.
func lstatIn(rootfd int, rel string) (unix.Stat_t, string, error) {
	var st unix.Stat_t
	h, err := walkIn(rootfd, rel, unix.O_PATH)
	if err != nil {
		return st, "", err
	}
	defer unix.Close(h)
	if err := unix.Fstat(h, &st); err != nil {
		return st, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return st, "", nil
	}
	target, err := readlinkFD(h)
	return st, target, err
}

func readlinkFD(h int) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(h, "", buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= MaxPath {
			return "", ErrTooManyLinks
		}
		buf = make([]byte, 2*len(buf))
	}
}

// openFileIn opens the regular file rel for reading. check sees the stat of
// an O_PATH handle (no driver has run) and may refuse before anything is
// opened for reading; the read descriptor is then the same inode, which the
// second fstat confirms.
func openFileIn(rootfd int, rel string, check func(*unix.Stat_t) error) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	h, err := walkIn(rootfd, rel, unix.O_PATH)
	if err != nil {
		return -1, st, err
	}
	defer unix.Close(h)
	if err := unix.Fstat(h, &st); err != nil {
		return -1, st, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return -1, st, errSymlinkInPath
	}
	if err := check(&st); err != nil {
		return -1, st, err
	}
	fd, err := reopen(h, rootfd, rel)
	if err != nil {
		return -1, st, err
	}
	return confirm(fd, &st, check)
}

// reopen turns an O_PATH handle into a read descriptor for the same inode,
// which the handle check already found to be a regular file (so no
// O_NONBLOCK is needed). Without /proc it opens the path again under the same
// rules, non-blocking, and the caller's inode comparison catches a swap (a
// device node swapped in during that instant would have its driver opened:
// the one gap of this fallback).
func reopen(h, rootfd int, rel string) (int, error) {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(h), unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == nil {
		return fd, nil
	}
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EACCES) {
		return -1, err
	}
	return walkIn(rootfd, rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
}

// openDirIn opens the folder rel for listing.
func openDirIn(rootfd int, rel string) (int, error) {
	return walkIn(rootfd, rel, unix.O_RDONLY|unix.O_DIRECTORY)
}

// openParentIn opens the folder that holds rel, for writing into it.
func openParentIn(rootfd int, rel string) (int, string, error) {
	dir, base := splitRel(rel)
	fd, err := walkIn(rootfd, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	return fd, base, err
}

// openAt opens one entry of an open folder for reading (grep). O_NOFOLLOW
// refuses a symlink; O_NONBLOCK keeps a FIFO from blocking; the caller checks
// the handle's type and link count before reading.
func openAt(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
}

// Mechanism names the open mechanism in force right now, for doctor.
func Mechanism() string {
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "unknown (cannot open /: " + err.Error() + ")"
	}
	defer unix.Close(dir)
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: resolveFlags}
	fd, err := unix.Openat2(dir, ".", &how)
	if err != nil {
		return "per-folder O_PATH|O_NOFOLLOW walk (openat2 refused: " + err.Error() + ")"
	}
	defer unix.Close(fd)
	r, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "openat2 (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS), O_PATH handles reopened by path (no /proc)"
	}
	_ = unix.Close(r)
	return "openat2 (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS), O_PATH handles reopened through /proc/self/fd"
}
