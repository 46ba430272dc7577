package gate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// folderBuffer is how much of a folder one getdents reads: 64 KiB is about
// 2,000 loose objects' records, against os.ReadDir's 8 KiB.
const folderBuffer = 64 << 10

// readFolder lists the folder rel for the walk from the kernel's directory
// records. Every entry counts against the walk's bound; the ones the walk
// must look at (all but a regular file inside objects/, which needs no
// check) come back sorted by name, as os.ReadDir returns them, so the walk
// checks the same entries in the same order. A folder of loose objects
// costs a few getdents and no allocation per object: through os.ReadDir,
// one DirEntry and one sorted name each, the first walk of a git folder
// holding 60,000 loose objects took 44-51 ms, at the start of every
// 'gatehouse do'.
//
// The folder is opened without following a link: one swapped for a link
// since its entry was read is refused, not followed. gone reports a folder
// removed since then (a gc).
func (w *layoutWalk) readFolder(rel string, inObjects bool) (ents []folderEntry, gone bool, err error) {
	fd, err := unix.Open(filepath.Join(w.commonDir, rel), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case err == unix.ENOENT:
		return nil, true, nil
	case err == unix.ELOOP || err == unix.ENOTDIR:
		return nil, false, &shapeError{rel, "is not a folder"}
	case err != nil:
		return nil, false, fmt.Errorf("git folder: %w", &fs.PathError{Op: "open", Path: rel, Err: err})
	}
	defer unix.Close(fd)
	if w.buf == nil {
		w.buf = make([]byte, folderBuffer)
	}
	for {
		n, err := unix.Getdents(fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("git folder: %w", &fs.PathError{Op: "getdents", Path: rel, Err: err})
		}
		if n <= 0 {
			break
		}
		if ents, err = w.records(w.buf[:n], inObjects, ents); err != nil {
			return nil, false, err
		}
	}
	slices.SortFunc(ents, func(a, b folderEntry) int { return strings.Compare(a.name, b.name) })
	return ents, false, nil
}

// errDirent is a directory record the kernel should never write.
var errDirent = errors.New("git folder: malformed directory record")

// records parses linux_dirent64 records (ino 8, off 8, reclen 2, type 1,
// then the name and its NUL) onto ents.
func (w *layoutWalk) records(buf []byte, inObjects bool, ents []folderEntry) ([]folderEntry, error) {
	for len(buf) > 0 {
		if len(buf) < 20 {
			return nil, errDirent
		}
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < 20 || reclen > len(buf) {
			return nil, errDirent
		}
		typ, name := buf[18], buf[19:reclen]
		buf = buf[reclen:]
		end := bytes.IndexByte(name, 0)
		if end < 0 {
			return nil, errDirent
		}
		name = name[:end]
		if string(name) == "." || string(name) == ".." {
			continue
		}
		if w.entries++; w.entries > maxLayoutEntries {
			return nil, errLayoutTooLarge
		}
		if inObjects && typ == unix.DT_REG {
			continue // an object file: named by its hash, never written in place
		}
		ents = append(ents, folderEntry{name: string(name), typ: direntMode(typ)})
	}
	return ents, nil
}

// direntMode is the file type a record names; fs.ModeIrregular where the
// file system did not tell, which the walk then asks lstat about.
func direntMode(typ uint8) fs.FileMode {
	switch typ {
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_REG:
		return 0
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
