package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// What a checkout has in progress, and its conflicts, as git itself tells
// them: the operation from the files git keeps for it (their places asked
// of git with rev-parse --git-path, never guessed), the conflicted files
// from the index's stages (ls-files -u), and each text file's regions from
// git merge-file run on the three stage blobs. gatehouse writes no merge of
// its own.

// Bounds of what git.conflicts reads and answers.
const (
	// MaxConflictFiles bounds the conflicted files Conflicts gathers
	// (git.conflicts pages them).
	MaxConflictFiles = 100_000
	// MaxConflictBlob bounds each stage's blob read for regions; a larger
	// file is resolved whole (ours, theirs, or as the file is now).
	MaxConflictBlob = 256 << 10
	// MaxRegionsJSON bounds one file's segments as JSON, under the page
	// budget of a reply (rpc.PageBudget, 180 KiB): a file past it is
	// resolved whole.
	MaxRegionsJSON = 150 << 10
	// MaxConflictRegions bounds the regions of one file.
	MaxConflictRegions = 300
	// maxMergeOut bounds git merge-file's output: three blobs at most.
	maxMergeOut = 3*MaxConflictBlob + 64<<10
)

// The operations a checkout can have stopped in.
const (
	OpMerge      = "merge"
	OpRebase     = "rebase"
	OpCherryPick = "cherry-pick"
	OpRevert     = "revert"
	// OpUnmerged: conflicted files and no operation file, which is what a
	// stash apply or pop that conflicted leaves.
	OpUnmerged = "unmerged"
	// OpApply: git am (rebase-apply/applying), which the phone can show
	// but not finish.
	OpApply = "am"
)

var (
	subMergeFile = sub{name: "merge-file", readOnly: true, timeout: 30 * time.Second, maxOut: maxMergeOut,
		// -p writes the result to stdout, never over the first file;
		// --diff3 shows the base too. merge-file reads no attribute
		// and no driver: it is xdiff's own merge of three files.
		flags: []string{"-p", "--diff3"}}
	subCheckout   = sub{name: "checkout", timeout: 60 * time.Second, maxOut: 1 << 20}
	subHashObject = sub{name: "hash-object", timeout: 30 * time.Second, maxOut: 1 << 10,
		// The device's text is stored as sent: no clean filter, no
		// end-of-line conversion of it.
		flags: []string{"-w", "--no-filters", "--stdin"}}
	subRebase     = sub{name: "rebase", processes: 2, timeout: 120 * time.Second, maxOut: 1 << 20}
	subCherryPick = sub{name: "cherry-pick", timeout: 120 * time.Second, maxOut: 1 << 20}
)

var (
	ErrNoConflict = refusal.New(refusal.Conflict, "not in conflict",
		"This file is not in conflict any more. Look again.")
	ErrConflictChanged = refusal.New(refusal.Conflict, "conflict changed since it was viewed",
		"This file changed on the computer since you looked at it. Look again and retry.")
	ErrBadResolve = refusal.New(refusal.BadParams, "bad resolution",
		"Choose ours, theirs or both for every region, or take one side of the whole file, or send the whole result.")
	ErrNothingInProgress = refusal.New(refusal.Refused, "nothing in progress",
		"Nothing is in progress in this checkout.")
	ErrStillConflicted = refusal.New(refusal.Conflict, "files still in conflict",
		"Some files are still in conflict. Resolve each one first.")
	ErrCannotConclude = refusal.New(refusal.Refused, "cannot conclude here",
		"This operation can only be finished on the computer.")
	ErrMarkersLeft = refusal.New(refusal.Conflict, "conflict markers left",
		"This file still has conflict markers in it. Choose a side or edit them out, or mark it resolved with the markers in it.")
)

// Progress is what a checkout has in progress.
type Progress struct {
	// Op is one of the Op constants, or "" when nothing is in progress.
	Op string `json:"op,omitempty"`
	// Title is the first line of the message git prepared (MERGE_MSG),
	// such as "Merge branch 'topic'", when there is one.
	Title string `json:"title,omitempty"`
	// Ours and Theirs say what each side is: in a rebase "ours" is the
	// branch being rebased onto and "theirs" the commit being replayed.
	Ours   string `json:"ours,omitempty"`
	Theirs string `json:"theirs,omitempty"`
	// AbortNote says what Abort throws away, in a sentence.
	AbortNote string `json:"abortNote,omitempty"`
	// ID names this one operation (stateID): git.conclude and git.abort
	// take it back with Op and refuse when what is in progress is not it.
	ID string `json:"id,omitempty"`
}

