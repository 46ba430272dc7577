package gate

import (
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
)

// Arguments from a device never become options: ref names and object ids
// are validated here and go after --end-of-options, and paths go after "--"
// with GIT_LITERAL_PATHSPECS set, so no pathspec magic applies either.

// maxRefName bounds a ref name, in bytes.
const maxRefName = 255

// ValidBranch reports whether name is a branch name git accepts (the rules of
// git check-ref-format --branch) that also cannot be read as an option or a
// revision expression: no leading '-', no "@{", no "..".
func ValidBranch(name string) bool {
	if name == "" || len(name) > maxRefName || name == "@" || name == "HEAD" ||
		strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.Contains(name, "..") || strings.Contains(name, "@{") ||
		strings.Contains(name, "//") {
		return false
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for seg := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return false
		}
	}
	return true
}

// ValidOID reports whether s is a (possibly abbreviated) hexadecimal object
// id: 4 to 64 characters.
func ValidOID(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// cleanPaths validates device paths with fsguard's rules (relative, no "..",
// no .git in any spelling) and bounds their number.
func cleanPaths(unsafePaths []string, max int) ([]string, error) {
	if len(unsafePaths) == 0 {
		return nil, ErrNoPaths
	}
	if len(unsafePaths) > max {
		return nil, ErrTooManyPaths
	}
	out := make([]string, 0, len(unsafePaths))
	for _, p := range unsafePaths {
		clean, err := fsguard.ValidatePath(p)
		if err != nil {
			return nil, err
		}
		if clean == "." {
			return nil, fsguard.ErrInvalidPath
		}
		out = append(out, clean)
	}
	return out, nil
}

// maxChunk bounds the bytes of pathspecs given to one git process, far below
// any ARG_MAX.
const maxChunk = 8 << 10

// chunks splits paths into groups of at most maxChunk bytes.
func chunks(paths []string) [][]string {
	var out [][]string
	var cur []string
	size := 0
	for _, p := range paths {
		if size+len(p)+1 > maxChunk && len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, p)
		size += len(p) + 1
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
