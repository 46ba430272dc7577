package secretfiles

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// Bounds on what a decorated name costs. A name longer than NAME_MAX cannot
// be on disk, a path longer than PATH_MAX cannot be opened; deeper stacks
// of decorations than three (a backup of a copy of an autosave) and more
// than 32 names tried per path are not worth an attacker's path length.
//
// Those bound the search's shape, not its work: forms with two free holes
// ("name (… conflicted copy …).ext") match a 255-byte name in many ways,
// and a path holds sixteen such names. maxSteps bounds the work itself,
// whatever the forms: every segment looked at, every form tried on it,
// every step of matching one and every name read off (a step per 64 bytes
// of the path it makes) count, once for the hint and once for the reading.
// The names tools write take under 300 steps (TestCorpusCopies); a name
// that needs more was built to cost, and it is refused (tooCostly),
// because a reading cut short may have stopped before the secret under it.
const (
	maxDecoratedSegment = 255
	maxDecoratedPath    = 4096
	maxLayers           = 3
	maxTried            = 32
	maxSolutions        = 8
	maxSteps            = 1 << 13
)

// work counts the steps of one reading against its limit, maxSteps.
type work struct{ steps, limit int }

// spend counts one step and reports whether it was within the limit; past
// it, the count stays at limit+1.
func (w *work) spend() bool { return w.spendN(1) }

// spendN counts n steps at once.
func (w *work) spendN(n int) bool {
	if w.steps > w.limit {
		return false
	}
	w.steps = min(w.steps+n, w.limit+1)
	return w.steps <= w.limit
}

func (w *work) spent() bool { return w.steps > w.limit }

// work returns the budget of one reading.
func (g *grammar) work() work {
	if g.stepsForTest > 0 {
		return work{limit: g.stepsForTest}
	}
	return work{limit: maxSteps}
}

// tooCostly is the answer for a path whose decorations take more than
// maxSteps to read. Its pattern is every path: the bound, not a rule,
// refused it.
var tooCostly = Rule{
	Pattern: "**/*",
	Reason:  "a name that reads as a copy of a copy in more ways than gatehouse follows (more than 8192 steps); no tool names a file so, and a copy of a secret may be under it",
	Source:  "gatehouse secretfiles maxSteps (docs/secret-rules.md, Copies, backups and temporary names)",
}

// tokKind is one piece of a compiled form.
type tokKind uint8

const (
	tLit      tokKind = iota
	tName             // {name}
	tDotName          // {.name}
	tStem             // {stem}, the form ending in {ext}
	tDigits           // {n}
	tAny              // {*}
	tWord             // {word}
	tTmp8             // {tmp8}
	tClass            // [a-p]
	tMkstemp          // {XXXXXX}
	tPctPath          // {%path}
	tBangPath         // {!path}
	tBlanks           // {blanks}
)

type tok struct {
	kind tokKind
	lit  string     // tLit: lower-cased bytes
	set  *[256]bool // tClass
}

// captures reports whether a token is the one that holds the file's name.
func (t tok) captures() bool {
	switch t.kind {
	case tName, tDotName, tStem, tPctPath, tBangPath:
		return true
	}
	return false
}

// form is one decoration form with its alternations expanded.
type form struct {
	row    int // index in Decorations
	shape  string
	toks   []tok
	hasExt bool // the form ends in {ext}
	weight int  // literal bytes: the more, the more specific the form
	// The anchor: a literal the name must hold where the form puts it.
	anchor string
	tail   tail // suffix anchors: what follows the literal at the end
	place  anchorPlace
	gate   byte // contains anchors: a byte to look for before the literal
}

type anchorPlace uint8

const (
	atEnd anchorPlace = iota
	atStart
	inside
)

// tail is what may follow a suffix anchor's literal at the end of a name:
// the extension put back, digits, a fixed number of bytes, spaces and dots.
type tail struct {
	ext    bool
	digits bool
	fixed  int
	blanks bool
}

// grammar is Decorations compiled: the forms and an index from a name's
// last bytes, first bytes or a rare byte to the forms that may match it.
type grammar struct {
	forms  []form
	tails  []tailIndex
	places []endPlace   // where the tails' anchors end, each place once
	first  [256][]int32 // start anchors by first byte
	inner  []gated      // contains anchors, by the byte looked for first
	gates  [256]bool    // the bytes inner is filed by
	// afterName holds the bytes a form can put right after the name it
	// starts with: a copy of a folder goes on with one of them (".ssh copy",
	// ".kube.bak", "gcloud (1)"), never with a letter or a digit.
	afterName [256]bool
	// lastMask has a bit per tail for each byte some suffix anchor of that
	// tail ends in, oneByte the same for the anchors of one byte, lastTwo a
	// bit for the last two bytes of each longer one, and firstAt a bit for
	// the first two bytes of each start anchor (all have two at least):
	// most names and folders are passed over by these tables alone, which
	// every path goes through.
	lastMask [256]uint16
	oneByte  [256]uint16
	lastTwo  [1 << 16 / 64]uint64
	firstAt  [1 << 16 / 64]uint64
	// relativePathsForTest reads {%path} and {!path} off any name, as the
	// grammar did before it asked for the absolute path the tools write,
	// and stepsForTest, when not 0, stands for maxSteps, so that a test can
	// show what each changes.
	relativePathsForTest bool
	stepsForTest         int
}

