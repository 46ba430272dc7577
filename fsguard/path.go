package fsguard

import (
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/hfsname"
)

// MaxPath bounds a path parameter, in bytes.
const MaxPath = 4096

// ValidatePath checks a path a device sent and returns it cleaned: relative,
// slash-separated, at most MaxPath bytes, no NUL, no "..", and no segment
// that is .git in any spelling a file system may treat as .git. "" and "."
// name the root itself and come back as ".".
//
// This is only the first check: the path may still lead through a symlink to
// .git, a secret or outside the root, which the open functions catch on what
// the path resolves to.
func ValidatePath(unsafePath string) (string, error) {
	if len(unsafePath) > MaxPath || !utf8.ValidString(unsafePath) ||
		strings.ContainsRune(unsafePath, 0) || strings.HasPrefix(unsafePath, "/") {
		return "", ErrInvalidPath
	}
	var segs []string
	for seg := range strings.SplitSeq(unsafePath, "/") {
		switch {
		case seg == "" || seg == ".":
			continue // "a//b", "./a", "a/" are harmless spellings
		case seg == "..":
			return "", ErrInvalidPath
		case IsGitName(seg):
			return "", ErrGitPath
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return ".", nil
	}
	return strings.Join(segs, "/"), nil
}

// IsGitName reports whether a single path segment names the .git folder on
// some file system: ".git" in any letter case (macOS and Windows fold case),
// with trailing dots or spaces (Windows drops them: ".git.", ".git "), with
// an NTFS stream suffix (".git::$INDEX_ALLOCATION"), the 8.3 short name
// "git~1", or with code points HFS+ ignores in a name (".g\u200cit"), as
// git's own is_hfs_dotgit reads them (utf8.c, next_hfs_char: CVE-2014-9390).
func IsGitName(seg string) bool {
	seg = hfsname.Strip(seg)
	if i := strings.IndexByte(seg, ':'); i >= 0 {
		seg = seg[:i]
	}
	seg = strings.TrimRight(seg, ". ")
	return strings.EqualFold(seg, ".git") || strings.EqualFold(seg, "git~1")
}

// hasGitSegment reports whether any segment of a clean relative path is a
// .git name: the check applied to what a path resolves to.
func hasGitSegment(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if IsGitName(seg) {
			return true
		}
	}
	return false
}