// ConflictFile is one conflicted file: its path and kind of conflict.
type ConflictFile struct {
	Path string `json:"path"`
	// Kind: "both modified", "both added", "deleted by us", "deleted by
	// them", "added by us", "added by them", "both deleted".
	Kind string `json:"kind"`
}

// Conflicts is a checkout's operation in progress and its conflicted files.
type Conflicts struct {
	Progress
	Files     []ConflictFile `json:"files"`
	Next      int            `json:"next,omitempty"`
	Truncated bool           `json:"truncated,omitempty"`
	// HiddenSecrets counts conflicted secret files this device may not
	// see; HiddenLinked, hard-linked ones.
	HiddenSecrets int `json:"hiddenSecrets,omitempty"`
	HiddenLinked  int `json:"hiddenLinked,omitempty"`
}

// Segment is a stretch of a conflicted file: text both sides agree on, or
// a conflict region.
type Segment struct {
	Text     string  `json:"text,omitempty"`
	Conflict *Region `json:"conflict,omitempty"`
}

// Region is one conflict: our lines, their lines, and the base's.
type Region struct {
	Ours   string `json:"ours"`
	Base   string `json:"base"`
	Theirs string `json:"theirs"`
}

// ConflictDetail is one conflicted file as the phone resolves it.
type ConflictDetail struct {
	ConflictFile
	// Hash covers the stages and the work tree's file: git.resolve sends
	// it back, and a file changed since is refused.
	Hash string `json:"hash"`
	// Sides says which of ours and theirs exist (a delete side has none).
	HasOurs   bool `json:"hasOurs"`
	HasTheirs bool `json:"hasTheirs"`
	// Segments: the file as git's merge sees it, when it is text of a
	// bounded size; otherwise Whole says why it is resolved whole.
	Segments []Segment `json:"segments,omitempty"`
	Whole    string    `json:"whole,omitempty"` // "binary", "too large", "too many regions", "not a file", "one side"
	CRLF     bool      `json:"crlf,omitempty"`
	// Markers counts the lines of the work tree's file git calls leftover
	// conflict markers: marking it resolved as it is would commit them.
	Markers int `json:"markers,omitempty"`
}

// stage is one index entry of a conflicted path.
type stage struct {
	mode, oid string
}

// unmerged is a conflicted path's stages: [1] base, [2] ours, [3] theirs.
type unmerged struct {
	path   string
	stages [4]*stage
}

func (u unmerged) kind() string {
	b, o, t := u.stages[1] != nil, u.stages[2] != nil, u.stages[3] != nil
	switch {
	case o && t && b:
		return "both modified"
	case o && t:
		return "both added"
	case b && o:
		return "deleted by them"
	case b && t:
		return "deleted by us"
	case o:
		return "added by us"
	case t:
		return "added by them"
	}
	return "both deleted"
}

// Conflicts lists what is in progress and the conflicted files this viewer
// may see: below the full grant a secret file is counted, not named, and a
// hard-linked one is counted for every device, as Diff does.
func (r *Repo) Conflicts(ctx context.Context, t trust.Trust, g trust.Grant) (*Conflicts, error) {
	d, err := r.decide(ctx, t, readGate, "see the conflicts")
	if err != nil {
		return nil, err
	}
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	all, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return nil, err
	}
	out := &Conflicts{Progress: p, Files: []ConflictFile{}}
	if p.Op == "" && len(all) > 0 {
		if out.Progress, err = r.stashProgress(ctx, t, d); err != nil {
			return nil, err
		}
	}
	v := viewer{t, g}
	for _, u := range all {
		switch r.hidden(v, u.path, true) {
		case secretHidden:
			out.HiddenSecrets++
			continue
		case linkHidden:
			out.HiddenLinked++
			continue
		}
		if len(out.Files) == MaxConflictFiles {
			out.Truncated = true
			break
		}
		out.Files = append(out.Files, ConflictFile{Path: u.path, Kind: u.kind()})
	}
	return out, nil
}