type tailIndex struct {
	tail   tail
	byLast [256][]int32 // suffix anchors by the anchor's last byte
	bare   []int32      // forms whose tail alone is the anchor ({name}{blanks})
}

// gated are the contains anchors looked for after one byte.
type gated struct {
	gate  byte
	forms []int32
}

// defaultGrammar is Decorations compiled on first use.
var defaultGrammar = sync.OnceValue(func() *grammar {
	g, err := compileGrammar(Decorations, copyWords)
	if err != nil {
		panic("secretfiles: the built-in decorations do not compile: " + err.Error())
	}
	return g
})

func compileGrammar(rows []Decoration, words []string) (*grammar, error) {
	g := &grammar{}
	for i, d := range rows {
		if d.What == "" || d.Why == "" || d.Source == "" || len(d.Forms) == 0 {
			return nil, fmt.Errorf("decoration %d: want forms, what, why and source", i)
		}
		for _, raw := range d.Forms {
			for _, exp := range expand(raw, words) {
				f, err := compileForm(i, exp)
				if err == nil {
					err = g.add(f)
				}
				if err != nil {
					return nil, fmt.Errorf("decoration %q: %w", raw, err)
				}
			}
		}
	}
	g.indexPlaces()
	for _, f := range g.forms {
		g.markAfterName(f.toks)
	}
	return g, nil
}

// markAfterName adds to afterName what can follow the name in a form that
// starts with it.
func (g *grammar) markAfterName(toks []tok) {
	if len(toks) < 2 || !toks[0].captures() {
		return
	}
	set := func(lo, hi byte) {
		for c := int(lo); c <= int(hi); c++ {
			g.afterName[c] = true
		}
	}
	switch t := toks[1]; t.kind {
	case tLit:
		g.afterName[t.lit[0]] = true
	case tClass:
		for c, in := range t.set {
			g.afterName[c] = g.afterName[c] || in
		}
	case tDigits:
		set('0', '9')
	case tBlanks:
		g.afterName[' '], g.afterName['.'] = true, true
	default: // a free hole: anything
		set(0, 255)
	}
}

// expand writes out the alternations and {copy} of a form.
func expand(raw string, words []string) []string {
	open := strings.IndexByte(raw, '{')
	for open >= 0 {
		end := strings.IndexByte(raw[open:], '}')
		if end < 0 {
			return []string{raw} // compileForm reports it
		}
		body := raw[open+1 : open+end]
		var alts []string
		switch {
		case body == "copy":
			alts = words
		case strings.Contains(body, "|"):
			alts = strings.Split(body, "|")
		}
		if alts != nil {
			var out []string
			for _, a := range alts {
				out = append(out, expand(raw[:open]+a+raw[open+end+1:], words)...)
			}
			return out
		}
		next := strings.IndexByte(raw[open+end:], '{')
		if next < 0 {
			break
		}
		open += end + next
	}
	return []string{raw}
}

var holes = map[string]tokKind{
	"name": tName, ".name": tDotName, "stem": tStem, "n": tDigits, "*": tAny, "word": tWord, "tmp8": tTmp8,
	"XXXXXX": tMkstemp, "%path": tPctPath, "!path": tBangPath, "blanks": tBlanks,
}

var holeShapes = map[tokKind]string{
	tName: "name", tDotName: ".name", tStem: "name", tDigits: "N", tAny: "…", tWord: "…", tTmp8: "XXXXXXXX", tClass: "?",
	tMkstemp: "XXXXXX", tPctPath: "%path%to%name", tBangPath: "!path!to!name", tBlanks: " and spaces or dots",
}

func compileForm(row int, src string) (form, error) {
	f := form{row: row}
	var shape strings.Builder
	rest := src
	for rest != "" {
		switch rest[0] {
		case '{':
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return f, fmt.Errorf("unclosed { in %q", src)
			}
			name := rest[1:end]
			rest = rest[end+1:]
			if name == "ext" {
				if rest != "" || !hasKind(f.toks, tStem) {
					return f, fmt.Errorf("{ext} must end a form with {stem} in %q", src)
				}
				f.hasExt = true
				shape.WriteString(".ext")
				continue
			}
			k, ok := holes[name]
			if !ok {
				return f, fmt.Errorf("unknown hole {%s} in %q", name, src)
			}
			f.toks = append(f.toks, tok{kind: k})
			shape.WriteString(holeShapes[k])
		case '[':
			end := strings.IndexByte(rest, ']')
			if end != 4 || rest[2] != '-' {
				return f, fmt.Errorf("want a class like [a-p] in %q", src)
			}
			set := new([256]bool)
			for b := rest[1]; b <= rest[3]; b++ {
				set[b] = true
			}
			f.toks = append(f.toks, tok{kind: tClass, set: set})
			shape.WriteString(holeShapes[tClass])
			rest = rest[end+1:]
		default:
			end := strings.IndexAny(rest, "{[")
			if end < 0 {
				end = len(rest)
			}
			lit := rest[:end]
			shape.WriteString(lit)
			f.toks = append(f.toks, tok{kind: tLit, lit: strings.ToLower(lit)})
			rest = rest[end:]
		}
	}
	f.shape = shape.String()
	for _, t := range f.toks {
		switch t.kind {
		case tLit:
			f.weight += len(t.lit)
		case tDigits, tClass, tMkstemp, tTmp8, tPctPath, tBangPath, tBlanks:
			f.weight++ // a constrained hole says more than a free one
		}
	}
	if n := countCaptures(f.toks); n != 1 {
		return f, fmt.Errorf("want exactly one of {name}, {.name}, {stem}, {%%path}, {!path} in %q, have %d", src, n)
	}
	if hasKind(f.toks, tStem) != f.hasExt {
		return f, fmt.Errorf("{stem} and {ext} go together in %q", src)
	}
	return f, f.setAnchor(src)
}

