// Package hostile holds the shared table of hostile file trees that every
// file operation is tested against: fsguard's own tests and the request
// methods' tests run the same cases, so a method can never lose a rule its
// package keeps. Tests only.
package hostile

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BaseTree is in every hostile case: an inside file, a secret, the git
// folder, and an outside folder with a private key. Every byte a device must
// never see carries a marker.
const BaseTree = `
file outside/plain.txt = OUTSIDE-PLAIN-MARKER
file outside/id_rsa = OUTSIDE-KEY-MARKER
file outside/dir/plain.txt = OUTSIDE-DIR-MARKER
file root/a.txt = hello
file root/.env = SECRET-ENV-MARKER
file root/.git/config = GIT-CONFIG-MARKER
file root/src/main.go = package main
`

// markers a device below full must never read, and the ones no device may.
var (
	// NeverBelowFull are the markers a device below full must never read;
	// NeverAtAll, the ones no device may.
	NeverBelowFull = []string{"OUTSIDE-", "SECRET-", "GIT-CONFIG", "KEY-MARKER"}
	NeverAtAll     = []string{"OUTSIDE-", "GIT-CONFIG", "KEY-MARKER"}
)

// Case is one hostile tree and the path a device sends into it.
type Case struct {
	Name string
	Tree string
	Open string // the path the device sends
	// Want names the refusal for a device below full, WantFull for a full
	// device ("" when the read succeeds): outside, secret, hard-link, git,
	// not-regular, links, invalid, dir, not-found, not-dir. Each test maps
	// the names to its own package's refusals.
	Want, WantFull string
	// leak is what a plain read of the path returns: the proof that the
	// attack works without fsguard. "block" means the plain read blocks.
	Leak string
}

// Cases is the table every file operation runs against.
var Cases = []Case{
	{Name: "plain file", Open: "a.txt"},
	{Name: "symlink in, to a plain file", Tree: "symlink root/b.txt -> a.txt", Open: "b.txt"},
	{Name: "absolute symlink staying inside", Tree: "symlink root/b.txt -> $BASE/root/a.txt", Open: "b.txt"},
	{Name: "symlinked folder staying inside", Tree: "symlink root/lib -> src", Open: "lib/main.go"},
	{Name: "symlink out", Tree: "symlink root/a -> ../outside/plain.txt", Open: "a",
		Want: "outside", WantFull: "outside", Leak: "OUTSIDE-PLAIN-MARKER"},
	{Name: "absolute symlink out", Tree: "symlink root/a -> $BASE/outside/plain.txt", Open: "a",
		Want: "outside", WantFull: "outside", Leak: "OUTSIDE-PLAIN-MARKER"},
	{Name: "symlink out to a secret", Tree: "symlink root/notes.txt -> ../outside/id_rsa", Open: "notes.txt",
		Want: "secret", WantFull: "outside", Leak: "OUTSIDE-KEY-MARKER"},
	{Name: "symlinked folder out", Tree: "symlink root/docs -> ../outside/dir", Open: "docs/plain.txt",
		Want: "outside", WantFull: "outside", Leak: "OUTSIDE-DIR-MARKER"},
	{Name: "symlink to the parent", Tree: "symlink root/up -> ..", Open: "up/outside/plain.txt",
		Want: "outside", WantFull: "outside", Leak: "OUTSIDE-PLAIN-MARKER"},
	{Name: "symlink chain out", Tree: "symlink root/a -> b\nsymlink root/b -> ../outside/id_rsa", Open: "a",
		Want: "secret", WantFull: "outside", Leak: "OUTSIDE-KEY-MARKER"},
	{Name: "hard link to an outside key", Tree: "hardlink root/b = outside/id_rsa", Open: "b",
		Want: "hard-link", WantFull: "hard-link", Leak: "OUTSIDE-KEY-MARKER"},
	{Name: "hard link named like source", Tree: "hardlink root/notes.txt = outside/plain.txt", Open: "notes.txt",
		Want: "hard-link", WantFull: "hard-link", Leak: "OUTSIDE-PLAIN-MARKER"},
	{Name: "secret by name", Open: ".env", Want: "secret", Leak: "SECRET-ENV-MARKER"},
	{Name: "symlink to a secret inside", Tree: "symlink root/readme.txt -> .env", Open: "readme.txt",
		Want: "secret", Leak: "SECRET-ENV-MARKER"},
	{Name: "secret name upper case", Tree: "file root/CONFIG/.ENV.PRODUCTION = SECRET-PROD-MARKER", Open: "CONFIG/.ENV.PRODUCTION",
		Want: "secret", Leak: "SECRET-PROD-MARKER"},
	{Name: ".git", Open: ".git/config", Want: "git", WantFull: "git", Leak: "GIT-CONFIG-MARKER"},
	{Name: ".GIT", Open: ".GIT/config", Want: "git", WantFull: "git"},
	{Name: ".git. (Windows)", Open: ".git./config", Want: "git", WantFull: "git"},
	{Name: ".git with trailing space", Open: ".git /config", Want: "git", WantFull: "git"},
	{Name: ".git stream", Open: ".git::$INDEX_ALLOCATION/config", Want: "git", WantFull: "git"},
	{Name: "git~1", Open: "GIT~1/config", Want: "git", WantFull: "git"},
	{Name: "symlink to .git", Tree: "symlink root/g -> .git", Open: "g/config",
		Want: "git", WantFull: "git", Leak: "GIT-CONFIG-MARKER"},
	{Name: "symlink to .git/config", Tree: "symlink root/cfg.txt -> .git/config", Open: "cfg.txt",
		Want: "git", WantFull: "git", Leak: "GIT-CONFIG-MARKER"},
	{Name: "FIFO named like source", Tree: "fifo root/c.txt", Open: "c.txt",
		Want: "not-regular", WantFull: "not-regular", Leak: "block"},
	{Name: "FIFO named .gitignore", Tree: "fifo root/.gitignore", Open: ".gitignore",
		Want: "not-regular", WantFull: "not-regular", Leak: "block"},
	{Name: "symlink to a FIFO", Tree: "fifo root/p\nsymlink root/q.txt -> p", Open: "q.txt",
		Want: "not-regular", WantFull: "not-regular", Leak: "block"},
	{Name: "socket", Tree: "socket root/s.txt", Open: "s.txt", Want: "not-regular", WantFull: "not-regular"},
	{Name: "device node", Tree: "device root/zero.txt", Open: "zero.txt", Want: "not-regular", WantFull: "not-regular"},
	{Name: "symlink loop", Tree: "symlink root/l1 -> l2\nsymlink root/l2 -> l1", Open: "l1",
		Want: "links", WantFull: "links"},
	{Name: "dot-dot", Open: "../outside/plain.txt", Want: "invalid", WantFull: "invalid", Leak: "OUTSIDE-PLAIN-MARKER"},
	{Name: "dot-dot inside", Open: "src/../../outside/plain.txt", Want: "invalid", WantFull: "invalid", Leak: "OUTSIDE-PLAIN-MARKER"},
	{Name: "absolute path", Open: "/etc/passwd", Want: "invalid", WantFull: "invalid"},
	{Name: "NUL", Open: "a.txt\x00.png", Want: "invalid", WantFull: "invalid"},
	{Name: "folder", Open: "src", Want: "dir", WantFull: "dir"},
	{Name: "missing", Open: "nope.txt", Want: "not-found", WantFull: "not-found"},
	{Name: "through a file", Open: "a.txt/x", Want: "not-dir", WantFull: "not-dir"},
}

