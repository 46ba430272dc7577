package gate

import (
	"fmt"
	"sync"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"golang.org/x/sys/unix"
)

// heldFolder is the common git folder as the gate holds it: a descriptor
// for cheap stats of the files in it (the config a decision read, the
// alternates files), and the folder it was opened on. git reaches the
// folder by its path; so before a decision is made or reused, the path is
// stat'ed, and when it now leads to another folder (the .git replaced under
// a running host) the descriptor is opened again there and everything
// decided on the old one is dropped. Otherwise a decision made from the old
// folder's config, and an alternates check read through the old descriptor,
// stood for a folder git no longer opens: without the kernel wall, the new
// folder's filter ran and git.show displayed another repository's commit.
type heldFolder struct {
	path string

	mu       sync.RWMutex
	fd       int
	dev, ino uint64
}

func openHeld(path string) (*heldFolder, error) {
	h := &heldFolder{path: path, fd: -1}
	if _, err := h.reopen(); err != nil {
		return nil, err
	}
	return h, nil
}

// at stats rel inside the held folder, not following a final symlink.
func (h *heldFolder) at(rel string) (fileid.ID, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return fileid.At(h.fd, rel)
}

// current makes sure the descriptor is on the folder the path leads to now,
// and reports whether it had to move (so the caller drops what it decided).
func (h *heldFolder) current() (moved bool, err error) {
	id, err := fileid.Lstat(h.path)
	if err != nil {
		return false, fmt.Errorf("gate: %w", err)
	}
	h.mu.RLock()
	same := id.Dev == h.dev && id.Ino == h.ino
	h.mu.RUnlock()
	if same {
		return false, nil
	}
	return h.reopen()
}

// reopen opens the path again and takes its identity from the descriptor
// (fstat), so the identity and the descriptor are one folder.
func (h *heldFolder) reopen() (bool, error) {
	fd, err := fileid.OpenDir(h.path)
	if err != nil {
		return false, fmt.Errorf("gate: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return false, fmt.Errorf("gate: %w", err)
	}
	h.mu.Lock()
	old := h.fd
	h.fd, h.dev, h.ino = fd, uint64(st.Dev), uint64(st.Ino)
	h.mu.Unlock()
	if old >= 0 {
		_ = unix.Close(old)
	}
	return old >= 0, nil
}

func (h *heldFolder) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	return err
}
