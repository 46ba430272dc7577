package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/trust"
)

// MaxDiff is where a diff reply is cut.
const MaxDiff = 120 << 10

// maxPreviews bounds the untracked files previewed in one diff.
const maxPreviews = 5_000

// previewReads counts the untracked files read for previews, in every
// Repo: a test counts the work an operation does with it (StageHunks reads
// none).
var previewReads atomic.Int64

// Diff is a checkout's changes as a unified diff.
type Diff struct {
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
	// HiddenSecrets counts the files left out: secret files below the full
	// grant, hard-linked files for every device, and sections whose names
	// could not be read.
	HiddenSecrets int `json:"hiddenSecrets,omitempty"`
	// HiddenFiltered counts the work-tree changes left out because the
	// file goes through a filter driver (Git LFS) that a closed call
	// switches off: git would compare the smudged file with the clean
	// pointer and show a change that is not there (filtered.go).
	HiddenFiltered int `json:"hiddenFiltered,omitempty"`
	// Hash is the SHA-256 (hex) of Diff, for a whole diff of one named
	// path: a device sends it back with git.stageHunks so the host knows
	// the hunks it names are the ones it saw.
	Hash string `json:"hash,omitempty"`
}

// DiffOptions choose what Diff shows.
type DiffOptions struct {
	Path   string // one file ("" for all), relative to the checkout
	Staged bool   // the index against HEAD, instead of the work tree against the index
}

// Diff returns the diff of the work tree (with untracked files previewed) or
// of the index, for a caller with trust t and grant g.
func (r *Repo) Diff(ctx context.Context, t trust.Trust, g trust.Grant, o DiffOptions) (*Diff, error) {
	v := viewer{t, g}
	var path string
	if o.Path != "" {
		p, err := cleanPaths([]string{o.Path}, 1)
		if err != nil {
			return nil, err
		}
		path = p[0]
		if err := r.refuseNamed(v, path); err != nil {
			return nil, err
		}
	}
	d, err := r.decide(ctx, t, readGate, "see its changes")
	if err != nil {
		return nil, err
	}
	out, err := r.diff(ctx, t, d, v, path, o.Staged)
	if err != nil {
		return nil, err
	}
	if path != "" && !out.Truncated {
		out.Hash = diffHash(out.Diff)
	}
	return out, nil
}

// diffHash names one diff text; git.stageHunks compares it.
func diffHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// diff runs the diff Diff shows, under decision d: git's part (gitDiff)
// with the previews of untracked files after it, listed and rendered on the
// other core while git diff runs.
func (r *Repo) diff(ctx context.Context, t trust.Trust, d *decision, v viewer, path string, staged bool) (*Diff, error) {
	if err := r.refuseFilteredPath(ctx, t, d, path, staged); err != nil {
		return nil, err
	}
	var (
		previews      bytes.Buffer
		previewHidden int
		listErr       error
		previewsReady sync.WaitGroup
	)
	if !staged {
		previewsReady.Go(func() {
			var files []string
			if files, listErr = r.untracked(ctx, t, d, path); listErr == nil {
				previewHidden = r.previews(&previews, files, v)
			}
		})
	}
	g, err := r.gitDiff(ctx, t, d, v, path, staged)
	previewsReady.Wait()
	if err != nil {
		return nil, err
	}
	if listErr != nil {
		return nil, listErr
	}
	out := &Diff{HiddenFiltered: g.filtered, HiddenSecrets: g.hidden + previewHidden}
	out.Diff, out.Truncated = cut(append(g.patch, previews.Bytes()...), g.truncated)
	return out, nil
}

// refuseFilteredPath refuses the work-tree diff of one named path that goes
// through a switched-off filter driver (filtered.go): git would show a
// change that is not there.
func (r *Repo) refuseFilteredPath(ctx context.Context, t trust.Trust, d *decision, path string, staged bool) error {
	if path == "" || staged {
		return nil
	}
	f, err := r.filtered(ctx, t, d, []string{path})
	if err != nil {
		return err
	}
	if driver, ok := f[path]; ok {
		return refuseFiltered(path, driver, "show the changes of")
	}
	return nil
}

