package fsguard

import (
	"bytes"
	"context"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

const (
	// MaxGrepMatches bounds the lines one grep gathers; a device pages
	// through them in sorted order, so all are gathered before any page is
	// cut.
	MaxGrepMatches = 10_000
	// maxGrepFile: larger files are skipped (counted in Skipped).
	maxGrepFile = 8 << 20
	// maxGrepBytes bounds the bytes one grep reads in all.
	maxGrepBytes = 1 << 30
	// maxLineText bounds the text shown for one matching line.
	maxLineText = 300
)

// GrepQuery is what to look for.
type GrepQuery struct {
	Query     string `json:"query"`
	MatchCase bool   `json:"matchCase,omitempty"`
	WholeWord bool   `json:"wholeWord,omitempty"`
	Regex     bool   `json:"regex,omitempty"`
}

// Match is one matching line.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepResult is what a grep found.
type GrepResult struct {
	Matches   []Match `json:"matches"`
	Truncated bool    `json:"truncated,omitempty"`
	// Skipped counts files over 8 MiB, which are not searched.
	Skipped int `json:"skipped,omitempty"`
	// Next is the offset of the next page, 0 at the end (set by the caller
	// that cuts the pages).
	Next int `json:"next,omitempty"`
}

// Grep searches the text of every regular file under the root, on several
// workers. It never reads .git, a FIFO, socket, device or symlink (by the
// entry's type, then again on the opened handle), a file with more than one
// hard link (checked on the handle, so a hard link to ~/.ssh/id_rsa named
// notes.txt is never read), binary files, or, below full, a secret file. It
// stops at MaxGrepMatches lines, at the byte and entry bounds, or when ctx
// ends, and then says truncated. Entries in skip (and everything under a
// folder there) are left out.
func (r *Root) Grep(ctx context.Context, g trust.Grant, q GrepQuery, skip Ignored) (GrepResult, error) {
	if err := r.allowRoot(g); err != nil {
		return GrepResult{}, pathErr("grep", ".", err)
	}
	m, err := compileGrep(q)
	if err != nil {
		return GrepResult{}, pathErr("grep", ".", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gs := &grepState{r: r, g: g, m: m, cancel: cancel}
	gs.pool.New = func() any { return new(grepBuf) }
	truncated := r.walk(ctx, walkLimits{maxEntries: maxWalkEntries, skip: skip}, gs.visit)
	res := GrepResult{Matches: gs.matches, Truncated: truncated || gs.full.Load(), Skipped: int(gs.skipped.Load())}
	if len(res.Matches) > MaxGrepMatches {
		res.Matches, res.Truncated = res.Matches[:MaxGrepMatches], true
	}
	sort.Slice(res.Matches, func(i, j int) bool {
		a, b := res.Matches[i], res.Matches[j]
		return a.Path < b.Path || a.Path == b.Path && a.Line < b.Line
	})
	if res.Matches == nil {
		res.Matches = []Match{}
	}
	return res, nil
}

type grepState struct {
	r      *Root
	g      trust.Grant
	m      *grepMatcher
	cancel context.CancelFunc
	pool   sync.Pool

	mu      sync.Mutex
	matches []Match
	count   atomic.Int64
	bytes   atomic.Int64
	skipped atomic.Int64
	full    atomic.Bool
}

type grepBuf struct{ data, folded []byte }

func (gs *grepState) visit(dirfd int, dir string, ents []fs.DirEntry) bool {
	buf := gs.pool.Get().(*grepBuf)
	defer gs.pool.Put(buf)
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		rel := joinRel(dir, e.Name())
		if !gs.g.SeesSecrets() {
			if _, secret := gs.r.scope.Match(rel); secret {
				continue
			}
		}
		if !gs.file(dirfd, e.Name(), rel, buf) {
			return false
		}
	}
	return true
}

// file searches one entry; false stops the whole grep. The file is read
// with raw system calls: wrapping each descriptor in an os.File would cost a
// poller registration per file.
func (gs *grepState) file(dirfd int, name, rel string, buf *grepBuf) bool {
	fd, err := openAt(dirfd, name)
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || checkRegular(&st) != nil {
		return true
	}
	if st.Size > maxGrepFile {
		gs.skipped.Add(1)
		return true
	}
	if gs.bytes.Add(st.Size) > maxGrepBytes {
		gs.full.Store(true)
		return false
	}
	data, err := readFD(fd, buf.data[:0], int(st.Size), maxGrepFile)
	buf.data = data
	if err != nil || bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		return true
	}
	found := gs.m.find(data, buf, rel)
	if len(found) == 0 {
		return true
	}
	gs.mu.Lock()
	gs.matches = append(gs.matches, found...)
	gs.mu.Unlock()
	if gs.count.Add(int64(len(found))) >= MaxGrepMatches {
		gs.full.Store(true)
		gs.cancel()
		return false
	}
	return true
}

// readFD reads fd to its end into buf, expecting about size bytes and never
// holding more than limit.
func readFD(fd int, buf []byte, size, limit int) ([]byte, error) {
	buf = slices.Grow(buf[:0], min(size, limit)+1)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), limit-len(buf)))
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// grepMatcher finds matching lines in a file's bytes.
type grepMatcher struct {
	literal []byte         // the query, lower-cased when fold
	fold    bool           // ASCII case folding on a literal
	word    bool           // whole words only
	re      *regexp.Regexp // a regex, or a literal that needs Unicode folding
}