func hasKind(toks []tok, k tokKind) bool {
	for _, t := range toks {
		if t.kind == k {
			return true
		}
	}
	return false
}

func countCaptures(toks []tok) int {
	n := 0
	for _, t := range toks {
		if t.captures() {
			n++
		}
	}
	return n
}

// setAnchor picks the literal the index finds the form by: the one at the
// end of the name when only an extension, digits, a fixed-length hole or
// blanks follow it; else a literal of two bytes or more that starts the
// name; else the longest literal, looked for after its rarest byte.
func (f *form) setAnchor(src string) error {
	toks := f.toks
	t, i := tail{ext: f.hasExt}, len(toks)-1
	if i >= 0 {
		switch toks[i].kind {
		case tDigits:
			t.digits, i = true, i-1
		case tClass:
			t.fixed, i = 1, i-1
		case tMkstemp:
			t.fixed, i = 6, i-1
		case tBlanks:
			t.blanks, i = true, i-1
		}
	}
	switch {
	case i >= 0 && toks[i].kind == tLit:
		f.place, f.anchor, f.tail = atEnd, toks[i].lit, t
		return nil
	case i == 0 && toks[0].captures() && t.blanks:
		f.place, f.tail = atEnd, t // {name}{blanks}: the tail alone is the anchor
		return nil
	case toks[0].kind == tLit && len(toks[0].lit) >= 2:
		f.place, f.anchor = atStart, toks[0].lit
		return nil
	}
	longest := ""
	for _, tk := range toks {
		if tk.kind == tLit && len(tk.lit) > len(longest) {
			longest = tk.lit
		}
	}
	if longest == "" && hasKind(toks, tPctPath) {
		longest = "%" // a bare {%path}: found by its separator
	}
	if longest == "" {
		return fmt.Errorf("%q has no literal to find it by", src)
	}
	f.place, f.anchor, f.gate = inside, longest, rarest(longest)
	return nil
}

