package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// isInteractive reports whether r is a terminal a person can answer at
// (not /dev/null, which is a character device too).
func isInteractive(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// rawKeys puts terminal f in cbreak mode: each key is read as it is
// pressed and not echoed, while Ctrl-C stays a signal (ISIG) and output is
// unchanged (OPOST). It returns what puts the terminal back.
func rawKeys(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlReadTermios)
	if err != nil {
		return nil, err
	}
	keys := *old
	keys.Lflag &^= unix.ICANON | unix.ECHO
	keys.Cc[unix.VMIN], keys.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlWriteTermios, &keys); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlWriteTermios, old) }, nil
}
