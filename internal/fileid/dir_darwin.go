package fileid

import "golang.org/x/sys/unix"

// OpenDir opens a folder only to stat things relative to it.
func OpenDir(path string) (int, error) {
	return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}