// rarest returns the byte of s least likely in a file name, so that most
// names are passed over by one IndexByte.
func rarest(s string) byte {
	const order = "~#%!()@,$_-0123456789"
	for i := 0; i < len(order); i++ {
		if strings.IndexByte(s, order[i]) >= 0 {
			return order[i]
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '.' {
			return s[i]
		}
	}
	return s[0]
}

func (g *grammar) add(f form) error {
	idx := int32(len(g.forms))
	g.forms = append(g.forms, f)
	switch f.place {
	case atStart:
		g.first[f.anchor[0]] = append(g.first[f.anchor[0]], idx)
		k := pair(f.anchor[0], f.anchor[1])
		g.firstAt[k/64] |= 1 << (k % 64)
	case inside:
		g.addInner(f.gate, idx)
	default:
		ti, bit, err := g.tailIndexOf(f.tail)
		if err != nil {
			return err
		}
		if f.anchor == "" {
			ti.bare = append(ti.bare, idx)
		} else {
			n := len(f.anchor)
			last := f.anchor[n-1]
			ti.byLast[last] = append(ti.byLast[last], idx)
			g.lastMask[last] |= bit
			if n == 1 {
				g.oneByte[last] |= bit
			} else {
				k := pair(f.anchor[n-2], last)
				g.lastTwo[k/64] |= 1 << (k % 64)
			}
		}
	}
	return nil
}

func (g *grammar) addInner(gate byte, idx int32) {
	g.gates[gate] = true
	for i := range g.inner {
		if g.inner[i].gate == gate {
			g.inner[i].forms = append(g.inner[i].forms, idx)
			return
		}
	}
	g.inner = append(g.inner, gated{gate: gate, forms: []int32{idx}})
}

// tailIndexOf returns the index of suffix anchors with tail t and its bit
// in lastMask.
func (g *grammar) tailIndexOf(t tail) (*tailIndex, uint16, error) {
	for i := range g.tails {
		if g.tails[i].tail == t {
			return &g.tails[i], 1 << i, nil
		}
	}
	if len(g.tails) == 16 {
		return nil, 0, fmt.Errorf("more than 16 kinds of tail for lastMask")
	}
	g.tails = append(g.tails, tailIndex{tail: t})
	return &g.tails[len(g.tails)-1], 1 << (len(g.tails) - 1), nil
}

// stops are the places in a name where a suffix anchor can end, found once
// for every tail: from the end of the name ([0]) and from its last dot past
// the first byte ([1]), as they are, before the digits that end there, and
// before the spaces and dots that end there; -1 where there is none.
type stops struct{ plain, digits, blanks [2]int }

func stopsOf(seg string, dot int) stops {
	st := stops{plain: [2]int{len(seg), -1}}
	st.digits[0], st.blanks[0] = cuts(seg, len(seg))
	st.digits[1], st.blanks[1] = -1, -1
	if dot > 0 {
		st.plain[1] = dot
		st.digits[1], st.blanks[1] = cuts(seg, dot)
	}
	return st
}

// cuts returns where the digits and where the spaces and dots that end at
// s in seg start, -1 for none.
func cuts(seg string, s int) (digits, blanks int) {
	digits, blanks = -1, -1
	if s == 0 {
		return
	}
	switch c := seg[s-1]; {
	case '0' <= c && c <= '9':
		d := s - 1
		for d > 0 && '0' <= seg[d-1] && seg[d-1] <= '9' {
			d--
		}
		digits = d
	case c == ' ' || c == '.':
		d := s - 1
		for d > 0 && (seg[d-1] == ' ' || seg[d-1] == '.') {
			d--
		}
		blanks = d
	}
	return
}

// endPlace is one place a suffix anchor can end: from the name's end or
// from its last dot (for a tail with the extension put back), then before
// the digits, the fixed bytes or the blanks the tail takes; with the tails
// (a bit each) whose anchors end there.
type endPlace struct {
	fromDot bool
	cut     tail // digits, fixed or blanks; ext is not used
	tails   uint16
	bare    uint16 // the tails with forms whose tail alone is the anchor
}

// indexPlaces files every tail under the places its anchors end.
func (g *grammar) indexPlaces() {
	for i := range g.tails {
		t := g.tails[i].tail
		for _, fromDot := range []bool{false, true} {
			if fromDot && !t.ext {
				continue
			}
			cut := tail{digits: t.digits, fixed: t.fixed, blanks: t.blanks}
			j := slices.IndexFunc(g.places, func(p endPlace) bool { return p.fromDot == fromDot && p.cut == cut })
			if j < 0 {
				g.places = append(g.places, endPlace{fromDot: fromDot, cut: cut})
				j = len(g.places) - 1
			}
			g.places[j].tails |= 1 << i
			if len(g.tails[i].bare) > 0 {
				g.places[j].bare |= 1 << i
			}
		}
	}
}

// at returns where in the name the place is, or -1.
func (st *stops) at(p *endPlace) int {
	k := 0
	if p.fromDot {
		k = 1
	}
	s := st.plain[k]
	switch {
	case s < 0:
	case p.cut.digits:
		s = st.digits[k]
	case p.cut.fixed > 0:
		s -= p.cut.fixed
	case p.cut.blanks:
		s = st.blanks[k]
	}
	return s
}

// candidates appends the forms whose anchor seg holds where the form puts
// it. Only these are matched token by token.
func (g *grammar) candidates(seg string, out []int32) []int32 {
	if seg == "" || len(seg) > maxDecoratedSegment {
		return out
	}
	st := stopsOf(seg, strings.LastIndexByte(seg, '.'))
	for pi := range g.places {
		p := &g.places[pi]
		e := st.at(p)
		if e < 0 {
			continue
		}
		for m := p.bare; m != 0; m &= m - 1 {
			for _, fi := range g.tails[bits.TrailingZeros16(m)].bare {
				out = appendOnce(out, fi)
			}
		}
		if !g.endsLikeOne(seg[:e], p.tails) {
			continue
		}
		for m := p.tails & g.lastMask[seg[e-1]]; m != 0; m &= m - 1 {
			for _, fi := range g.tails[bits.TrailingZeros16(m)].byLast[seg[e-1]] {
				if strings.HasSuffix(seg[:e], g.forms[fi].anchor) {
					out = appendOnce(out, fi)
				}
			}
		}
	}
	if g.startsLikeOne(seg) {
		for _, fi := range g.first[seg[0]] {
			if strings.HasPrefix(seg, g.forms[fi].anchor) {
				out = appendOnce(out, fi)
			}
		}
	}
	if !g.hasGate(seg) {
		return out
	}
	for i := range g.inner {
		if strings.IndexByte(seg, g.inner[i].gate) < 0 {
			continue
		}
		for _, fi := range g.inner[i].forms {
			if strings.Contains(seg, g.forms[fi].anchor) {
				out = appendOnce(out, fi)
			}
		}
	}
	return out
}

// hasGate reports whether seg holds a byte a contains anchor is looked for
// after: one pass, where a name holds none, instead of one per byte.
func (g *grammar) hasGate(seg string) bool {
	for i := 0; i < len(seg); i++ {
		if g.gates[seg[i]] {
			return true
		}
	}
	return false
}

// endsLikeOne reports whether s ends the way a suffix anchor of the tails
// in mask does: in its last byte, and in its last two when it has two.
func (g *grammar) endsLikeOne(s string, mask uint16) bool {
	n := len(s)
	if n == 0 || g.lastMask[s[n-1]]&mask == 0 {
		return false
	}
	if g.oneByte[s[n-1]]&mask != 0 {
		return true
	}
	k := pair(s[max(n-2, 0)], s[n-1])
	return n > 1 && g.lastTwo[k/64]&(1<<(k%64)) != 0
}

// startsLikeOne reports whether seg starts with the first two bytes of a
// start anchor.
func (g *grammar) startsLikeOne(seg string) bool {
	if len(seg) < 2 {
		return false
	}
	k := pair(seg[0], seg[1])
	return g.firstAt[k/64]&(1<<(k%64)) != 0
}

func appendOnce(out []int32, fi int32) []int32 {
	for _, x := range out {
		if x == fi {
			return out
		}
	}
	return append(out, fi)
}

// span is where a form's name hole sits in the part of a name it matched.
type span struct{ from, to int }

// solver matches one form's tokens against a name, collecting every place
// the name hole can sit (at most maxSolutions).
type solver struct {
	toks    []tok
	s       string
	raw     string // s as written, or "" when unknown
	hint    bool   // judging the hint: an unknown raw passes {XXXXXX}
	anyPath bool   // relativePathsForTest
	w       *work
	sols    [maxSolutions]span
	n       int
}

func (v *solver) solve(ti, pos int, capture span) {
	if v.n == maxSolutions || !v.w.spend() {
		return
	}
	if ti == len(v.toks) {
		if pos == len(v.s) {
			v.sols[v.n] = capture
			v.n++
		}
		return
	}
	t := v.toks[ti]
	rest := v.s[pos:]
	switch t.kind {
	case tLit:
		if strings.HasPrefix(rest, t.lit) {
			v.solve(ti+1, pos+len(t.lit), capture)
		}
	case tDigits:
		for i := 0; i < len(rest) && '0' <= rest[i] && rest[i] <= '9'; i++ {
			v.solve(ti+1, pos+i+1, capture)
		}
	case tBlanks:
		for i := 0; i < len(rest) && (rest[i] == ' ' || rest[i] == '.'); i++ {
			v.solve(ti+1, pos+i+1, capture)
		}
	case tClass:
		if rest != "" && t.set[rest[0]] {
			v.solve(ti+1, pos+1, capture)
		}
	case tMkstemp:
		if len(rest) >= 6 && v.mkstemp(pos) {
			v.solve(ti+1, pos+6, capture)
		}
	case tTmp8:
		if len(rest) >= 8 && pythonTemp(rest[:8]) {
			v.solve(ti+1, pos+8, capture)
		}
	case tAny:
		v.free(ti, pos, 0, len(rest), capture)
	case tWord:
		word := strings.IndexByte(rest, '.')
		if word < 0 {
			word = len(rest)
		}
		v.free(ti, pos, 1, word, capture)
	default: // the name
		min := 1
		switch t.kind {
		case tStem:
			min = 0
		case tPctPath, tBangPath:
			if !v.anyPath && !absolute(rest, t.kind) {
				return
			}
		}
		v.free(ti, pos, min, len(rest), span{-1, -1})
	}
}

// free goes on after a hole at ti that takes lo to hi bytes from pos: only
// to the ends after which the rest of the form can start (the end of the
// name when the hole ends the form, each place the next literal is found
// when one follows), so a hole costs what the name offers, not its
// length. A capture of {-1, -1} means the hole is the name.
func (v *solver) free(ti, pos, lo, hi int, capture span) {
	next, name := ti+1, capture.from < 0
	for i := lo; i <= hi; i++ {
		switch {
		case next == len(v.toks):
			i = max(i, len(v.s)-pos) // only the end of the name can end it
			if i > hi {
				return
			}
		case v.toks[next].kind == tLit:
			j := strings.Index(v.s[pos+i:], v.toks[next].lit)
			if j < 0 || i+j > hi {
				return
			}
			i += j
		}
		if name {
			capture = span{pos, pos + i}
		}
		v.solve(next, pos+i, capture)
		if v.n == maxSolutions || v.w.spent() {
			return
		}
	}
}

// mkstemp reports whether the six bytes at pos are mkstemp's: letters and
// digits, one at least a digit, or upper case past the first as the name is
// written. A word is lower case or capitalized ("sample", "Config"); six
// random letters and digits are neither but one time in ninety.
func (v *solver) mkstemp(pos int) bool {
	mixed := false
	for i := pos; i < pos+6; i++ {
		c := v.s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
		if '0' <= c && c <= '9' {
			mixed = true
		} else if i > pos && v.raw != "" && 'A' <= v.raw[i] && v.raw[i] <= 'Z' {
			mixed = true
		}
	}
	return mixed || v.hint && v.raw == ""
}

// pythonTemp reports whether s is what Python's tempfile puts in a name:
// eight of a-z, 0-9 and '_', one at least not a letter, which no word is.
func pythonTemp(s string) bool {
	mixed := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9' || c == '_':
			mixed = true
		case c < 'a' || c > 'z':
			return false
		}
	}
	return mixed
}

