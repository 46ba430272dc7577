// Package atomicfile writes and reads gatehouse's own small state files.
//
// Write replaces a file so that a crash at any moment leaves either the old
// content or the new, never a mix or an empty file: the bytes go to a
// temporary file in the same folder, which is synced, renamed over the target,
// and then the folder is synced so the rename itself survives a power cut.
//
// ReadBounded reads a state file without following a symlink at its last
// component and refuses anything that is not a regular file or is larger than
// the caller's limit, so a planted FIFO or a link to /dev/zero cannot block or
// exhaust the host.
//
// These helpers are for files gatehouse itself owns (the state folder). Files
// inside a served checkout are read and written only through fsguard.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ErrTooLarge is returned by ReadBounded for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned by ReadBounded for a symlink, FIFO, device or
// folder.
var ErrNotRegular = errors.New("not a regular file")

// Write atomically replaces path with data, with permissions perm.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomic write: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("atomic write: %w", err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("atomic write: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("atomic write: sync: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("atomic write: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("atomic write: %w", err)
	}
	return SyncDir(dir)
}

// SyncDir flushes a folder's entries (a rename into it) to stable storage.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	return nil
}

// ReadBounded reads the regular file at path, refusing symlinks (at the last
// component), non-regular files and files of more than limit bytes. Opening
// with O_NONBLOCK keeps a FIFO from blocking before the type check refuses it.
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("read %s: %w", filepath.Base(path), ErrNotRegular)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), ErrNotRegular)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), ErrTooLarge)
	}
	return data, nil
}
