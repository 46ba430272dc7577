package gate

import (
	"bytes"
	"strings"
	"testing"
)

func TestSectionNames(t *testing.T) {
	for _, c := range []struct {
		patch string
		names []string
		known bool
	}{
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", []string{"x", "x", "x"}, true},
		{"diff --git a/a b b/a b\n--- a/a b\t\n+++ b/a b\t\n", []string{"a b", "a b", "a b"}, true},
		{"diff --git \"a/t\\tab\" \"b/t\\tab\"\nnew file mode 100644\n", []string{"t\tab", "t\tab"}, true},
		{"diff --git \"a/\\303\\251.env\" \"b/\\303\\251.env\"\n", []string{"é.env", "é.env"}, true},
		// A rename whose names hold " b/": the git line is ambiguous, the
		// rename lines are not.
		{"diff --git a/x b/y b/z b/w\nsimilarity index 100%\nrename from x b/y\nrename to z b/w\n", []string{"x b/y", "z b/w"}, true},
		{"diff --git a/x b/y b/z b/w\nsimilarity index 100%\n", nil, false},
		// Hunk lines are never read as headers.
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n--- a/.env\n++++ b/.env\n", []string{"x", "x", "x"}, true},
		{"diff --git a/.env b/.env\nBinary files a/.env and b/.env differ\n", []string{".env"}, true},
		{"diff --git x y\n", nil, false},
		{"diff --git \"a/broken b/x\n", nil, false},
	} {
		_, secs := splitPatch([]byte(c.patch))
		if len(secs) != 1 {
			t.Fatalf("%q: %d sections", c.patch, len(secs))
		}
		s := secs[0]
		if s.known != c.known || c.known && strings.Join(s.names, "|") != strings.Join(c.names, "|") {
			t.Errorf("%q: names %q known %v, want %q %v", c.patch, s.names, s.known, c.names, c.known)
		}
	}
}

func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"a", "t\tab", "é", "\"q\"", "back\\slash", "\x00\x7f\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" {
			return
		}
		got, ok := unquoteName(quoteName(name))
		if !ok || got != name {
			t.Fatalf("%q -> %q -> %q %v", name, quoteName(name), got, ok)
		}
	})
}

// Splitting never loses or adds a byte, whatever the input.
func FuzzSplitPatch(f *testing.F) {
	f.Add([]byte("head\ndiff --git a/x b/x\n+y\ndiff --git a/z b/z\n"))
	f.Add([]byte("diff --git \"a/\\"))
	f.Fuzz(func(t *testing.T, p []byte) {
		head, secs := splitPatch(p)
		var b bytes.Buffer
		b.Write(head)
		for _, s := range secs {
			b.Write(s.text)
			if !s.known && len(s.names) > 0 && s.names[0] == "" {
				t.Fatal("empty name")
			}
		}
		if !bytes.Equal(b.Bytes(), p) {
			t.Fatalf("split lost bytes")
		}
	})
}