// undecorated returns the names (or, for {%path} and {!path}, the paths)
// seg was made from by form f. raw is seg as written when known.
func (g *grammar) undecorated(f *form, seg, raw string, w *work, out []string) []string {
	if len(raw) != len(seg) {
		raw = ""
	}
	try := func(s, ext string) {
		v := solver{toks: f.toks, s: s, raw: raw[:min(len(raw), len(s))], anyPath: g.relativePathsForTest, w: w}
		v.solve(0, 0, span{})
		for _, sp := range v.sols[:v.n] {
			out = appendNames(out, f, s[sp.from:sp.to], ext, seg, g.relativePathsForTest)
		}
	}
	if !f.hasExt {
		try(seg, "")
		return out
	}
	try(seg, "")
	if dot := strings.LastIndexByte(seg, '.'); dot > 0 {
		try(seg[:dot], seg[dot:])
	}
	return out
}

// matches reports whether form f matches seg at all: the hint's test,
// which allocates nothing.
func (g *grammar) matches(f *form, seg string, w *work) bool {
	v := solver{toks: f.toks, s: seg, hint: true, anyPath: g.relativePathsForTest, w: w}
	if v.solve(0, 0, span{}); v.n > 0 {
		return true
	}
	if dot := strings.LastIndexByte(seg, '.'); f.hasExt && dot > 0 {
		v = solver{toks: f.toks, s: seg[:dot], hint: true, anyPath: g.relativePathsForTest, w: w}
		v.solve(0, 0, span{})
	}
	return v.n > 0
}

