package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// Blame bounds: a page is at most MaxBlameLines lines, and git's output for
// it at most maxBlameOut bytes (a file of very long lines ends its page
// early, at the last whole line).
const (
	MaxBlameLines  = 5_000
	blameLinesPage = 500 // when the caller names no count
	maxBlameOut    = 4 << 20
	maxBlameLine   = 4 << 10 // a line's text is cut here, so one minified line is no whole reply
)

// blameFlags pin what config could change in git blame, for everyone:
// blame.ignoreRevsFile names a file blame reads (a FIFO hangs it, and it
// may name any file on the computer); it is a list, so an empty -c value
// would only be appended after the repository's own file had been read,
// while --no-ignore-revs-file empties the list after the config is read.
var blameFlags = []string{"--no-ignore-revs-file"}

// subBlame reads one file's blame at one commit, in the porcelain format.
// A revision is always named, so blame never reads the work tree's copy
// (which would run the clean filter a .gitattributes names). It reads
// textconv (closed: --no-textconv) and the mailmap (blameMailmap). git
// 2.39's blame takes no --end-of-options (it prints its usage); its one
// argument is HEAD or a checked commit id, and the runner refuses any
// argument that starts with '-' (fixedShape).
var subBlame = sub{name: "blame", readOnly: true, timeout: 60 * time.Second, maxOut: maxBlameOut,
	flags: blameFlags, closedFlags: noTextconv}

// blameMailmap is forced on a closed blame: blame has no --no-mailmap and
// ignores log.mailmap, so it reads mailmap.file (any file on the computer,
// or a FIFO) and mailmap.blob unless they are emptied. An empty value opens
// nothing. The work tree's own .mailmap is still read (git opens it without
// following a link); a FIFO there is stopped by the runner's FIFO watch
// (failures.go), and a hard-linked one is refused before blame runs.
var blameMailmap = []Option{
	{"mailmap.file", "", "blame reads the file it names whatever log.mailmap says"},
	{"mailmap.blob", "", "the same, for a blob"},
}

// ErrNotCommitted is a blame of a path the commit does not hold: a new
// file, or one the phone saw at another commit.
var ErrNotCommitted = refusal.New(refusal.NotFound, "path not in commit",
	"This file is not in that commit (a new file has no history yet), so it has no blame.")

// ErrBlameRange is a line range that does not fit the file.
var ErrBlameRange = refusal.New(refusal.BadParams, "blame range",
	"These lines are not in this file.")

// BlameOptions choose what Blame shows.
type BlameOptions struct {
	Path  string // the file, relative to the checkout
	Rev   string // a commit id the device saw; "" for HEAD
	Start int    // the first line, 1-based (0: 1)
	Count int    // how many lines, at most MaxBlameLines (0: a page)
}

// Blame is one page of a file's blame.
type Blame struct {
	Path    string                 `json:"path"`
	Lines   []BlameLine            `json:"lines"`
	Start   int                    `json:"start"`
	Next    int                    `json:"next,omitempty"` // the first line of the next page, when there is one
	Commits map[string]BlameCommit `json:"commits"`
}

// BlameLine is one line of the file and the commit that last changed it.
type BlameLine struct {
	Line     int    `json:"line"`     // in the file at the commit blamed
	OID      string `json:"oid"`      // the commit that gave the line
	OrigLine int    `json:"origLine"` // the line's number in that commit
	OrigPath string `json:"origPath"` // the file's name in that commit
	Text     string `json:"text"`
	Cut      bool   `json:"cut,omitempty"` // the text was longer than shown
}

// BlameCommit is told once per commit of a page.
type BlameCommit struct {
	Author   string `json:"author"`
	Time     int64  `json:"time"` // author time, Unix seconds
	Subject  string `json:"subject"`
	Boundary bool   `json:"boundary,omitempty"` // the oldest commit blame reached
}