func compileGrep(q GrepQuery) (*grepMatcher, error) {
	if len(q.Query) > MaxQuery || !utf8.ValidString(q.Query) {
		return nil, ErrBadQuery
	}
	if utf8.RuneCountInString(q.Query) < 2 {
		return nil, ErrShortQuery
	}
	m := &grepMatcher{word: q.WholeWord}
	ascii := true
	for i := 0; i < len(q.Query); i++ {
		ascii = ascii && q.Query[i] < utf8.RuneSelf
	}
	if !q.Regex && (q.MatchCase || ascii) {
		m.literal, m.fold = []byte(q.Query), !q.MatchCase
		if m.fold {
			m.literal = []byte(strings.ToLower(q.Query))
		}
		return m, nil
	}
	expr := q.Query
	if !q.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if q.WholeWord {
		expr = `\b(?:` + expr + `)\b`
		m.word = false
	}
	if !q.MatchCase {
		expr = `(?i)` + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, ErrBadQuery
	}
	m.re = re
	return m, nil
}

// find returns each line of data that matches, once.
func (m *grepMatcher) find(data []byte, buf *grepBuf, rel string) []Match {
	hay := data
	if m.fold {
		buf.folded = foldASCII(buf.folded[:0], data)
		hay = buf.folded
	}
	var out []Match
	line, counted := 1, 0
	for pos := 0; pos < len(hay); {
		start, _ := m.next(hay[pos:])
		if start < 0 {
			break
		}
		start += pos
		lineStart := bytes.LastIndexByte(data[:start], '\n') + 1
		lineEnd := bytes.IndexByte(data[start:], '\n')
		if lineEnd < 0 {
			lineEnd = len(data)
		} else {
			lineEnd += start
		}
		line += bytes.Count(data[counted:lineStart], []byte{'\n'})
		counted = lineStart
		out = append(out, Match{Path: rel, Line: line, Text: lineText(data[lineStart:lineEnd], start-lineStart)})
		if len(out) >= MaxGrepMatches {
			break
		}
		pos = lineEnd + 1
	}
	return out
}

// next finds the first match in hay: its start and end, or -1.
func (m *grepMatcher) next(hay []byte) (int, int) {
	if m.re != nil {
		loc := m.re.FindIndex(hay)
		if loc == nil {
			return -1, -1
		}
		return loc[0], loc[1]
	}
	for off := 0; ; {
		i := bytes.Index(hay[off:], m.literal)
		if i < 0 {
			return -1, -1
		}
		s, e := off+i, off+i+len(m.literal)
		if !m.word || isWordEdge(hay, s) && isWordEdge(hay, e) {
			return s, e
		}
		off = s + 1
	}
}

// isWordEdge reports whether position i of b is a word boundary.
func isWordEdge(b []byte, i int) bool {
	before := i > 0 && isWordByte(b[i-1])
	after := i < len(b) && isWordByte(b[i])
	return before != after || !before
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf
}

// foldASCII lower-cases ASCII letters, leaving every other byte (and so
// every offset) as it is.
func foldASCII(dst, src []byte) []byte {
	dst = append(dst, src...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// lineText shows a matching line, cut to maxLineText bytes around the match
// and made valid UTF-8.
func lineText(line []byte, ms int) string {
	line = bytes.TrimRight(line, "\r")
	if len(line) > maxLineText {
		from := max(0, min(ms-maxLineText/3, len(line)-maxLineText))
		line = line[from : from+maxLineText]
	}
	return strings.ToValidUTF8(string(line), "\uFFFD")
}