// appendNames turns a captured name into the names it stands for.
func appendNames(out []string, f *form, capture, ext, seg string, anyPath bool) []string {
	var k tokKind
	for _, t := range f.toks {
		if t.captures() {
			k = t.kind
		}
	}
	add := func(name string) {
		if name != "" && name != seg && name != "." && name != ".." {
			for _, o := range out {
				if o == name {
					return
				}
			}
			out = append(out, name)
		}
	}
	switch k {
	case tDotName:
		if len(capture) > 1 && capture[0] == '.' {
			add(capture[1:]) // the tool put a dot in front: .key.pem.swp
			add(capture)     // the name had its own: .env.swp
		}
	case tStem:
		add(capture + ext)
	case tPctPath, tBangPath:
		add(decodePath(capture, k, anyPath))
	default:
		add(capture)
	}
	return out
}

// absolute reports whether s starts the way the tool spells an absolute
// path, which is the only kind it writes: Vim and Neovim's
// make_percent_swname and Vim's u_get_undo_file_name take the full name
// (fix_fname) and turn every character vim_ispathsep knows into '%', so
// "/home/ann/.env" is "%home%ann%.env", "\\srv\share\.env" is
// "%%srv%share%.env", and "C:\Users\ann\.env" is "C%%Users%ann%.env" (on
// Windows ':' is a separator too). Emacs's make-backup-file-name-1 and
// make-auto-save-file-name (uniquify) take the absolute name, write a drive
// "c:" as "/drive_c", double each '!' and turn '/' into '!': the name always
// starts with '!'.
func absolute(s string, k tokKind) bool {
	if k == tBangPath {
		return strings.HasPrefix(s, "!")
	}
	return strings.HasPrefix(s, "%") || drive(s)
}

// drive reports whether s starts with Vim's spelling of a Windows drive.
func drive(s string) bool {
	return len(s) > 3 && 'a' <= s[0] && s[0] <= 'z' && s[1:3] == "%%"
}

// decodePath turns a name that spells a whole path back into the path, or
// "" when it spells none. The drive (Vim's "c%%", Emacs's "!drive_c!") and
// the root are not part of what the rules look at, so the path read off is
// always shorter than the name, and a chain of readings ends.
//
// Emacs doubles a '!' before it turns '/' into '!', so "!!!" can be "!/"
// or "/!" ("a!/b" and "a/!b" make the same name); the reading pairs them
// from the left, which leaves the last name, the one most rules look at,
// as the tool had it unless it starts with '!'.
func decodePath(s string, k tokKind, anyPath bool) string {
	var parts []string
	switch {
	case k == tPctPath && (anyPath || absolute(s, k)):
		switch {
		case drive(s):
			s = s[3:]
		case strings.HasPrefix(s, "%"):
			s = s[1:]
		}
		parts = strings.Split(s, "%")
	case k == tBangPath && (anyPath || absolute(s, k)):
		parts = splitBang(strings.TrimPrefix(s, "!"))
		if len(parts) > 1 && len(parts[0]) == len("drive_c") && strings.HasPrefix(parts[0], "drive_") {
			parts = parts[1:]
		}
	default:
		return ""
	}
	kept := parts[:0]
	for _, p := range parts {
		switch p {
		case "", ".", "..":
		default:
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "/")
}

// splitBang splits Emacs's spelling of a path at each single '!', reading
// "!!" as a '!' of the path.
func splitBang(s string) []string {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '!':
			b.WriteByte(s[i])
		case i+1 < len(s) && s[i+1] == '!':
			b.WriteByte('!')
			i++
		default:
			parts = append(parts, b.String())
			b.Reset()
		}
	}
	return append(parts, b.String())
}

