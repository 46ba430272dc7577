package gate

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// MaxHunks bounds the hunks one git.stageHunks names.
const MaxHunks = 1_000

var (
	ErrDiffChanged = refusal.New(refusal.Conflict, "diff changed since it was viewed",
		"This file changed since you looked at it. Look again and retry.")
	ErrBadHunks = refusal.New(refusal.BadParams, "bad hunk choice",
		"Choose one or more hunks of this file's diff, by their position.")
	ErrNoHunks = refusal.New(refusal.BadParams, "no hunks to choose from",
		"This change can't be staged by hunks; stage the whole file.")
)

// HunksOptions name hunks of one file's diff by position (0-based), with
// the Hash that git.diff gave for the diff the device saw. Staged picks
// hunks of the staged diff, to unstage them.
type HunksOptions struct {
	Path   string
	Hunks  []int
	Hash   string
	Staged bool
}

// HunksResult counts the hunks applied to the index.
type HunksResult struct {
	Count int `json:"count"`
}

// StageHunks stages (or, with Staged, unstages) chosen hunks of one file.
// The device never sends patch text: the host runs the diff again (the one
// Diff shows), refuses if its hash is not the one the device saw, and
// applies the header and the chosen hunks of its own text to the index.
// Secret files below full and hard-linked files are refused as Stage
// refuses them.
func (r *Repo) StageHunks(ctx context.Context, t trust.Trust, g trust.Grant, o HunksOptions) (*HunksResult, error) {
	p, err := cleanPaths([]string{o.Path}, 1)
	if err != nil {
		return nil, err
	}
	path := p[0]
	picked, err := checkHunks(o.Hunks, o.Hash)
	if err != nil {
		return nil, err
	}
	verb, action := "stage", "stage files"
	if o.Staged {
		verb, action = "unstage", "unstage files"
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, action)
	if err != nil {
		return nil, err
	}
	v := viewer{t, g}
	switch r.hidden(v, path, true) {
	case secretHidden:
		return nil, refuseSecret(path, verb)
	case linkHidden:
		return nil, refuseHardLinked(path, verb)
	}
	patch, err := r.hunkPatch(ctx, t, d, v, path, o, picked)
	if err != nil {
		return nil, err
	}
	c := call{sub: subApply, stdin: bytes.NewReader(patch)}
	if o.Staged {
		c.opts = []string{"--reverse"}
	}
	if res, err := r.run(ctx, t, d, c); err != nil {
		return nil, gitFailure(res, err)
	}
	return &HunksResult{Count: len(picked)}, nil
}

