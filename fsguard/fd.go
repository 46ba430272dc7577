package fsguard

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// errSymlinkInPath says a walk met a symlink: the caller resolves the path
// itself and walks again, or, if it had already resolved it, reports that the
// file changed.
var errSymlinkInPath = errors.New("symlink in path")

// sameFile reports whether two stats are of the same inode.
func sameFile(a, b *unix.Stat_t) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// splitRel splits a clean relative path into its folder ("." at the top)
// and its last component.
func splitRel(rel string) (string, string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

func isDir(st *unix.Stat_t) bool     { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isRegular(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }
func isLink(st *unix.Stat_t) bool    { return st.Mode&unix.S_IFMT == unix.S_IFLNK }

// confirm checks that the read descriptor fd is the inode st described and
// still passes check (a hard link made meanwhile shows here), and leaves it
// blocking for reads. It closes fd when it refuses.
func confirm(fd int, st *unix.Stat_t, check func(*unix.Stat_t) error) (int, unix.Stat_t, error) {
	var now unix.Stat_t
	err := unix.Fstat(fd, &now)
	if err == nil && !sameFile(st, &now) {
		err = ErrChanged
	}
	if err == nil {
		err = check(&now)
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		_ = unix.Close(fd)
		return -1, *st, err
	}
	return fd, now, nil
}
