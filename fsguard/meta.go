package fsguard

import (
	"errors"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// Info is what Stat tells about a path, without opening it.
type Info struct {
	Kind  string // "file", "dir", "symlink" or "other"
	Size  int64
	Links uint64
	Exec  bool // a file with an executable bit
	// HardLinked: a regular file with more than one link (hardLinked).
	HardLinked bool
}

// Stat reports on unsafePath without following a symlink at its end and
// without opening anything for reading: for gate's checks of the files a
// change touches (is it hard-linked? a folder?). Only the .git rule applies,
// since no content is read.
func (r *Root) Stat(unsafePath string) (Info, error) {
	clean, err := ValidatePath(unsafePath)
	if err != nil {
		return Info{}, pathErr("stat", quoted(unsafePath, err), err)
	}
	st, _, err := lstatIn(r.fd, clean)
	if err != nil {
		return Info{}, pathErr("stat", clean, mapErrno(err))
	}
	info := Info{Kind: "other", Size: st.Size, Links: uint64(st.Nlink), Exec: st.Mode&0o111 != 0, HardLinked: hardLinked(&st)}
	switch {
	case isRegular(&st):
		info.Kind = "file"
	case isDir(&st):
		info.Kind = "dir"
	case isLink(&st):
		info.Kind = "symlink"
	}
	return info, nil
}

// Remove deletes the file or symlink unsafePath (never a folder, never
// through a symlinked folder, never in .git). It is how a discard deletes an
// untracked file a device named.
func (r *Root) Remove(unsafePath string) error {
	clean, err := ValidatePath(unsafePath)
	if err != nil {
		return pathErr("remove", quoted(unsafePath, err), err)
	}
	if clean == "." {
		return pathErr("remove", clean, ErrIsDir)
	}
	dirfd, base, err := openParentIn(r.fd, clean)
	if err != nil {
		return pathErr("remove", clean, mapErrno(err))
	}
	defer unix.Close(dirfd)
	st, err := lstatAt(dirfd, base)
	if err != nil {
		return pathErr("remove", clean, mapErrno(err))
	}
	if isDir(&st) {
		return pathErr("remove", clean, ErrIsDir)
	}
	if err := unix.Unlinkat(dirfd, base, 0); err != nil {
		return pathErr("remove", clean, mapErrno(err))
	}
	return nil
}

// ErrMetadata is returned by ReadMetadata for a symlink, a FIFO, a device, a
// folder or a file over its bound.
var ErrMetadata = errors.New("git metadata file is not a small regular file")

// ReadMetadata reads one of git's own small files (a .git file's "gitdir:",
// commondir, objects/info/alternates) for gate: never a device's path, at
// most limit bytes, opened O_NOFOLLOW | O_NONBLOCK and only if the handle is
// a regular file.
func ReadMetadata(absPath string, limit int) ([]byte, error) {
	data, err := atomicfile.ReadBounded(absPath, int64(limit))
	if errors.Is(err, atomicfile.ErrNotRegular) || errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, ErrMetadata
	}
	return data, err
}
