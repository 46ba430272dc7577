package gate

import (
	"bytes"
	"context"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/trust"
)

// The bounds of a paged diff: a page holds at most DiffPageFiles files and
// stops adding files once their diffs pass MaxDiff (one file alone is cut
// at MaxDiff), so a change of thousands of files arrives a page at a time.
const (
	DiffPageFiles    = 100
	diffPageDefault  = 20
	maxDiffPageFiles = 50_000 // the changed files a listing keeps
)

// DiffPage is one page of a checkout's whole diff, file by file: every
// file the viewer may see, in the order git diff shows them, the
// untracked files' previews after them.
type DiffPage struct {
	Files  []DiffFile `json:"files"`
	Total  int        `json:"total"`          // the files of the whole diff the viewer may see
	Next   int        `json:"next,omitempty"` // the offset of the next page, when there is one
	Staged bool       `json:"staged,omitempty"`
	// HiddenSecrets counts the files of the whole diff left out: secrets
	// below the full grant, hard-linked files for every device, names git
	// gave that are not paths gatehouse takes.
	HiddenSecrets int `json:"hiddenSecrets,omitempty"`
}

// DiffFile is one file's part of a DiffPage.
type DiffFile struct {
	Path      string `json:"path"`
	Untracked bool   `json:"untracked,omitempty"`
	Added     int    `json:"added"`
	Deleted   int    `json:"deleted"`
	Binary    bool   `json:"binary,omitempty"`
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated,omitempty"`
	// Secret: a secret file (secretEntry), which only a device with the
	// full grant is shown; the page marks it as the changes screen does.
	Secret bool `json:"secret,omitempty"`
	// Filtered: the file goes through a filter driver (Git LFS) the closed
	// gate switches off, so its work-tree diff is not shown (filtered.go).
	Filtered bool `json:"filtered,omitempty"`
}

// DiffPageOptions choose a page.
type DiffPageOptions struct {
	Staged bool // the index against HEAD, instead of the work tree against the index
	Offset int  // the first file, 0-based
	Limit  int  // at most DiffPageFiles files (0: a default page)
}

// DiffPage returns one page of the whole diff for a caller with trust t and
// grant g. Rename detection is off (--no-renames), so the listing and each
// page agree on which files there are: a rename is a deletion and an
// addition. Every file is judged by the visibility rule (Repo.hidden)
// before it is listed, and each page's sections again by Repo.hides.
func (r *Repo) DiffPage(ctx context.Context, t trust.Trust, g trust.Grant, o DiffPageOptions) (*DiffPage, error) {
	limit := o.Limit
	if limit <= 0 || limit > DiffPageFiles {
		limit = diffPageDefault
	}
	v := viewer{t, g}
	d, err := r.decide(ctx, t, readGate, "see its changes")
	if err != nil {
		return nil, err
	}
	tracked, untracked, hidden, err := r.changedFiles(ctx, t, d, v, o.Staged)
	if err != nil {
		return nil, err
	}
	p := &DiffPage{Files: []DiffFile{}, Total: len(tracked) + len(untracked), Staged: o.Staged, HiddenSecrets: hidden}
	if o.Offset < 0 || o.Offset >= p.Total {
		return p, nil
	}
	end := min(o.Offset+limit, p.Total)
	pageTracked := tracked[min(o.Offset, len(tracked)):min(end, len(tracked))]
	pageUntracked := untracked[max(o.Offset-len(tracked), 0):max(end-len(tracked), 0)]
	files, err := r.trackedPage(ctx, t, d, v, pageTracked, o.Staged)
	if err != nil {
		return nil, err
	}
	for _, f := range pageUntracked {
		files = append(files, r.untrackedFile(v, f))
	}
	size := 0
	for _, f := range files {
		f.Secret = r.secretEntry(FileStatus{Path: f.Path}) != ""
		if size > MaxDiff {
			break
		}
		size += len(f.Diff) + len(f.Path)
		p.Files = append(p.Files, f)
	}
	if next := o.Offset + len(p.Files); next < p.Total {
		p.Next = next
	}
	return p, nil
}

