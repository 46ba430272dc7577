package gate

import (
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Arguments from a device never become options: ref names and object ids
// are validated here and go after --end-of-options, and paths go after "--"
// with GIT_LITERAL_PATHSPECS set, so no pathspec magic applies either.
// The runner checks the shape once more (fixedShape), as the last wall
// behind the validators.

// ErrOptionShaped is a ref or object id that starts with '-', reaching the
// runner: every validator refuses one first, so this is a gatehouse bug
// stopped before git starts, never a repository's doing.
var ErrOptionShaped = refusal.New(refusal.BadParams, "option-shaped argument",
	"A branch or commit name can't start with '-'.")

// fixedShape refuses a call whose ref or object id argument git could read
// as an option (--output=FILE writes a file; --upload-pack=CMD runs one),
// whatever the subcommand's own parsing would do with --end-of-options.
func fixedShape(c call) error {
	for _, a := range c.args {
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("git %s: %q: %w", c.sub.name, a, ErrOptionShaped)
		}
	}
	return nil
}

// pathspec spells a validated path for git's command line. A file may be
// named "-rf"; after "--" git reads it as a path already, and "./-rf" (which
// git's pathspec parsing turns back into "-rf", literal pathspecs or not)
// keeps even that word from ever starting with '-'.
func pathspec(clean string) string {
	if strings.HasPrefix(clean, "-") {
		return "./" + clean
	}
	return clean
}

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
