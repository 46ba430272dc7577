package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// selfCommand is how the person can run this gatehouse again from another
// terminal, for the commands a hint names ('gatehouse devices link'):
// "gatehouse" when that name on PATH is this very binary, else this
// binary's absolute path, quoted for a POSIX shell when it needs it. A
// newcomer who ran "$(go env GOPATH)/bin/gatehouse serve ." with that folder
// not on PATH was told to run 'gatehouse devices link', and the shell
// answered "command not found".
func selfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "gatehouse"
	}
	return commandFor(self)
}

// commandFor is selfCommand for the binary at self.
func commandFor(self string) string {
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	if onPath, err := exec.LookPath("gatehouse"); err == nil {
		if real, err := filepath.EvalSymlinks(onPath); err == nil && sameFile(real, self) {
			return "gatehouse"
		}
	}
	if strings.Contains(self, filepath.Join("go-build", "")) {
		return "gatehouse" // go run's temporary build: its path means nothing to the person
	}
	return shellQuote(self)
}

// sameFile reports whether a and b name one file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and /._-+:@%.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