// PlainRead is what a reader without fsguard gets: os.ReadFile of the joined
// path, given a second before it is called blocked.
func PlainRead(base, rel string) string {
	done := make(chan string, 1)
	go func() {
		data, err := os.ReadFile(filepath.Join(base, "root", rel))
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(data)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(time.Second):
		return "block"
	}
}

// buildTree makes a file tree under a new temporary folder from lines of a
// small language, and returns that folder. Every path is relative to it; the
// served folder is by convention "root", with "outside" beside it.
//
//	file root/a.txt = hello          a regular file (content optional)
//	dir root/src                     a folder
//	symlink root/a -> ../outside/x   a symlink; $BASE in the target is the folder
//	hardlink root/b = outside/id_rsa a hard link to an existing file
//	fifo root/c.txt                  a named pipe
//	socket root/s                    a listening Unix socket
//	device root/null                 a character device (like /dev/null), if allowed
//
// Parent folders are made as needed.
func Build(t testing.TB, spec string) string {
	t.Helper()
	base := t.TempDir()
	for line := range strings.SplitSeq(spec, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, rest, _ := strings.Cut(line, " ")
		if err := makeEntry(t, base, kind, rest); err != nil {
			t.Fatalf("tree line %q: %v", line, err)
		}
	}
	return base
}

func makeEntry(t testing.TB, base, kind, rest string) error {
	name, arg := rest, ""
	for _, sep := range []string{" -> ", " = "} {
		if n, a, ok := strings.Cut(rest, sep); ok {
			name, arg = n, a
			break
		}
	}
	p := filepath.Join(base, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	switch kind {
	case "file":
		return os.WriteFile(p, []byte(arg), 0o644)
	case "dir":
		return os.MkdirAll(p, 0o755)
	case "symlink":
		return os.Symlink(strings.ReplaceAll(arg, "$BASE", base), p)
	case "hardlink":
		return os.Link(filepath.Join(base, arg), p)
	case "fifo":
		return unix.Mkfifo(p, 0o644)
	case "socket":
		l, err := net.Listen("unix", p)
		if err != nil {
			return err
		}
		t.Cleanup(func() { l.Close() })
		return nil
	case "device":
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Skipf("cannot make a device node here: %v", err)
		}
		return nil
	}
	return os.ErrInvalid
}