// checkHunks validates what a device controls before any process starts:
// a bounded, non-empty set of indices with no repeats (returned sorted), and
// a hash of the form diffHash writes.
func checkHunks(hunks []int, hash string) ([]int, error) {
	if len(hunks) == 0 || len(hunks) > MaxHunks {
		return nil, ErrBadHunks
	}
	if len(hash) != 64 || !isLowerHex(hash) {
		return nil, ErrBadHunks
	}
	picked := slices.Clone(hunks)
	slices.Sort(picked)
	for i, h := range picked {
		if h < 0 || i > 0 && h == picked[i-1] {
			return nil, ErrBadHunks
		}
	}
	return picked, nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// hunkPatch runs git's diff of the file again (gitDiff: what can be
// staged, without the previews of untracked files Diff adds, since no hunk
// of a preview is in the index), checks it is the one the device saw, and
// builds the patch from it: its one section's header and the picked hunks.
//
// The hash Diff gave covers its previews too, and matches git's part alone
// whenever hunks can be staged: git's part then holds the file's section,
// so the file is tracked and has no preview. When git's part holds no
// section of the file and the hashes differ, the file is listed (one
// ls-files, no preview read) to tell an untracked file, which can't be
// staged by hunks, from one that changed.
func (r *Repo) hunkPatch(ctx context.Context, t trust.Trust, d *decision, v viewer, path string, o HunksOptions, picked []int) ([]byte, error) {
	if err := r.refuseFilteredPath(ctx, t, d, path, o.Staged); err != nil {
		return nil, err
	}
	g, err := r.gitDiff(ctx, t, d, v, path, o.Staged)
	if err != nil {
		return nil, err
	}
	if g.truncated || len(g.patch) > MaxDiff {
		return nil, ErrNoHunks // Diff cut it, and the device never got a hash for it
	}
	_, secs := splitPatch(g.patch)
	stageable := len(secs) == 1 && secs[0].known && onlyName(secs[0].names, path)
	if diffHash(string(g.patch)) != o.Hash {
		if !stageable && !o.Staged {
			files, err := r.untracked(ctx, t, d, path)
			if err != nil {
				return nil, err
			}
			if len(files) > 0 {
				return nil, ErrNoHunks
			}
		}
		return nil, ErrDiffChanged
	}
	if !stageable {
		return nil, ErrNoHunks
	}
	header, hunks := splitHunks(secs[0].text)
	if len(hunks) == 0 {
		return nil, ErrNoHunks
	}
	if picked[len(picked)-1] >= len(hunks) {
		return nil, ErrBadHunks
	}
	return buildPatch(header, hunks, picked, o.Staged)
}

func onlyName(names []string, path string) bool {
	for _, n := range names {
		if n != path {
			return false
		}
	}
	return len(names) > 0
}

// splitHunks cuts a file's section at each line that starts "@@": in git's
// output every hunk line starts with ' ', '+', '-' or '\', so such a line
// is always a hunk header (see patch.go).
func splitHunks(sec []byte) (header []byte, hunks [][]byte) {
	start := -1
	for i := 0; i < len(sec); {
		end := bytes.IndexByte(sec[i:], '\n')
		if end < 0 {
			end = len(sec)
		} else {
			end += i + 1
		}
		if bytes.HasPrefix(sec[i:end], []byte("@@")) {
			if start < 0 {
				header = sec[:i]
			} else {
				hunks = append(hunks, sec[start:i])
			}
			start = i
		}
		i = end
	}
	if start < 0 {
		return sec, nil
	}
	return header, append(hunks, sec[start:])
}

// hunkHeader is "@@ -a[,b] +c[,d] @@ rest", as git writes it.
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

type hunkRange struct{ oldStart, oldLines, newStart, newLines int }

func parseHunkHeader(h []byte) (hunkRange, bool) {
	m := hunkHeader.FindSubmatch(h)
	if m == nil {
		return hunkRange{}, false
	}
	num := func(b []byte, def int) (int, bool) {
		if b == nil {
			return def, true
		}
		n, err := strconv.Atoi(string(b))
		return n, err == nil && n <= 1<<30
	}
	a, ok1 := num(m[1], 0)
	b, ok2 := num(m[2], 1)
	c, ok3 := num(m[3], 0)
	dd, ok4 := num(m[4], 1)
	return hunkRange{a, b, c, dd}, ok1 && ok2 && ok3 && ok4
}

// buildPatch writes the header and the picked hunks. git apply looks for a
// hunk first where the image is after the hunks before it were applied
// (the new side's start; the old side's when reversed), so that start is
// moved by the lines the left-out hunks before it would have added: the
// hunk is then found exactly where it is, never at a look-alike place.
func buildPatch(header []byte, hunks [][]byte, picked []int, reverse bool) ([]byte, error) {
	var out bytes.Buffer
	out.Write(header)
	shift := 0 // the lines the left-out hunks so far would add
	next := 0
	for i, h := range hunks {
		line, body, _ := bytes.Cut(h, []byte("\n"))
		hr, ok := parseHunkHeader(line)
		if !ok {
			return nil, ErrNoHunks
		}
		if next >= len(picked) || picked[next] != i {
			shift += hr.newLines - hr.oldLines
			continue
		}
		next++
		if reverse {
			hr.oldStart += shift
		} else {
			hr.newStart -= shift
		}
		rest := hunkHeader.ReplaceAll(line, nil)
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@%s\n", hr.oldStart, hr.oldLines, hr.newStart, hr.newLines, rest)
		out.Write(body)
	}
	return out.Bytes(), nil
}