// Blame returns a page of the blame of o.Path at o.Rev, for a caller with
// trust t and grant g. The file is judged by the visibility rule
// (Repo.hidden) as a commit's diff is: a secret only at full, a file whose
// work-tree copy is hard-linked elsewhere for no device, since the commits
// took their bytes from that copy. No -M or -C is passed, so no line is
// taken from another file (a secret one) of the history.
func (r *Repo) Blame(ctx context.Context, t trust.Trust, g trust.Grant, o BlameOptions) (*Blame, error) {
	p, err := cleanPaths([]string{o.Path}, 1)
	if err != nil {
		return nil, err
	}
	path := p[0]
	rev := "HEAD"
	if o.Rev != "" {
		if !ValidOID(o.Rev) {
			return nil, ErrBadOID
		}
		rev = o.Rev
	}
	start, count := o.Start, o.Count
	if start <= 0 {
		start = 1
	}
	if count <= 0 || count > MaxBlameLines {
		count = blameLinesPage
	}
	v := viewer{t, g}
	if err := r.refuseBlame(v, path); err != nil {
		return nil, err
	}
	d, err := r.decide(ctx, t, readGate, "see who changed this file")
	if err != nil {
		return nil, err
	}
	c := call{sub: subBlame, opts: []string{"--porcelain", "-L", fmt.Sprintf("%d,+%d", start, count+1)},
		args: []string{rev}, paths: []string{path}}
	if t.Closed() {
		c.config = blameMailmap
	}
	res, err := r.run(ctx, t, d, c)
	if err = blameFailed(err); errors.Is(err, ErrBlameRange) && start == 1 {
		res, err = &result{}, nil // an empty file has no line 1
	}
	if err != nil {
		return nil, err
	}
	b, err := parseBlame(res.stdout, res.truncated)
	if err != nil {
		return nil, err
	}
	b.Path, b.Start = path, start
	b.page(count)
	return b, nil
}

// refuseBlame judges the file and the checkout's .mailmap by the
// visibility rule: a hard-linked .mailmap is another file's bytes, which
// blame would read to rename authors.
func (r *Repo) refuseBlame(v viewer, path string) error {
	switch r.hidden(v, path, true) {
	case secretHidden:
		return ErrSecret
	case linkHidden:
		return refuseHardLinked(path, "show the blame of")
	}
	if r.hidden(v, ".mailmap", true) == linkHidden && !blameMailmapLinkForTest {
		return refuseHardLinked(".mailmap", "let blame read")
	}
	return nil
}

// blameMailmapLinkForTest lets a blame read a hard-linked .mailmap, to show
// what refusing it stops. Only this package's tests set it.
var blameMailmapLinkForTest bool

// blameFailed turns git's refusals of a path, a commit or a range into
// sentences; the rest stay errors for the log.
func blameFailed(err error) error {
	var ee *ExitError
	if err == nil || !errors.As(err, &ee) {
		return err
	}
	switch {
	case strings.Contains(ee.Stderr, "has only"), strings.Contains(ee.Stderr, "invalid -L"):
		return errors.Join(ErrBlameRange, err)
	case strings.Contains(ee.Stderr, "no such path"):
		return errors.Join(ErrNotCommitted, err)
	case strings.Contains(ee.Stderr, "no such ref"), strings.Contains(ee.Stderr, "bad revision"),
		strings.Contains(ee.Stderr, "unknown revision"), strings.Contains(ee.Stderr, "bad object"):
		return errors.Join(ErrUnknownRef, err)
	}
	return err
}

// maxBlameReply bounds a page's JSON, well inside the reply budget of the
// protocol (rpc.PageBudget, 180 KiB): a file of long lines, or of lines
// each from its own commit, ends its page early.
const maxBlameReply = 150 << 10

// page keeps at most count lines, and fewer when their JSON (with each
// commit's, told once) would pass maxBlameReply, and says where the next
// page starts: git was asked for one line more than the page, so a line
// past it means more, as does output git stopped at its bound.
func (b *Blame) page(count int) {
	more := b.Next != 0 || len(b.Lines) > count
	b.Next = 0
	size, keep := 0, map[string]bool{}
	n := 0
	for ; n < len(b.Lines) && n < count; n++ {
		l := b.Lines[n]
		size += jsonSize(l) + 1
		if !keep[l.OID] {
			size += jsonSize(b.Commits[l.OID]) + len(l.OID) + 4
		}
		if size > maxBlameReply && n > 0 {
			more = true
			break
		}
		keep[l.OID] = true
	}
	if n < len(b.Lines) {
		more = true
	}
	b.Lines = b.Lines[:n]
	if more && n > 0 {
		b.Next = b.Lines[n-1].Line + 1
	}
	for oid := range b.Commits {
		if !keep[oid] {
			delete(b.Commits, oid)
		}
	}
}

