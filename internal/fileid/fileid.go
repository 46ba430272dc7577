// Package fileid identifies a version of a file by what stat reports, so a
// cache can tell cheaply (one lstat, no read) whether a file may have changed.
//
// Two IDs are equal only when device, inode, size, modification time and
// status-change time all agree. A rename over the file changes the inode; an
// in-place write changes mtime and ctime; a chmod or a new hard link changes
// ctime. Setting mtime back by hand does not reset ctime, so an edit cannot
// hide from the comparison.
package fileid

import (
	"golang.org/x/sys/unix"
)

// ID is the identity of one version of a file. The zero ID means "missing".
type ID struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds since the epoch
}

// FromStat builds an ID from a stat result.
func FromStat(st *unix.Stat_t) ID {
	return ID{
		Dev:   uint64(st.Dev),
		Ino:   uint64(st.Ino),
		Size:  st.Size,
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
	}
}

// Lstat returns the ID of path without following a symlink at its last
// component. A missing file gives the zero ID and a nil error, so "missing"
// is a version like any other.
func Lstat(path string) (ID, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR {
			return ID{}, nil
		}
		return ID{}, err
	}
	return FromStat(&st), nil
}

// At returns the ID of name relative to the open folder dirfd, without
// following a symlink at its last component: cheaper than Lstat of a long
// absolute path when the same folder is asked again and again.
func At(dirfd int, name string) (ID, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR {
			return ID{}, nil
		}
		return ID{}, err
	}
	return FromStat(&st), nil
}