// ConflictOf is one conflicted file with its regions, for a viewer that may
// see it.
func (r *Repo) ConflictOf(ctx context.Context, t trust.Trust, g trust.Grant, unsafePath string) (*ConflictDetail, error) {
	p, err := cleanPaths([]string{unsafePath}, 1)
	if err != nil {
		return nil, err
	}
	d, err := r.decide(ctx, t, readGate, "see the conflicts")
	if err != nil {
		return nil, err
	}
	if err := r.refuseHidden(viewer{t, g}, p[0], "show"); err != nil {
		return nil, err
	}
	u, err := r.unmergedOne(ctx, t, d, p[0])
	if err != nil {
		return nil, err
	}
	return r.detail(ctx, t, d, g, u)
}

func (r *Repo) refuseHidden(v viewer, path, verb string) error {
	switch r.hidden(v, path, true) {
	case secretHidden:
		return refuseSecret(path, verb)
	case linkHidden:
		return refuseHardLinked(path, verb)
	}
	return nil
}

// detail reads a file's stages and, for text, its regions.
func (r *Repo) detail(ctx context.Context, t trust.Trust, d *decision, g trust.Grant, u unmerged) (*ConflictDetail, error) {
	hash, err := r.conflictHash(ctx, t, d, g, u)
	if err != nil {
		return nil, err
	}
	out := &ConflictDetail{ConflictFile: ConflictFile{Path: u.path, Kind: u.kind()}, Hash: hash,
		HasOurs: u.stages[2] != nil, HasTheirs: u.stages[3] != nil}
	segs, whole, crlf, err := r.regions(ctx, t, d, u)
	if err != nil {
		return nil, err
	}
	out.Segments, out.Whole, out.CRLF = segs, whole, crlf
	if out.Markers, err = r.leftoverMarkers(ctx, t, d, u.path); err != nil {
		return nil, err
	}
	return out, nil
}

// leftoverMarkers counts the lines of path's work-tree file that git
// diff --check calls "leftover conflict marker" (git's own rule: a marker
// of the path's conflict-marker-size at a line start, in what the file
// adds), so the phone is asked before it marks resolved a file still
// holding them. --check also reports whitespace, which is not counted.
func (r *Repo) leftoverMarkers(ctx context.Context, t trust.Trust, d *decision, path string) (int, error) {
	res, err := r.run(ctx, t, d, call{sub: subDiff, opts: []string{"--check"}, paths: []string{path}, okExit: []int{2}})
	if err != nil {
		return 0, err
	}
	n := 0
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		if strings.HasSuffix(line, ": leftover conflict marker") {
			n++
		}
	}
	return n, nil
}

// regions runs git merge-file on the three stages of a text file and cuts
// its output into segments. whole is why there are none.
func (r *Repo) regions(ctx context.Context, t trust.Trust, d *decision, u unmerged) (segs []Segment, whole string, crlf bool, err error) {
	if u.stages[2] == nil || u.stages[3] == nil {
		return nil, "one side", false, nil
	}
	for _, s := range u.stages[1:] {
		if s != nil && s.mode != "100644" && s.mode != "100755" {
			return nil, "not a file", false, nil
		}
	}
	var blobs [3][]byte // base, ours, theirs
	for i, s := range u.stages[1:] {
		if s == nil {
			continue // add/add: git merges against an empty base too
		}
		b, truncated, err := r.blob(ctx, t, d, s.oid, MaxConflictBlob)
		if err != nil {
			return nil, "", false, err
		}
		if truncated {
			return nil, "too large", false, nil
		}
		if isBinary(b) {
			return nil, "binary", false, nil
		}
		blobs[i] = b
	}
	merged, size, err := r.mergeFile(ctx, t, d, blobs)
	if err != nil {
		return nil, "", false, err
	}
	segs, ok := parseMerged(merged, size, blobs)
	if !ok {
		return nil, "too many regions", false, nil
	}
	if j, err := json.Marshal(segs); err != nil || len(j) > MaxRegionsJSON {
		return nil, "too large", false, nil
	}
	return segs, "", bytes.Contains(blobs[1], []byte("\r\n")), nil
}