// jsonSize is the length of v's JSON.
func jsonSize(v any) int {
	out, err := json.Marshal(v)
	if err != nil {
		return maxBlameReply // a value that cannot be told ends the page
	}
	return len(out)
}

var errBlameOutput = errors.New("gate: unexpected blame output")

// parseBlame reads git blame --porcelain. A record is a header line ("oid
// orig final [count]"), then the commit's fields the first time it is
// seen, then the line's text after a TAB. Only a line that starts with a
// TAB is text and only the line after a header's fields is, so a file's
// line that looks like a header ("author x", a commit id) is text, never a
// field. truncated says git stopped at the output bound: a record cut short
// is dropped, and Next is set to say there is more.
func parseBlame(out []byte, truncated bool) (*Blame, error) {
	b := &Blame{Lines: []BlameLine{}, Commits: map[string]BlameCommit{}}
	names := map[string]string{} // the file's name in each commit
	lines := bytes.Split(out, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 || truncated {
		lines = lines[:len(lines)-1] // after the last newline: nothing, or a cut line
	}
	for i := 0; i < len(lines); {
		l, next, err := parseRecord(lines[i:], b.Commits, names)
		if errors.Is(err, errRecordCut) && truncated {
			break
		}
		if err != nil {
			return nil, err
		}
		b.Lines = append(b.Lines, l)
		i += next
	}
	if truncated {
		b.Next = -1 // page sets it from the last whole line
	}
	return b, nil
}

var errRecordCut = errors.New("gate: blame record cut short")

// parseRecord reads one record from lines and returns it and how many
// lines it took.
func parseRecord(lines [][]byte, commits map[string]BlameCommit, names map[string]string) (BlameLine, int, error) {
	var l BlameLine
	f := strings.Fields(string(lines[0]))
	if len(f) < 3 || len(f) > 4 || !fullOID(f[0]) {
		return l, 0, fmt.Errorf("%w: header %q", errBlameOutput, clipUTF8(string(lines[0]), 80))
	}
	var err1, err2 error
	l.OID = f[0]
	l.OrigLine, err1 = strconv.Atoi(f[1])
	l.Line, err2 = strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || l.OrigLine < 1 || l.Line < 1 {
		return l, 0, fmt.Errorf("%w: header %q", errBlameOutput, clipUTF8(string(lines[0]), 80))
	}
	c, seen := commits[l.OID]
	for i := 1; i < len(lines); i++ {
		line := lines[i]
		if len(line) > 0 && line[0] == '\t' {
			l.Text, l.Cut = blameText(line[1:])
			if name, ok := names[l.OID]; ok {
				l.OrigPath = name
			}
			if !seen {
				commits[l.OID] = c
			}
			return l, i + 1, nil
		}
		key, value, _ := strings.Cut(string(line), " ")
		switch key {
		case "author":
			c.Author = clipUTF8(value, 200)
		case "author-time":
			// git prints its timestamp_t, unsigned and already parsed from
			// the commit (PRItime); one past int64 (a commit dated beyond
			// year 292 billion) reads as unknown, 0, never as a wrapped date.
			if t, err := strconv.ParseUint(value, 10, 64); err == nil && t <= math.MaxInt64 {
				c.Time = int64(t)
			}
		case "summary":
			c.Subject = clipUTF8(value, 200)
		case "boundary":
			c.Boundary = true
		case "filename":
			names[l.OID] = unquoteBlameName(value)
		}
	}
	return l, 0, errRecordCut
}

// blameText is a line's text as valid UTF-8, cut at maxBlameLine.
func blameText(raw []byte) (string, bool) {
	cut := len(raw) > maxBlameLine
	if cut {
		raw = raw[:maxBlameLine]
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD"), cut
}

// unquoteBlameName reads a filename field: core.quotePath (forced true)
// quotes a name with unusual bytes in C style, which unquoteName undoes as
// git's quote.c writes it (Go's strconv.Unquote read a different grammar).
// A field it cannot read is shown as git printed it.
func unquoteBlameName(s string) string {
	if u, ok := unquoteName(s); ok {
		s = u
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