// changedFiles lists the files of the whole diff the viewer may see, and
// counts those it may not.
func (r *Repo) changedFiles(ctx context.Context, t trust.Trust, d *decision, v viewer, staged bool) (tracked, untracked []string, hidden int, err error) {
	opts := []string{"--no-renames", "--name-only", "-z"}
	if staged {
		opts = append(opts, "--cached")
	}
	res, err := r.run(ctx, t, d, call{sub: subDiff, opts: opts})
	if err != nil {
		return nil, nil, 0, err
	}
	var names []string
	for n := range bytes.SplitSeq(res.stdout, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	if !staged {
		more, err := r.untracked(ctx, t, d, "")
		if err != nil {
			return nil, nil, 0, err
		}
		untracked = more
	}
	tracked, h1 := r.visibleNames(v, names)
	untracked, h2 := r.visibleNames(v, untracked)
	return tracked, untracked, h1 + h2, nil
}

// visibleNames keeps the names the viewer may see (Repo.hidden, the work
// tree's copy counting) that are paths gatehouse takes, at most
// maxDiffPageFiles of them.
func (r *Repo) visibleNames(v viewer, names []string) ([]string, int) {
	var out []string
	hidden := 0
	for _, n := range names {
		clean, err := fsguard.ValidatePath(n)
		if err != nil || clean != n || r.hidden(v, n, true) != shown {
			hidden++
			continue
		}
		if len(out) < maxDiffPageFiles {
			out = append(out, n)
		}
	}
	return out, hidden
}

// trackedPage diffs the page's tracked files in one git call and splits the
// patch by file. A file that goes through a switched-off filter driver is
// not diffed (filtered.go).
func (r *Repo) trackedPage(ctx context.Context, t trust.Trust, d *decision, v viewer, names []string, staged bool) ([]DiffFile, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var filtered map[string]string
	if !staged {
		f, err := r.filtered(ctx, t, d, names)
		if err != nil {
			return nil, err
		}
		filtered = f
	}
	var paths []string
	for _, n := range names {
		if _, ok := filtered[n]; !ok {
			paths = append(paths, n)
		}
	}
	sections := map[string][]byte{}
	if len(paths) > 0 {
		opts := []string{"--no-renames"}
		if staged {
			opts = append(opts, "--cached")
		}
		res, err := r.run(ctx, t, d, call{sub: subDiff, opts: opts, paths: paths})
		if err != nil {
			return nil, err
		}
		_, secs := splitPatch(res.stdout)
		for _, s := range secs {
			if r.hides(s, v, true) || len(s.names) == 0 {
				continue
			}
			sections[s.names[0]] = append(sections[s.names[0]], s.text...)
		}
	}
	files := make([]DiffFile, 0, len(names))
	for _, n := range names {
		f := DiffFile{Path: n}
		if _, ok := filtered[n]; ok {
			f.Filtered = true
		} else {
			f.fill(sections[n], false)
		}
		files = append(files, f)
	}
	return files, nil
}

// untrackedFile previews one untracked file as git.diff does: read through
// fsguard's read rule (Repo.previews), which leaves out a secret, a
// hard-linked file, a FIFO.
func (r *Repo) untrackedFile(v viewer, name string) DiffFile {
	var buf bytes.Buffer
	r.previews(&buf, []string{name}, v)
	f := DiffFile{Path: name, Untracked: true}
	f.fill(buf.Bytes(), false)
	return f
}

// fill sets a file's diff, cut at MaxDiff, and counts its lines.
func (f *DiffFile) fill(text []byte, truncated bool) {
	f.Diff, f.Truncated = cut(text, truncated)
	inHunk := false
	for line := range strings.SplitSeq(f.Diff, "\n") {
		switch {
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case !inHunk && strings.HasPrefix(line, "Binary files "):
			f.Binary = true
		case inHunk && strings.HasPrefix(line, "+"):
			f.Added++
		case inHunk && strings.HasPrefix(line, "-"):
			f.Deleted++
		case strings.HasPrefix(line, gitHeader):
			inHunk = false
		}
	}
}
