package fsguard

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"

	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

// Write replaces the text of the file unsafePath, which the device read with
// hash baseHash ("" to create a file that does not exist yet). The method
// that calls it needs the full grant and the switch; Write still applies the
// name rules (never .git; secrets only for full) and the handle checks
// (regular, one link) to what the path resolves to.
//
//   - A file that changed since it was read is a conflict, unless it already
//     holds exactly text: then a retried save whose first reply was lost
//     answers success.
//   - Only files of at most MaxText bytes can be edited (the device must have
//     read all of it), and text is at most MaxText bytes.
//   - The new text goes to a temporary file in the same folder, opened
//     through the folder's descriptor; it is synced, renamed over the file,
//     and the folder is synced. A crash leaves the old text or the new,
//     never a mix (a crash before the rename may leave the temporary file).
//
// It returns the hash of the new text.
func (r *Root) Write(g trust.Grant, unsafePath, text, baseHash string) (string, error) {
	a := access{op: "write", grant: g}
	if len(text) > MaxText {
		return "", pathErr(a.op, unsafePath, ErrTextTooLarge)
	}
	clean, err := r.locate(a, unsafePath)
	if err != nil {
		return "", pathErr(a.op, quoted(unsafePath, err), err)
	}
	rel, cur, err := r.current(a, clean)
	if err != nil {
		return "", pathErr(a.op, clean, err)
	}
	newHash := hashOf([]byte(text))
	switch {
	case cur.exists && bytes.Equal(cur.data, []byte(text)):
		return newHash, nil // already saved: a retry of a save that landed
	case cur.exists && baseHash == "":
		return "", pathErr(a.op, clean, ErrExists)
	case cur.exists && hashOf(cur.data) != baseHash, !cur.exists && baseHash != "":
		return "", pathErr(a.op, clean, ErrConflict)
	}
	if err := r.replace(rel, cur, []byte(text)); err != nil {
		return "", pathErr(a.op, clean, mapErrno(err))
	}
	return newHash, nil
}

// existing is a file's state before a write.
type existing struct {
	exists bool
	data   []byte
	st     unix.Stat_t
}

// current resolves clean for writing and reads what the file holds now. A
// path through a symlink is written at what it resolves to, under the same
// rules; a new file in a symlinked folder is placed by resolving the folder.
func (r *Root) current(a access, clean string) (string, existing, error) {
	rel := clean
	fd, st, err := openFileIn(r.fd, rel, checkRegular)
	if err == errSymlinkInPath {
		var res resolved
		res, err = r.follow(a, clean)
		switch {
		case err == ErrNotFound:
			dir, base := splitRel(clean)
			if res, err = r.follow(a, dir); err != nil {
				return "", existing{}, err
			}
			rel = joinRel(res.rel, base)
			if err := a.checkName(r, rel); err != nil {
				return "", existing{}, err
			}
			fd, st, err = openFileIn(r.fd, rel, checkRegular)
		case err != nil:
			return "", existing{}, err
		default:
			rel = res.rel
			fd, st, err = openFileIn(r.fd, rel, checkRegular)
			if err == nil && !sameFile(&st, &res.st) {
				_ = unix.Close(fd)
				return "", existing{}, ErrChanged
			}
		}
	}
	if err == unix.ENOENT {
		return rel, existing{}, nil
	}
	if err != nil {
		return "", existing{}, mapErrno(err)
	}
	defer unix.Close(fd)
	if st.Size > MaxText {
		return "", existing{}, ErrTooLargeToEdit
	}
	data, err := readFD(fd, nil, int(st.Size), MaxText+1)
	if err != nil {
		return "", existing{}, err
	}
	if len(data) > MaxText {
		return "", existing{}, ErrTooLargeToEdit
	}
	return rel, existing{exists: true, data: data, st: st}, nil
}

// The steps of replace, named for the crash test.
const (
	stepCreated = "created temp"
	stepWritten = "wrote temp"
	stepSynced  = "synced temp"
	stepRenamed = "renamed"
	stepDirSync = "synced folder"
)

// writeHook is called after each step of replace; tests use it to kill the
// process there. Only setWriteHookForTest (hooks_test.go) sets it, so it is
// nil in every production build.
var writeHook func(step string)

func step(name string) {
	if writeHook != nil {
		writeHook(name)
	}
}

// replace writes data over rel through a temporary file in the same folder.
func (r *Root) replace(rel string, cur existing, data []byte) (err error) {
	dirfd, base, err := openParentIn(r.fd, rel)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + base + ".gatehouse-" + hex.EncodeToString(rnd[:])
	perm := uint32(0o666) // narrowed by the umask, as any new file
	if cur.exists {
		perm = uint32(cur.st.Mode & 0o777)
	}
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return err
	}
	defer func() {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		if err != nil {
			_ = unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	step(stepCreated)
	if cur.exists {
		if err = unix.Fchmod(fd, perm); err != nil {
			return err
		}
	}
	if err = writeAll(fd, data); err != nil {
		return err
	}
	step(stepWritten)
	if err = unix.Fsync(fd); err != nil {
		return err
	}
	step(stepSynced)
	if err = unix.Close(fd); err != nil {
		fd = -1
		return err
	}
	fd = -1
	if err = r.unchanged(dirfd, base, cur); err != nil {
		return err
	}
	if err = unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		return err
	}
	step(stepRenamed)
	if err = unix.Fsync(dirfd); err != nil {
		return err
	}
	step(stepDirSync)
	return nil
}

// unchanged checks, just before the rename, that the file is still the one
// read (or still missing), so a change made meanwhile is not overwritten.
func (r *Root) unchanged(dirfd int, base string, cur existing) error {
	st, err := lstatAt(dirfd, base)
	if !cur.exists {
		if err == unix.ENOENT {
			return nil
		}
		return ErrConflict
	}
	if err != nil || !sameFile(&st, &cur.st) || st.Size != cur.st.Size || st.Mtim != cur.st.Mtim || st.Nlink != 1 {
		return ErrConflict
	}
	return nil
}

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}