// gitPart is what git diff wrote, as a viewer may see it: the part of a
// diff a device can stage hunks of.
type gitPart struct {
	patch     []byte
	truncated bool // git's output reached its bound
	hidden    int  // sections left out (Repo.hides)
	filtered  int  // sections left out for a switched-off filter driver
}

// gitDiff runs git diff for Diff and StageHunks under decision d (after
// refuseFilteredPath), and keeps the sections v may see. It neither lists nor previews untracked files:
// StageHunks needs only this, since no hunk of a preview is in the index.
func (r *Repo) gitDiff(ctx context.Context, t trust.Trust, d *decision, v viewer, path string, staged bool) (*gitPart, error) {
	opts := []string{"--find-renames"} // the rest is subDiff's flags
	if staged {
		opts = append(opts, "--cached")
	}
	c := call{sub: subDiff, opts: opts}
	if path != "" {
		c.paths = []string{path}
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, err
	}
	g := &gitPart{truncated: res.truncated}
	patch := res.stdout
	if !staged {
		if patch, g.filtered, err = r.dropFiltered(ctx, t, d, patch); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	g.hidden = r.filterPatch(&buf, patch, v, true)
	g.patch = buf.Bytes()
	return g, nil
}

// dropFiltered leaves out of a work-tree patch the sections of files that go
// through a switched-off filter driver (filtered), and counts them.
func (r *Repo) dropFiltered(ctx context.Context, t trust.Trust, d *decision, patch []byte) ([]byte, int, error) {
	if !t.Closed() || len(d.defined["filter"]) == 0 || r.filteredOffForTest {
		return patch, 0, nil
	}
	head, secs := splitPatch(patch)
	var names []string
	seen := map[string]bool{}
	for _, s := range secs {
		for _, n := range s.names {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	f, err := r.filtered(ctx, t, d, names)
	if err != nil || len(f) == 0 {
		return patch, 0, err
	}
	var out bytes.Buffer // never head's array: it is patch's, still being read
	out.Write(head)
	n := 0
	for _, s := range secs {
		if slices.ContainsFunc(s.names, func(name string) bool { _, ok := f[name]; return ok }) {
			n++
			continue
		}
		out.Write(s.text)
	}
	return out.Bytes(), n, nil
}

// untracked lists untracked files (honouring .gitignore), for previews.
// The whole checkout's list is kept between calls while a watcher covers
// it (listcache.go); the caller gets its own copy of the slice.
func (r *Repo) untracked(ctx context.Context, t trust.Trust, d *decision, path string) ([]string, error) {
	if path != "" {
		files, _, err := r.lsUntracked(ctx, t, d, path)
		return files, err
	}
	v, err := r.cachedList(ctx, t, d, listUntracked, func() (any, int, error) {
		return r.lsUntracked(ctx, t, d, "")
	})
	if err != nil {
		return nil, err
	}
	return slices.Clone(v.([]string)), nil
}

// lsUntracked runs git's listing for untracked, sorted, and says the
// memory it holds.
func (r *Repo) lsUntracked(ctx context.Context, t trust.Trust, d *decision, path string) ([]string, int, error) {
	c := call{sub: subLsFiles, opts: []string{"--others", "--exclude-standard", "-z"}}
	if path != "" {
		c.paths = []string{path}
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, 0, err
	}
	var files []string
	size := 0
	for p := range bytes.SplitSeq(res.stdout, []byte{0}) {
		if len(p) > 0 {
			files = append(files, string(p))
			size += len(p) + listEntryOverhead
		}
	}
	sort.Strings(files)
	return files, size, nil
}

// filterPatch copies the sections of patch the viewer may see into w and
// returns how many it left out. worktree says the new side is the work tree,
// so a hard link there matters.
func (r *Repo) filterPatch(w *bytes.Buffer, patch []byte, v viewer, worktree bool) int {
	head, secs := splitPatch(patch)
	w.Write(head)
	hidden := 0
	for _, s := range secs {
		if r.hides(s, v, worktree) {
			hidden++
			continue
		}
		w.Write(s.text)
	}
	return hidden
}

// hides decides one section: a section any of whose names the viewer may
// not see (Repo.hidden) is left out, as is one whose names could not all
// be read, for any viewer who is hidden anything.
func (r *Repo) hides(s section, v viewer, worktree bool) bool {
	if !v.hidesSecrets() && !v.hidesLinks() {
		return false
	}
	if !s.known || len(s.names) == 0 {
		return true
	}
	for i, n := range s.names {
		if slices.Contains(s.names[:i], n) {
			continue // the same name on the diff --git, --- and +++ lines
		}
		if r.hidden(v, n, worktree) != shown {
			return true
		}
	}
	return false
}

// previews renders each untracked file as a new-file diff, from fsguard
// reads: a secret (below full), a hard-linked file, a FIFO or a symlink never
// reaches git's --no-index path, or anything else. It returns how many
// files it left out for those reasons.
func (r *Repo) previews(w *bytes.Buffer, files []string, v viewer) int {
	hidden := 0
	g := v.g
	if v.t.IsDesktop() {
		g = trust.Full
	}
	for i, f := range files {
		if i >= maxPreviews || w.Len() > MaxDiff {
			break
		}
		info, err := r.root.Stat(f)
		if err != nil || info.Kind == "dir" {
			continue
		}
		if info.Kind == "symlink" {
			writeNewSymlink(w, f)
			continue
		}
		previewReads.Add(1)
		txt, err := r.root.ReadText(g, f, 0)
		switch {
		case errors.Is(err, fsguard.ErrSecret), errors.Is(err, fsguard.ErrHardLink):
			if !v.t.IsDesktop() || errors.Is(err, fsguard.ErrSecret) {
				hidden++
			}
			continue
		case err != nil:
			continue // a FIFO, a device, a file that went away: nothing to show
		}
		writeNewFile(w, f, txt, info)
	}
	return hidden
}

func writeNewFile(w *bytes.Buffer, name string, txt fsguard.Text, info fsguard.Info) {
	a, b := quoteName("a/"+name), quoteName("b/"+name)
	mode := "100644"
	if info.Exec {
		mode = "100755"
	}
	fmt.Fprintf(w, "diff --git %s %s\nnew file mode %s\n", a, b, mode)
	if txt.Binary {
		fmt.Fprintf(w, "Binary files /dev/null and %s differ\n", b)
		return
	}
	if txt.Text == "" {
		return
	}
	text := txt.Text
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	fmt.Fprintf(w, "--- /dev/null\n+++ %s\n@@ -0,0 +1", b)
	if len(lines) != 1 {
		fmt.Fprintf(w, ",%d", len(lines))
	}
	w.WriteString(" @@\n")
	for _, l := range lines {
		w.WriteByte('+')
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if !strings.HasSuffix(text, "\n") {
		w.WriteString("\\ No newline at end of file\n")
	}
}

func writeNewSymlink(w *bytes.Buffer, name string) {
	fmt.Fprintf(w, "diff --git %s %s\nnew file mode 120000\n", quoteName("a/"+name), quoteName("b/"+name))
}

// cut bounds a diff at MaxDiff, at a line end when it can.
func cut(b []byte, truncated bool) (string, bool) {
	if len(b) <= MaxDiff {
		return string(b), truncated
	}
	b = b[:MaxDiff]
	if i := bytes.LastIndexByte(b, '\n'); i > 0 {
		b = b[:i+1]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), true
}
