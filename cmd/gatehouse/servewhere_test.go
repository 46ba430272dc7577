package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSplitListen(t *testing.T) {
	for _, c := range []struct {
		listen string
		port   int
		mode   string
		want   int
		err    string
	}{
		{"auto", 0, "auto", 0, ""},
		{"loopback", 7000, "loopback", 7000, ""},
		{"127.0.0.1", 7000, "127.0.0.1", 7000, ""},
		{"127.0.0.1:28999", 0, "127.0.0.1", 28999, ""},
		{"127.0.0.1:28999", 28999, "127.0.0.1", 28999, ""},
		{"[::1]:28999", 0, "::1", 28999, ""},
		{"::1", 0, "::1", 0, ""},
		{"8.8.8.8:80", 0, "8.8.8.8", 80, ""}, // lan.Pick refuses it next
		{"127.0.0.1:28999", 1234, "", 0, "two ports"},
		{"127.0.0.1:99999", 0, "", 0, "0 to 65535"},
	} {
		mode, port, err := splitListen(c.listen, c.port)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s --port %d: %v, want %q", c.listen, c.port, err, c.err)
			}
			continue
		}
		if err != nil || mode != c.mode || port != c.want {
			t.Errorf("%s --port %d: %q %d %v", c.listen, c.port, mode, port, err)
		}
	}
}

// "/" is the whole computer, not "your home folder"; the home folder and
// its parents are named for what they are; a project says nothing.
func TestServedFolderWarning(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "src")
	for path, want := range map[string]string{
		"/":                                 "Serving / puts every folder",
		home:                                "Serving your home folder",
		filepath.Dir(home):                  "puts your home folder and more",
		project:                             "",
		home + "/../" + filepath.Base(home): "Serving your home folder",
	} {
		got := servedFolderWarning(path, home)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
		if path == "/" && strings.Contains(got, "home folder") {
			t.Errorf("/ is called a home folder: %q", got)
		}
	}
}
