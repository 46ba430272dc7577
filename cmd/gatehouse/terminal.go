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
