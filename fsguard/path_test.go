package fsguard

import (
	"errors"
	"strings"
	"testing"
)

func TestValidatePath(t *testing.T) {
	for in, want := range map[string]string{
		"":           ".",
		".":          ".",
		"a/b.txt":    "a/b.txt",
		"./a//b/":    "a/b",
		".gitignore": ".gitignore",
		".github/x":  ".github/x",
		"a/.gitx":    "a/.gitx",
		"git":        "git",
		"x.git":      "x.git",
	} {
		if got, err := ValidatePath(in); err != nil || got != want {
			t.Errorf("ValidatePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"..":                         ErrInvalidPath,
		"a/../b":                     ErrInvalidPath,
		"/etc":                       ErrInvalidPath,
		"a\x00b":                     ErrInvalidPath,
		"\xff":                       ErrInvalidPath,
		strings.Repeat("a", 4097):    ErrInvalidPath,
		".git":                       ErrGitPath,
		"a/.GIT/config":              ErrGitPath,
		".Git":                       ErrGitPath,
		".git.":                      ErrGitPath,
		".git...":                    ErrGitPath,
		".git ":                      ErrGitPath,
		".git . ":                    ErrGitPath,
		".git::$INDEX_ALLOCATION":    ErrGitPath,
		".git:stream:$DATA/config":   ErrGitPath,
		"GIT~1":                      ErrGitPath,
		"sub/git~1/hooks/pre-commit": ErrGitPath,
	} {
		if _, err := ValidatePath(in); !errors.Is(err, want) {
			t.Errorf("ValidatePath(%q) = %v, want %v", in, err, want)
		}
	}
}

func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"a/b", "../x", ".git", "a/.GIT. /b", "x\x00", "/abs", "./a//b/", "git~1", ".git::$DATA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ValidatePath(in)
		if err != nil {
			return
		}
		if len(out) > MaxPath || strings.HasPrefix(out, "/") || strings.ContainsRune(out, 0) {
			t.Fatalf("%q -> %q", in, out)
		}
		if out != "." {
			for _, seg := range strings.Split(out, "/") {
				if seg == "" || seg == "." || seg == ".." || IsGitName(seg) {
					t.Fatalf("%q -> %q has segment %q", in, out, seg)
				}
			}
		}
		if again, err := ValidatePath(out); err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
	})
}
