package gate

import (
	"bytes"
	"slices"
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
		// Combined headers carry one name, quoted as git quotes it; their
		// --- lines may name each parent (--combined-all-paths).
		{"diff --cc .env\nindex 1,2..3\n--- a/.env\n+++ b/.env\n@@@ -1 -1 +1 @@@\n- A\n", []string{".env", ".env", ".env"}, true},
		{"diff --combined \"t\\tab\"\n", []string{"t\tab"}, true},
		{"diff --cc notes.txt\n--- a/.env\n--- a/old\n+++ b/notes.txt\n", []string{"notes.txt", ".env", "old", "notes.txt"}, true},
		{"diff --cc \"broken\n", nil, false},
		{"diff --cc x\n--- .env\n", nil, false},
		// An ambiguous git line must be named exactly by the lines after it.
		{"diff --git a/.env b/x b/y\n--- a/x\n+++ b/x\n", nil, false},
		// A header git does not write fails closed.
		{"diff --foo .env\n+SECRET=1\n", nil, false},
		{"diff -r a/.env b/.env\n", nil, false},
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

// A header git writes in another form than --git starts its own section,
// instead of riding in the file before it (the cases of combined_test.go).
func TestEveryDiffLineStartsASection(t *testing.T) {
	patch := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --cc .env\nindex 1,2..0\n--- a/.env\n+++ b/.env\n@@@ -1,1 -1,1 +1,1 @@@\n++SECRET=1\n" +
		"diff --unknown .env\n+SECRET=2\n"
	head, secs := splitPatch([]byte(patch))
	if len(head) != 0 || len(secs) != 3 {
		t.Fatalf("head %q, %d sections", head, len(secs))
	}
	if !strings.Contains(string(secs[1].text), "SECRET=1") || distinct(secs[1].names) != ".env" || !secs[1].known {
		t.Errorf("combined section %q names %q known %v", secs[1].text, secs[1].names, secs[1].known)
	}
	if secs[2].known || strings.Contains(string(secs[0].text), "SECRET") {
		t.Errorf("unknown header read as known, or a secret rode in the file before it")
	}
}

// fuzzSecret marks a secret name in FuzzNoHeaderHidesASecret.
const fuzzSecret = ".env"

// Whatever the input, no line starting "diff " escapes the splitter (in the
// head, or inside another section), and a section the filter would keep
// (known, no name holding the secret) has no header line that names the
// secret: not its "diff " line, ---/+++ lines, rename or copy lines.
func FuzzNoHeaderHidesASecret(f *testing.F) {
	for _, seed := range []string{
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ndiff --cc .env\n++S\n",
		"diff --cc \"t\\tab.env\"\n--- a/.env\n--- a/y\n+++ b/z\n",
		"diff --git a/x b/.env b/y\nrename from x\nrename to y\n",
		"diff --git a/.env b/x b/x\nrename from .env b/x\nrename to x\n",
		"head\ndiff --combined .env\nBinary files differ\n",
		"* Unmerged path .env\ndiff --foo .env\n",
		"diff --git \"a/\\056env\" b/x\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		head, secs := splitPatch(p)
		if hasDiffLine(head, 0) {
			t.Fatalf("a diff line in the head %q", head)
		}
		for _, s := range secs {
			if !bytes.HasPrefix(s.text, []byte("diff ")) || hasDiffLine(s.text, 1) {
				t.Fatalf("section %q does not hold exactly one diff line, first", s.text)
			}
			if !s.known || slices.ContainsFunc(s.names, func(n string) bool { return strings.Contains(n, fuzzSecret) }) {
				continue // hidden below full
			}
			lines := strings.Split(string(s.text), "\n")
			for i, l := range lines {
				if i > 0 && (strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "Binary files") || strings.HasPrefix(l, "GIT binary patch")) {
					break
				}
				if strings.Contains(l, fuzzSecret) && namesLine(l) {
					t.Fatalf("kept section %q (names %q) has header %q", s.text, s.names, l)
				}
			}
		}
	})
}

// hasDiffLine reports whether a line after the first skip lines of b starts
// with "diff ".
func hasDiffLine(b []byte, skip int) bool {
	for i, l := range bytes.Split(b, []byte("\n")) {
		if i >= skip && bytes.HasPrefix(l, []byte("diff ")) {
			return true
		}
	}
	return false
}

func namesLine(l string) bool {
	for _, p := range []string{"diff ", "--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}
