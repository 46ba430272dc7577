//go:build !linux

package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// readFolder lists the folder rel for the walk, sorted by name; every entry
// counts against the walk's bound. gone reports a folder removed since its
// entry was read (a gc). Linux reads the kernel's records itself
// (layoutdir_linux.go).
func (w *layoutWalk) readFolder(rel string, inObjects bool) (ents []folderEntry, gone bool, err error) {
	des, err := os.ReadDir(filepath.Join(w.commonDir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("git folder: %w", err)
	}
	for _, e := range des {
		if w.entries++; w.entries > maxLayoutEntries {
			return nil, false, errLayoutTooLarge
		}
		if inObjects && e.Type().IsRegular() {
			continue
		}
		ents = append(ents, folderEntry{name: e.Name(), typ: e.Type()})
	}
	return ents, false, nil
}
