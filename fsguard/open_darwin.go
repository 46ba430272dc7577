package fsguard

import (
	"strings"

	"golang.org/x/sys/unix"
)

// On macOS there is neither openat2 nor O_PATH. Every walk inside a root is
// a per-folder walk: each folder opened O_NOFOLLOW | O_DIRECTORY relative to
// the descriptor of the one before, so no symlink is followed and nothing
// can leave the root whatever is renamed meanwhile. A file is lstat'ed in
// its open parent, checked, opened O_NOFOLLOW | O_NONBLOCK, and its handle
// compared with the lstat (same device and inode). Known gap: a device node
// swapped in between the lstat and the open has its driver opened (never
// read); on Linux the O_PATH handle closes that gap.

func openRootFD(canonical string) (int, error) {
	return unix.Open(canonical, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// walkDirs opens the folder dir (clean, relative) under rootfd, one
// component at a time.
func walkDirs(rootfd int, dir string) (int, error) {
	cur, err := unix.Openat(rootfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || dir == "." {
		return cur, err
	}
	for seg := range strings.SplitSeq(dir, "/") {
		fd, err := unix.Openat(cur, seg, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			var st unix.Stat_t
			if unix.Fstatat(cur, seg, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errSymlinkInPath
			}
		}
		_ = unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

func lstatIn(rootfd int, rel string) (unix.Stat_t, string, error) {
	var st unix.Stat_t
	dir, base := splitRel(rel)
	parent, err := walkDirs(rootfd, dir)
	if err != nil {
		return st, "", err
	}
	defer unix.Close(parent)
	if err := unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return st, "", nil
	}
	buf := make([]byte, MaxPath+1)
	n, err := unix.Readlinkat(parent, base, buf)
	if err != nil {
		return st, "", err
	}
	if n > MaxPath {
		return st, "", ErrTooManyLinks
	}
	return st, string(buf[:n]), nil
}

func openFileIn(rootfd int, rel string, check func(*unix.Stat_t) error) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	dir, base := splitRel(rel)
	parent, err := walkDirs(rootfd, dir)
	if err != nil {
		return -1, st, err
	}
	defer unix.Close(parent)
	if err := unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, st, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return -1, st, errSymlinkInPath
	}
	if err := check(&st); err != nil {
		return -1, st, err
	}
	fd, err := openAt(parent, base)
	if err != nil {
		if err == unix.ELOOP {
			return -1, st, ErrChanged
		}
		return -1, st, err
	}
	return confirm(fd, &st, check)
}

func openDirIn(rootfd int, rel string) (int, error) {
	return walkDirs(rootfd, rel)
}

func openParentIn(rootfd int, rel string) (int, string, error) {
	dir, base := splitRel(rel)
	fd, err := walkDirs(rootfd, dir)
	return fd, base, err
}

func openAt(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
}

// Mechanism names the open mechanism in force, for doctor.
func Mechanism() string {
	return "per-folder O_NOFOLLOW walk with handle checks (macOS has no openat2)"
}
