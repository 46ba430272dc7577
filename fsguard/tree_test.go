package fsguard

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

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
func buildTree(t testing.TB, spec string) string {
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
