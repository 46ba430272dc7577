package gate

import (
	"bytes"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// PatchFile is one file's section of a patch gh printed (a pull request's
// diff), as a device may see it: its names, how it changed, its added and
// deleted line counts, and its text, which the caller cuts (MaxFileDiff).
type PatchFile struct {
	Path    string `json:"path"`
	OldPath string `json:"oldPath,omitempty"`
	// Status is added, deleted, renamed, copied, binary or modified.
	Status  string `json:"status"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Text    []byte `json:"-"`
}

// MaxFileDiff is where one file's section of a paged pull request diff is
// cut: the same bound as a whole diff reply.
const MaxFileDiff = MaxDiff

// PatchFiles cuts a patch gh printed into its files, as a viewer of grant
// gr may see them: the sections FilterPatch would drop (secret files below
// full, hard-linked files, sections whose names cannot be read) are left
// out by the same rule (Repo.hides) and counted in hidden.
func (g *GH) PatchFiles(gr trust.Grant, patch []byte) (files []PatchFile, hidden int) {
	_, secs := splitPatch(patch)
	v := viewer{g.t, gr}
	for _, s := range secs {
		if !s.known || len(s.names) == 0 || g.r.hides(s, v, false) {
			hidden++
			continue
		}
		files = append(files, patchFile(s))
	}
	return files, hidden
}

// patchFile reads one known section's names, status and line counts. Lines
// count from the first hunk on, so a deleted line that reads "-- x" is
// never taken for a header.
func patchFile(s section) PatchFile {
	f := PatchFile{Path: s.names[0], Status: "modified", Text: s.text}
	if len(s.names) > 1 && s.names[1] != s.names[0] {
		f.OldPath, f.Path = s.names[0], s.names[1]
	}
	inHunks := false
	for line := range bytes.SplitSeq(s.text, []byte("\n")) {
		l := string(line)
		switch {
		case inHunks && strings.HasPrefix(l, "+"):
			f.Added++
		case inHunks && strings.HasPrefix(l, "-"):
			f.Deleted++
		case strings.HasPrefix(l, "@@"):
			inHunks = true
		case inHunks:
		case strings.HasPrefix(l, "new file mode"):
			f.Status = "added"
		case strings.HasPrefix(l, "deleted file mode"):
			f.Status = "deleted"
		case strings.HasPrefix(l, "rename from"):
			f.Status = "renamed"
		case strings.HasPrefix(l, "copy from"):
			f.Status = "copied"
		case strings.HasPrefix(l, "Binary files"), strings.HasPrefix(l, "GIT binary patch"):
			f.Status = "binary"
		}
	}
	if f.Status == "added" || f.Status == "deleted" {
		f.OldPath = ""
	}
	return f
}

// CutFileDiff is one file's section for a device: cut at MaxFileDiff on a
// line's end, valid UTF-8, and whether it was cut.
func CutFileDiff(text []byte) (string, bool) { return cut(text, false) }