// dirSet is every literal folder name the rules put before a file or
// around a folder (.ssh, .kube, gcloud, appdata): a copied folder is worth
// reading as a copy only when the name it was copied from is one of them.
//
// The names are filed by their first two bytes: at has a bit per pair, and
// a pair's names are byPair[rank], rank being the number of pairs below it
// (before[k/64] plus the bits under k in its word), which every folder of
// every path looks up without hashing.
type dirSet struct {
	at     [1 << 16 / 64]uint64
	before [1 << 16 / 64]uint16
	byPair [][]string
}

func newDirSet(patterns []string) *dirSet {
	names := map[uint16][]string{}
	for _, p := range patterns {
		segs := strings.Split(p, "/")
		for _, s := range segs[:len(segs)-1] {
			if len(s) < 2 || strings.ContainsAny(s, meta) {
				continue
			}
			if k := pair(s[0], s[1]); !contains(names[k], s) {
				names[k] = append(names[k], s)
			}
		}
	}
	d := &dirSet{}
	for k := range names {
		d.at[k/64] |= 1 << (k % 64)
	}
	for w := 1; w < len(d.at); w++ {
		d.before[w] = d.before[w-1] + uint16(bits.OnesCount64(d.at[w-1]))
	}
	d.byPair = make([][]string, len(names))
	for k, list := range names {
		d.byPair[d.rank(k)] = list
	}
	return d
}

// names returns the folder names that start with the pair k.
func (d *dirSet) names(k uint16) []string {
	if d.at[k/64]&(1<<(k%64)) == 0 {
		return nil
	}
	return d.byPair[d.rank(k)]
}