// isBinary is git's own test (xdiff's buffer_is_binary): a NUL in the
// first 8000 bytes.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// blob reads one object's bytes, at most max.
func (r *Repo) blob(ctx context.Context, t trust.Trust, d *decision, oid string, max int) ([]byte, bool, error) {
	if !ValidOID(oid) {
		return nil, false, ErrBadRef
	}
	s := subCatFile
	s.maxOut = max
	res, err := r.run(ctx, t, d, call{sub: s, args: []string{"blob", oid}})
	if err != nil {
		return nil, false, err
	}
	return res.stdout, res.truncated, nil
}

// markerSize is one more than the longest run of a conflict marker's
// character at the start of any line of the three versions (at least git's
// 7): no line of the files can then be read as one of merge-file's
// markers, so a file whose own content holds marker-like lines cannot
// forge a region.
func markerSize(blobs [3][]byte) int {
	longest := 6
	for _, b := range blobs {
		for line := range bytes.SplitSeq(b, []byte{'\n'}) {
			if len(line) == 0 || !strings.ContainsRune("<=>|", rune(line[0])) {
				continue
			}
			n := 0
			for n < len(line) && line[n] == line[0] {
				n++
			}
			longest = max(longest, n)
		}
	}
	return longest + 1
}

// mergeFile writes the three blobs to a private folder in the git folder
// (the one place outside the work tree a closed git may read, see
// wallRules) and runs git merge-file on them. git 2.39 reads its three
// versions only from files.
func (r *Repo) mergeFile(ctx context.Context, t trust.Trust, d *decision, blobs [3][]byte) ([]byte, int, error) {
	dir, err := os.MkdirTemp(r.gitDir, "gatehouse-merge-")
	if err != nil {
		return nil, 0, fmt.Errorf("merge-file folder: %w", err)
	}
	defer os.RemoveAll(dir)
	names := [3]string{"base", "ours", "theirs"}
	for i, b := range blobs {
		if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o600); err != nil {
			return nil, 0, fmt.Errorf("merge-file input: %w", err)
		}
	}
	size := markerSize(blobs)
	if n := markerSizeForTest.Load(); n > 0 {
		size = int(n)
	}
	opts := []string{fmt.Sprintf("--marker-size=%d", size), "-L", "ours", "-L", "base", "-L", "theirs"}
	// The files are gatehouse's own, named by gatehouse: they go where
	// merge-file takes them, ours first.
	args := []string{filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")}
	okExit := make([]int, 127)
	for i := range okExit {
		okExit[i] = i + 1 // the number of conflicts
	}
	res, err := r.run(ctx, t, d, call{sub: subMergeFile, opts: opts, args: args, okExit: okExit})
	if err != nil {
		return nil, 0, err
	}
	if res.truncated {
		return nil, 0, errors.New("git merge-file: output over its bound")
	}
	return res.stdout, size, nil
}

// markerSizeForTest replaces markerSize's answer, so a test can show what
// git's default size lets a file's own lines do. Only this package's
// tests set it.
var markerSizeForTest atomic.Int32

// parseMerged cuts merge-file's --diff3 output into segments. A marker is
// exactly size marker characters followed by a space or the line's end.
// false: more than MaxConflictRegions regions.
func parseMerged(out []byte, size int, blobs [3][]byte) ([]Segment, bool) {
	var segs []Segment
	var text strings.Builder
	var cur *Region
	part := 0 // within a region: 0 ours, 1 base, 2 theirs
	regions := 0
	for len(out) > 0 {
		end := bytes.IndexByte(out, '\n') + 1
		if end == 0 {
			end = len(out)
		}
		line := out[:end]
		out = out[end:]
		switch marker(line, size) {
		case '<':
			if text.Len() > 0 {
				segs = append(segs, Segment{Text: text.String()})
				text.Reset()
			}
			cur, part = &Region{}, 0
			regions++
			if regions > MaxConflictRegions {
				return nil, false
			}
			continue
		case '|':
			if cur != nil {
				part = 1
				continue
			}
		case '=':
			if cur != nil {
				part = 2
				continue
			}
		case '>':
			if cur != nil {
				segs = append(segs, Segment{Conflict: cur})
				cur = nil
				continue
			}
		}
		if cur == nil {
			text.Write(line)
			continue
		}
		switch part {
		case 0:
			cur.Ours += string(line)
		case 1:
			cur.Base += string(line)
		default:
			cur.Theirs += string(line)
		}
	}
	if text.Len() > 0 {
		segs = append(segs, Segment{Text: text.String()})
	}
	trimAddedNewline(segs, blobs)
	return segs, true
}

