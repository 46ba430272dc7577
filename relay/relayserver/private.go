package relayserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// The relay's data folder holds the secret that signs every token and the
// database of accounts and devices. Another local user who could write
// there before the relay starts could plant either (a secret they know
// mints tokens for any account; a database they wrote holds their devices),
// and one who could read the secret could mint tokens too. So the relay
// starts only on a folder no other user can write, and on files only its
// own user owns and reads.

// CheckDataDir refuses a data folder that is not a folder of this user, or
// that other users can write into.
func CheckDataDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("relay: data folder: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("relay: the data folder %s is not a folder", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("relay: the data folder %s belongs to another user (uid %d); use a folder of your own, mode 0700", dir, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("relay: other users can write into the data folder %s (mode %o), and so plant its secret or database; use a folder only you can write (chmod 700)", dir, fi.Mode().Perm())
	}
	return nil
}

// errNotOwn: a data file that another user owns, or that is not a regular
// file.
var errNotOwn = errors.New("belongs to another user or is not a regular file")

// checkOwnFile refuses a data file (when it exists) that is not a regular
// file of this user. A missing file is fine.
func checkOwnFile(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("relay: %s %w; remove it", path, errNotOwn)
	}
	return nil
}