func (d *dirSet) rank(k uint16) int {
	return int(d.before[k/64]) + bits.OnesCount64(d.at[k/64]&(1<<(k%64)-1))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decoratesDir reports whether a folder name may be a decorated copy of a
// folder the rules name: it starts with one of their names and goes on the
// way a decoration does (afterName), or starts the way a prefix decoration
// does ("copy of .ssh").
func (g *grammar) decoratesDir(d *dirSet, seg string) bool {
	if len(seg) < 3 || len(seg) > maxDecoratedSegment {
		return false
	}
	if names := d.names(pair(seg[0], seg[1])); names != nil {
		for i := 2; i < len(seg); i++ {
			if !g.afterName[seg[i]] {
				continue
			}
			for _, name := range names {
				if len(name) == i && seg[:i] == name {
					return true
				}
			}
		}
	}
	if g.startsLikeOne(seg) {
		for _, fi := range g.first[seg[0]] {
			if strings.HasPrefix(seg, g.forms[fi].anchor) {
				return true
			}
		}
	}
	return false
}

// hint reports whether a normalized path may carry a decoration: its last
// segment, base, or a folder named like a rule's folder, matches a form. It
// is on every path's way, so it allocates nothing and touches the index
// only. A path that spends w's steps before an answer is handed to the
// reading, which refuses it when it costs as much there.
func (g *grammar) hint(d *dirSet, full, base string, w *work) bool {
	if len(full) > maxDecoratedPath {
		return false
	}
	var buf [32]int32
	if g.segmentHints(base, buf[:0], w) {
		return true
	}
	folders := full[:len(full)-len(base)] // each ends in '/'
	for end := strings.IndexByte(folders, '/'); end >= 0; end = strings.IndexByte(folders, '/') {
		if !w.spend() {
			return true
		}
		// Most folders start with no pair a rule's folder or a start
		// anchor starts with; they cost two bits.
		if seg := folders[:end]; len(seg) >= 3 {
			k := pair(seg[0], seg[1])
			if (d.at[k/64]|g.firstAt[k/64])&(1<<(k%64)) != 0 && g.decoratesDir(d, seg) && g.segmentHints(seg, buf[:0], w) {
				return true
			}
		}
		folders = folders[end+1:]
	}
	return false
}

func (g *grammar) segmentHints(seg string, buf []int32, w *work) bool {
	for _, fi := range g.candidates(seg, buf) {
		if !w.spend() || g.matches(&g.forms[fi], seg, w) || w.spent() {
			return true
		}
	}
	return false
}

// verdict is what the rules alone say about one normalized path.
type verdict struct {
	rule   Rule
	ok     bool
	freed  bool // a rule's pattern matched and its own exception freed the path
	hint   bool // the path may carry a decoration
	costly bool // the hint spent its steps before it could say
	steps  int  // the hint's work
}

// plainFunc judges a path by the rules alone, and when asked, whether it
// may carry a decoration.
type plainFunc func(unsafePath string, wantHint bool) verdict

// layer is one decoration taken off a name on the way to the secret.
type layer struct {
	form *form
}

// finding is what judging a path found: secret by a rule (with the
// decorations taken off to reach it), free as a look-alike by its kind, or
// neither.
type finding struct {
	rule   Rule
	ok     bool
	freed  bool
	layers []layer
	path   string // the path the rule matched
}

// search is one judgement of a decorated path, with its budget.
type search struct {
	g     *grammar
	dirs  *dirSet
	plain plainFunc
	tried int
	seen  []string
	work  work
}

// judge is the one place that decides a decorated path. A path is read as
// made from another name by the forms that fit it, the most specific (the
// most literal bytes) first, and the first form that reads a name off
// decides: the path is secret exactly when that name is, judged the same way
// (its own decorations first, then the rules), up to maxLayers deep. So
// .env~ is secret with the decoration and .env's rule in its reason, and
// id_rsa.pub~ and secrets.go~ are free though the rules alone would match
// them. Only a path no form reads is left to the rules' own answer, and a
// path that costs more than maxSteps to read, here or in the hint, is
// refused. steps is the work the reading took.
func (g *grammar) judge(d *dirSet, unsafePath string, first verdict, plain plainFunc) (r Rule, ok bool, steps int) {
	if first.costly {
		return tooCostly, true, 0
	}
	full := normalize(unsafePath)
	if full == "" || len(full) > maxDecoratedPath {
		return first.rule, first.ok, 0
	}
	s := &search{g: g, dirs: d, plain: plain, seen: []string{full}, work: g.work()}
	f, decided := s.undecorate(full, rawBase(unsafePath, full), 0)
	steps = s.work.steps
	switch {
	case s.work.spent():
		return tooCostly, true, steps
	case !decided:
		return first.rule, first.ok, steps
	case f.ok:
		return decorated(f.rule, f.layers, f.path), true, steps
	}
	return Rule{}, false, steps
}

// undecorate finds the most specific form that reads a name off one of
// path's segments and returns what that name was judged: secret, free, or
// neither; decided is false when no form reads one.
func (s *search) undecorate(path, raw string, depth int) (f finding, decided bool) {
	if depth == maxLayers {
		return finding{}, false
	}
	var forms []int32
	var names []string
	for _, sg := range s.g.segments(s.dirs, path, &s.work) {
		seg := path[sg.from:sg.to]
		segRaw := ""
		if sg.to == len(path) {
			segRaw = raw
		}
		forms = s.g.candidates(seg, forms[:0])
		slices.SortFunc(forms, func(a, b int32) int {
			if d := s.g.forms[b].weight - s.g.forms[a].weight; d != 0 {
				return d
			}
			return int(a - b) // as specific: the table's order
		})
		for _, fi := range forms {
			if !s.work.spend() {
				return finding{}, false
			}
			form := &s.g.forms[fi]
			names = s.g.undecorated(form, seg, segRaw, &s.work, names[:0])
			// The names one form reads are tried in order (Vim's and
			// rsync's dot put in front first); the first that is secret or
			// free decides, and a form whose names are neither decides that.
			for _, name := range names {
				// A name read off is a whole path to clean and judge again:
				// a step for each 64 bytes of it.
				if s.tried == maxTried || !s.work.spendN(1+len(path)/64) {
					break
				}
				p := cleanIfNeeded(path[:sg.from] + name + path[sg.to:])
				if p == "" || contains(s.seen, p) {
					continue
				}
				s.seen = append(s.seen, p)
				sub := s.judgePath(p, depth+1)
				decided = true
				if sub.ok {
					sub.layers = append([]layer{{form}}, sub.layers...)
					return sub, true
				}
				if sub.freed {
					return finding{freed: true}, true
				}
			}
			if decided {
				return finding{}, true
			}
		}
	}
	return finding{}, false
}

// judgePath judges a name read off a decorated one: by its own decorations
// first, then by the rules.
func (s *search) judgePath(p string, depth int) finding {
	s.tried++
	if f, decided := s.undecorate(p, "", depth); decided {
		return f
	}
	v := s.plain(p, false)
	return finding{rule: v.rule, ok: v.ok, freed: v.freed, path: p}
}

// segments lists the segments of path worth taking a decoration off: the
// last one, then the folders named like a rule's folder, nearest first.
func (g *grammar) segments(d *dirSet, path string, w *work) []span {
	start := strings.LastIndexByte(path, '/') + 1
	out := []span{{start, len(path)}}
	for end := start - 1; end > 0 && w.spend(); {
		from := strings.LastIndexByte(path[:end], '/') + 1
		if g.decoratesDir(d, path[from:end]) {
			out = append(out, span{from, end})
		}
		end = from - 1
	}
	return out
}

// rawBase returns the last segment of unsafePath as written, when it lines
// up byte for byte with the normalized one (it does unless cleaning or
// Unicode lower-casing moved it).
func rawBase(unsafePath, full string) string {
	p := strings.TrimRight(unsafePath, "/")
	raw := p[strings.LastIndexByte(p, '/')+1:]
	base := full[strings.LastIndexByte(full, '/')+1:]
	if len(raw) != len(base) || !strings.EqualFold(raw, base) {
		return ""
	}
	return raw
}

// decorated is the rule a decorated path is secret by: the rule of the
// name it was made from, with a reason that says how it was made.
func decorated(base Rule, layers []layer, undecorated string) Rule {
	var why, src strings.Builder
	for i, l := range layers {
		if i > 0 {
			why.WriteString(" of ")
			src.WriteString("; ")
		}
		d := Decorations[l.form.row]
		fmt.Fprintf(&why, "%s (%s)", d.What, l.form.shape)
		src.WriteString(d.Source)
	}
	return Rule{
		Pattern: base.Pattern,
		Reason:  fmt.Sprintf("%s of a secret file: %s, %s", why.String(), undecorated, base.Reason),
		Source:  base.Source + "; " + src.String(),
	}
}