// trimAddedNewline undoes the one change merge-file makes to a side: when a
// conflict region ends the file and a side's version has no final newline,
// merge-file adds one before the next marker. The region then holds that
// side exactly as the file has it.
func trimAddedNewline(segs []Segment, blobs [3][]byte) {
	if len(segs) == 0 || segs[len(segs)-1].Conflict == nil {
		return
	}
	c := segs[len(segs)-1].Conflict
	for _, s := range []struct {
		text *string
		blob []byte
	}{{&c.Ours, blobs[1]}, {&c.Base, blobs[0]}, {&c.Theirs, blobs[2]}} {
		if len(s.blob) > 0 && !bytes.HasSuffix(s.blob, []byte("\n")) && strings.HasSuffix(*s.text, "\n") {
			*s.text = strings.TrimSuffix(*s.text, "\n")
			if bytes.HasSuffix(s.blob, []byte("\r")) {
				continue
			}
			*s.text = strings.TrimSuffix(*s.text, "\r")
		}
	}
}

// marker tells which marker line is, or 0.
func marker(line []byte, size int) byte {
	if len(line) < size {
		return 0
	}
	c := line[0]
	if !strings.ContainsRune("<|=>", rune(c)) {
		return 0
	}
	for i := 1; i < size; i++ {
		if line[i] != c {
			return 0
		}
	}
	rest := line[size:]
	if len(rest) == 0 || rest[0] == ' ' || rest[0] == '\n' || rest[0] == '\r' {
		return c
	}
	return 0
}

// unmerged lists the conflicted paths (all of them, or one) from the
// index's stages, sorted by path.
func (r *Repo) unmerged(ctx context.Context, t trust.Trust, d *decision, path string) ([]unmerged, error) {
	c := call{sub: subLsFiles, opts: []string{"-u", "-z"}}
	if path != "" {
		c.paths = []string{path}
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, err
	}
	byPath := map[string]*unmerged{}
	for rec := range bytes.SplitSeq(res.stdout, []byte{0}) {
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 || len(f[2]) != 1 || f[2][0] < '1' || f[2][0] > '3' {
			continue
		}
		u := byPath[string(p)]
		if u == nil {
			u = &unmerged{path: string(p)}
			byPath[u.path] = u
		}
		u.stages[f[2][0]-'0'] = &stage{mode: f[0], oid: f[1]}
	}
	out := make([]unmerged, 0, len(byPath))
	for _, u := range byPath {
		if path == "" || u.path == path {
			out = append(out, *u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

func (r *Repo) unmergedOne(ctx context.Context, t trust.Trust, d *decision, path string) (unmerged, error) {
	list, err := r.unmerged(ctx, t, d, path)
	if err != nil {
		return unmerged{}, err
	}
	if len(list) != 1 {
		return unmerged{}, ErrNoConflict
	}
	return list[0], nil
}

// conflictHash covers what the phone resolves from: each stage's mode and
// blob, and the work tree's copy (its bytes, or what it is when it is not
// a readable file), read through fsguard.
func (r *Repo) conflictHash(_ context.Context, _ trust.Trust, _ *decision, g trust.Grant, u unmerged) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", u.path)
	for i, s := range u.stages {
		if s != nil {
			fmt.Fprintf(h, "%d %s %s\x00", i, s.mode, s.oid)
		}
	}
	if data, err := r.root.ReadFile(g, u.path, 8<<20); err == nil {
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "file %x\x00", sum)
	} else if info, err := r.root.Stat(u.path); err == nil {
		fmt.Fprintf(h, "%s %d %d\x00", info.Kind, info.Size, info.Links)
	} else {
		fmt.Fprintf(h, "none\x00")
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// progress asks git where its operation files are and which exist.
func (r *Repo) progress(ctx context.Context, t trust.Trust, d *decision) (Progress, error) {
	at, err := r.gitPaths(ctx, t, d, "MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD", "MERGE_MSG", "rebase-apply/applying")
	if err != nil {
		return Progress{}, err
	}
	exists := func(n string) bool { _, err := os.Lstat(at[n]); return err == nil }
	var p Progress
	switch {
	case exists("rebase-apply/applying"):
		p = Progress{Op: OpApply, Ours: "your branch", Theirs: "the patch"}
	case exists("rebase-merge"), exists("rebase-apply"):
		p = Progress{Op: OpRebase, Ours: "the branch you rebase onto", Theirs: "your commit being replayed",
			AbortNote: "Abort ends the rebase and puts your branch back where it was before it started; the resolutions made so far are thrown away."}
	case exists("MERGE_HEAD"):
		p = Progress{Op: OpMerge, Ours: "your branch", Theirs: "the branch merged in",
			AbortNote: "Abort ends the merge and puts every file back as it was before the merge started; the resolutions made so far are thrown away."}
	case exists("CHERRY_PICK_HEAD"):
		p = Progress{Op: OpCherryPick, Ours: "your branch", Theirs: "the commit picked",
			AbortNote: "Abort ends the cherry-pick and puts your branch and files back as they were before it; the resolutions made so far are thrown away."}
	case exists("REVERT_HEAD"):
		p = Progress{Op: OpRevert, Ours: "your branch", Theirs: "the commit reverted",
			AbortNote: "Abort ends the revert and puts your branch and files back as they were before it; the resolutions made so far are thrown away."}
	default:
		return Progress{}, nil
	}
	if p.Op != OpRebase && p.Op != OpApply {
		p.Title = firstLine(at["MERGE_MSG"])
	}
	p.ID, err = r.stateID(ctx, t, d, p.Op)
	return p, err
}

// gitPaths asks git where the named files of its folder are.
func (r *Repo) gitPaths(ctx context.Context, t trust.Trust, d *decision, names ...string) (map[string]string, error) {
	var opts []string
	for _, n := range names {
		opts = append(opts, "--git-path", n)
	}
	res, err := r.run(ctx, t, d, call{sub: subRevParse, opts: opts})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(res.stdout), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, errors.New("git rev-parse --git-path: unexpected answer")
	}
	at := map[string]string{}
	for i, n := range names {
		p := lines[i]
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.runDir(), p)
		}
		at[n] = p
	}
	return at, nil
}

// stashProgress is a conflict with no operation file: what a stash apply
// or pop that stopped leaves. git offers no "stash --abort"; what it offers
// is reset --merge (which merge --abort itself runs).
//
// The note says what reset --merge keeps and what it does not: it keeps
// unstaged changes to files the apply did not touch, and resets every index
// entry that differs from HEAD (builtin/reset.c: a two-way merge from the
// index to HEAD), so changes staged before the apply are lost. A device's
// apply is refused while anything is staged (refuseStaged); a stash applied
// at the computer with staged changes can still reach this note.
func (r *Repo) stashProgress(ctx context.Context, t trust.Trust, d *decision) (Progress, error) {
	id, err := r.stateID(ctx, t, d, OpUnmerged)
	return Progress{Op: OpUnmerged, Ours: "your files", Theirs: "the stash", ID: id,
		AbortNote: "Abort puts back the last commit's version of every file the stash apply changed and keeps your unstaged changes to other files; changes that were staged before the stash was applied are not kept. The stash itself stays in the stash list."}, err
}

// runDir is where git runs, which --git-path answers relative to.
func (r *Repo) runDir() string {
	if r.workTree != "" {
		return r.workTree
	}
	return r.gitDir
}

// firstLine reads the first line of a message git prepared, bounded, as
// text a page can show.
func firstLine(path string) string {
	// Opened without following a link and without waiting on a FIFO, then
	// read only if what was opened is a regular file: a check before the
	// open would leave a window to swap the file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, 300)
	n, _ := f.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	line = strings.TrimSpace(line)
	if !utf8.ValidString(line) || len(line) > 200 {
		return ""
	}
	return line
}
