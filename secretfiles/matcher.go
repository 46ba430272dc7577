package secretfiles

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/gatehouse/gatehouse/internal/hfsname"
)

// Matcher answers whether a path is secret. It is built once from a rule
// table and is safe for concurrent use.
type Matcher struct {
	rules   []Rule
	all     *set   // every rule's pattern
	except  []*set // each rule's exceptions, by rule index (nil: none)
	grammar *grammar
	dirs    *dirSet // the folder names the rules spell out
	// decorationsOffForTest judges every path as the matcher did before it
	// read copies and backups by the name they were made from (the rules
	// alone, and the name without trailing '~', spaces or dots), so a test
	// can show what the grammar changes.
	decorationsOffForTest bool
}

// Compile builds a matcher from rules. Every pattern must start with "**/"
// (rules match at any depth) and be valid doublestar syntax.
func Compile(rules []Rule) (*Matcher, error) {
	m := &Matcher{rules: rules, except: make([]*set, len(rules)), grammar: defaultGrammar()}
	pats := make([]string, len(rules))
	// Rules share their exception lists (the table's 266 lists of
	// exceptions are 18 distinct ones, 2,110 of 28,509 patterns): each
	// distinct list is compiled once and its set, which matching only
	// reads, shared. Compiling each rule's copy cost 25 ms, most of a
	// 'gatehouse do'.
	sets := map[string]*set{}
	for i, r := range rules {
		pats[i] = r.Pattern
		if len(r.Except) == 0 {
			continue
		}
		key := listKey(r.Except)
		ex, ok := sets[key]
		if !ok {
			var err error
			if ex, err = compileSet(r.Except); err != nil {
				return nil, fmt.Errorf("rule %s: %w", r.Pattern, err)
			}
			sets[key] = ex
		}
		m.except[i] = ex
	}
	all, err := compileSet(pats)
	if err != nil {
		return nil, err
	}
	m.all = all
	m.dirs = newDirSet(pats)
	return m, nil
}

// listKey names a list of patterns by its content: each pattern with its
// length before it, so no two lists share a key.
func listKey(patterns []string) string {
	var b strings.Builder
	for _, p := range patterns {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// Rules returns the table the matcher was built from.
func (m *Matcher) Rules() []Rule { return m.rules }

// Match reports the first rule (in table order) that makes path secret. path
// is slash-separated and relative; letter case is ignored. A name a tool
// made from another one (.env~, #.env#, key.pem.bak, ".env - Copy",
// .kube.bak/config: the forms are in Decorations) is judged by the name it
// was made from, and the reason says so. Match neither opens nor stats
// anything: a caller holding a symlink asks again with what it resolves to.
func (m *Matcher) Match(unsafePath string) (Rule, bool) {
	r, ok, _ := m.match(unsafePath)
	if !ok && hfsname.Has(unsafePath) {
		// On a Mac's HFS+ disk ".e\u200cnv" opens .env: judge the name as
		// that file system reads it too.
		r, ok, _ = m.match(hfsname.Strip(unsafePath))
	}
	return r, ok
}

// match is Match with the steps reading the decorations took (bounded by
// maxSteps for the hint and again for the reading).
func (m *Matcher) match(unsafePath string) (Rule, bool, int) {
	if m.decorationsOffForTest {
		r, ok := m.undecoratedForTest(unsafePath)
		return r, ok, 0
	}
	v := m.plain(unsafePath, true)
	if !v.hint {
		return v.rule, v.ok, v.steps
	}
	r, ok, steps := m.grammar.judge(m.dirs, unsafePath, v, m.plain)
	return r, ok, v.steps + steps
}

// undecoratedForTest is Match as it was before the decorations.
func (m *Matcher) undecoratedForTest(unsafePath string) (Rule, bool) {
	if v := m.plain(unsafePath, false); v.ok {
		return v.rule, true
	}
	if t := strings.TrimRight(unsafePath, "~ ."); t != unsafePath && t != "" && !strings.HasSuffix(t, "/") {
		v := m.plain(t, false)
		return v.rule, v.ok
	}
	return Rule{}, false
}

// plain judges a path by the rules alone and, when asked, whether it may
// carry a decoration.
func (m *Matcher) plain(unsafePath string, wantHint bool) verdict {
	var buf [256]byte
	p := parts(unsafePath, buf[:0])
	var cand [8]int
	best, freed := -1, false
	for _, i := range m.all.candidates(&p, cand[:0]) {
		if best >= 0 && i >= best {
			continue
		}
		if ex := m.except[i]; ex != nil {
			var exc [8]int
			if len(ex.candidates(&p, exc[:0])) > 0 {
				freed = true
				continue
			}
		}
		best = i
	}
	var v verdict
	if wantHint {
		w := m.grammar.work()
		v.hint = m.grammar.hint(m.dirs, p.full, p.base, &w)
		v.steps, v.costly = w.steps, w.spent()
	}
	if best < 0 {
		v.freed = freed
		return v
	}
	v.rule, v.ok = m.rules[best], true
	return v
}

// IsSecret reports whether any rule matches path.
func (m *Matcher) IsSecret(unsafePath string) bool {
	_, ok := m.Match(unsafePath)
	return ok
}

// pathParts is a normalized path split once for every index.
type pathParts struct {
	full string // lower-cased, cleaned, relative
	base string // last segment
	ext  string // base from its last '.', or ""
}

// normalize is the one definition of what the rules see: lower case, no
// leading slash, no empty, "." or ".." segments left by a careless caller.
func normalize(p string) string {
	return cleanLower(p, nil)
}

func parts(p string, buf []byte) pathParts {
	full := cleanLower(p, buf)
	base := full[strings.LastIndexByte(full, '/')+1:]
	ext := ""
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		ext = base[i:]
	}
	return pathParts{full: full, base: base, ext: ext}
}

// cleanLower lower-cases p and cleans it when it is not already clean. An
// ASCII path is lower-cased into buf and returned as a string over buf's
// bytes, without allocating: the result must not outlive the caller's buf
// (Match keeps it inside the call). Other paths go through strings.ToLower.
func cleanLower(p string, buf []byte) string {
	s := p
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= utf8.RuneSelf {
			s = strings.ToLower(p)
			break
		}
		if 'A' <= c && c <= 'Z' {
			if cap(buf) < len(p) {
				s = strings.ToLower(p)
				break
			}
			buf = append(buf[:0], p...)
			for j := i; j < len(buf); j++ {
				if c := buf[j]; 'A' <= c && c <= 'Z' {
					buf[j] = c + 'a' - 'A'
				} else if c >= utf8.RuneSelf {
					return cleanIfNeeded(strings.ToLower(p))
				}
			}
			s = unsafe.String(&buf[0], len(buf))
			break
		}
	}
	return cleanIfNeeded(s)
}

func cleanIfNeeded(s string) string {
	if needsClean(s) {
		return strings.TrimLeft(path.Clean("/"+s), "/")
	}
	return s
}

// needsClean reports, in one pass, whether s has a leading or trailing
// slash, an empty segment, or a "." or ".." segment.
func needsClean(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '/' || s[len(s)-1] == '/' {
		return true
	}
	segStart := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '/' {
			continue
		}
		switch s[segStart:i] {
		case "", ".", "..":
			return true
		}
		segStart = i + 1
	}
	return false
}

// set is a compiled list of patterns; candidates returns the index of every
// pattern that matches.
type set struct {
	byName  map[string]*named     // patterns whose last segment is a literal name
	byExt   map[string][]starRule // name patterns with stars, by the extension they end in
	byFirst [256][]starRule       // the other star patterns with a fixed first letter
	// byPrefix2 holds those whose fixed start is two bytes or more, by
	// those two bytes, with a bit per pair in prefixAt.
	byPrefix2 map[uint16][]starRule
	prefixAt  [1 << 16 / 64]uint64
	noExt     []starRule // star patterns that start with a star and have no fixed extension
	// The star patterns with no fixed extension that start with a star,
	// indexed: those that end in a literal by its last two bytes
	// ("*_rsa"), those open at both ends by the first two bytes of their
	// first literal ("*api_key*"), with a bit per such pair.
	bySuffix2 map[uint16][]starRule
	byBigram  map[uint16][]starRule
	bigrams   [1 << 16 / 64]uint64
	// byQuad holds the open-ended ones whose first literal has four bytes
	// or more, by those four bytes ("*secrets*" under "secr"), with a bit
	// per hashed key in quads: far fewer names share four bytes than two.
	byQuad map[uint32][]starRule
	quads  [1 << 16 / 64]uint64
	// namedGlobs are the globs whose last segment is a literal name, by
	// that name ("**/sites/*/settings.php").
	namedGlobs map[string][]globRule
	globNameAt pairFilter
	folders    map[string][]segRule // "**/.ssh/**", "**/.aws/sso/cache/**": segments anywhere
	// folderAt filters the lookups of folders by a segment: most folder
	// names in a tree are not the first segment of any folder rule.
	folderAt pairFilter
	// nameAt, extAt and suffixAt filter the lookups of byName, byExt and
	// bySuffix2 the same way: most paths never reach a map.
	nameAt, extAt pairFilter
	suffixAt      [1 << 16 / 64]uint64
	// starDirs are folder rules whose one segment is a star name
	// ("**/*.opvault/**"), by the extension their name ends in ("" when it
	// ends in a star or has no fixed extension).
	starDirs  map[string][]starRule
	starDirAt pairFilter  // the extensions starDirs holds
	anyDirs   bool        // starDirs has rules with no fixed extension
	classes   []classRule // one-segment names with character classes
	globs     []globRule  // anything else, through doublestar
}

// starRule is a single-segment pattern made of literals and '*', optionally
// under literal folders ("**/.azure/msal_token_cache.*").
type starRule struct {
	idx   int
	parts []string // literals between stars
	open  [2]bool  // a star at the start, a star at the end
	dir   string   // the folders the name must sit in, joined by '/' ("" for any)
}

// classRule is a one-segment name with character classes
// ("*-[0-9a-f]...[0-9a-f].json"): the fixed characters before its first
// star and after its last are checked here, and only a name that passes is
// handed to doublestar.
type classRule struct {
	idx        int
	name       string // the pattern's last segment
	head, tail []charClass
}

// charClass is one character of a pattern: a literal or a [...] class of
// ASCII bytes.
type charClass [256]bool

// named holds the patterns for one literal last segment.
type named struct {
	exact    []int     // "**/.npmrc": the name alone
	suffixes []segRule // "**/.kube/config": the path ends in these segments
}

type segRule struct {
	idx  int
	segs []string
	text string // segs joined by '/'
}

type globRule struct {
	idx      int
	pattern  string
	name     string // the last segment, when it is a literal
	pre, suf string // else the literal prefix and suffix it must have
}

const meta = "*?[]{}\\"

func compileSet(patterns []string) (*set, error) {
	s := &set{byName: map[string]*named{}, byExt: map[string][]starRule{},
		folders: map[string][]segRule{}, starDirs: map[string][]starRule{},
		bySuffix2: map[uint16][]starRule{}, byBigram: map[uint16][]starRule{},
		byPrefix2: map[uint16][]starRule{}, byQuad: map[uint32][]starRule{},
		namedGlobs: map[string][]globRule{}}
	for i, p := range patterns {
		if !strings.HasPrefix(p, "**/") || !doublestar.ValidatePattern(p) || p != strings.ToLower(p) {
			return nil, fmt.Errorf("pattern %q: want a lower-case, valid pattern starting with **/", p)
		}
		s.add(i, p, p[3:])
	}
	return s, nil
}

func (s *set) add(i int, p, rest string) {
	if dir, ok := strings.CutSuffix(rest, "/**"); ok && !strings.ContainsAny(dir, meta) {
		segs := strings.Split(dir, "/")
		s.folders[segs[0]] = append(s.folders[segs[0]], segRule{idx: i, segs: segs})
		s.folderAt.add(segs[0])
		return
	} else if ok && !strings.Contains(dir, "/") && !strings.ContainsAny(dir, "?[]{}\\") {
		r := newStar(i, dir)
		ext := r.ext()
		s.starDirs[ext] = append(s.starDirs[ext], r)
		if ext != "" {
			s.starDirAt.add(ext)
		} else {
			s.anyDirs = true
		}
		return
	}
	if strings.ContainsAny(rest, meta) {
		slash := strings.LastIndexByte(rest, '/')
		dir, name := "", rest
		if slash >= 0 {
			dir, name = rest[:slash], rest[slash+1:]
		}
		if !strings.ContainsAny(dir, meta) && !strings.ContainsAny(name, "?[]{}\\") {
			s.addStar(i, name, dir)
			return
		}
		if dir == "" {
			if c, ok := newClassRule(i, name); ok {
				s.classes = append(s.classes, c)
				return
			}
		}
		last := rest[strings.LastIndexByte(rest, '/')+1:]
		g := globRule{idx: i, pattern: p}
		switch {
		case !strings.ContainsAny(last, meta):
			g.name = last
			s.namedGlobs[last] = append(s.namedGlobs[last], g)
			s.globNameAt.add(last)
			return
		case !strings.ContainsAny(last, "?[]{}\\"):
			lits := strings.Split(last, "*")
			g.pre, g.suf = lits[0], lits[len(lits)-1]
		}
		s.globs = append(s.globs, g)
		return
	}
	if strings.Contains(rest, "/") {
		segs := strings.Split(rest, "/")
		base := segs[len(segs)-1]
		n := s.name(base)
		n.suffixes = append(n.suffixes, segRule{idx: i, segs: segs, text: rest})
		return
	}
	n := s.name(rest)
	n.exact = append(n.exact, i)
}

func (s *set) name(base string) *named {
	n := s.byName[base]
	if n == nil {
		n = &named{}
		s.byName[base] = n
		s.nameAt.add(base)
	}
	return n
}

func newStar(i int, name string) starRule {
	lits := strings.Split(name, "*")
	r := starRule{idx: i, open: [2]bool{lits[0] == "", lits[len(lits)-1] == ""}}
	for _, l := range lits {
		if l != "" {
			r.parts = append(r.parts, l)
		}
	}
	return r
}

// ext is the extension every name the rule matches ends in ("" when none
// is fixed): the closing literal from its last '.'.
func (r starRule) ext() string {
	if r.open[1] || len(r.parts) == 0 {
		return ""
	}
	last := r.parts[len(r.parts)-1]
	dot := strings.LastIndexByte(last, '.')
	if dot < 0 {
		return ""
	}
	return last[dot:]
}

func (s *set) addStar(i int, name, dir string) {
	r := newStar(i, name)
	r.dir = dir
	if ext := r.ext(); ext != "" {
		s.byExt[ext] = append(s.byExt[ext], r)
		s.extAt.add(ext)
		return
	}
	if r.open[0] {
		s.addOpen(r)
	} else {
		c := r.parts[0][0]
		if first := r.parts[0]; len(first) >= 2 {
			k := pair(first[0], first[1])
			s.byPrefix2[k] = append(s.byPrefix2[k], r)
			s.prefixAt[k/64] |= 1 << (k % 64)
			return
		}
		s.byFirst[c] = append(s.byFirst[c], r)
	}
}

// addOpen files a star pattern that starts with a star and has no fixed
// extension under the index that will find it.
func (s *set) addOpen(r starRule) {
	if len(r.parts) == 0 {
		s.noExt = append(s.noExt, r)
		return
	}
	last, first := r.parts[len(r.parts)-1], r.parts[0]
	switch {
	case !r.open[1] && len(last) >= 2:
		k := pair(last[len(last)-2], last[len(last)-1])
		s.bySuffix2[k] = append(s.bySuffix2[k], r)
		s.suffixAt[k/64] |= 1 << (k % 64)
	case r.open[1] && len(first) >= 4:
		k := quad(first)
		s.byQuad[k] = append(s.byQuad[k], r)
		h := quadHash(k)
		s.quads[h/64] |= 1 << (h % 64)
	case r.open[1] && len(first) >= 2:
		k := pair(first[0], first[1])
		s.byBigram[k] = append(s.byBigram[k], r)
		s.bigrams[k/64] |= 1 << (k % 64)
	default:
		s.noExt = append(s.noExt, r)
	}
}

func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

func quad(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

func quadHash(k uint32) uint32 { return k * 0x9E3779B1 >> 16 }

// pairFilter remembers, in one bit each, a mix of the first two bytes,
// the last byte and the length of a set of non-empty strings: has is false
// for most strings not in the set, and costs one table read instead of a
// hash.
type pairFilter struct {
	bits [1 << 16 / 64]uint64
}

func filterKey(s string) uint32 {
	h := uint32(s[0])*0x9E3779B1 ^ uint32(s[len(s)-1])*0x85EBCA77 ^ uint32(len(s))*0xC2B2AE3D
	if len(s) > 1 {
		h ^= uint32(s[1]) * 0x27D4EB2F
	}
	return (h ^ h>>16) & 0xFFFF
}

func (f *pairFilter) add(s string) {
	k := filterKey(s)
	f.bits[k/64] |= 1 << (k % 64)
}

func (f *pairFilter) has(s string) bool {
	if s == "" {
		return false
	}
	k := filterKey(s)
	return f.bits[k/64]&(1<<(k%64)) != 0
}

func (s *set) byNameOf(base string) *named {
	if !s.nameAt.has(base) {
		return nil
	}
	return s.byName[base]
}

func (s *set) byExtOf(ext string) []starRule {
	if !s.extAt.has(ext) {
		return nil
	}
	return s.byExt[ext]
}

// openCandidates finds the star patterns that start with a star and have
// no fixed extension, through their indexes.
func (s *set) openCandidates(p *pathParts, out []int) []int {
	base := p.base
	if n := len(base); n >= 2 && s.suffixAt[pair(base[n-2], base[n-1])/64]&(1<<(pair(base[n-2], base[n-1])%64)) != 0 {
		for _, r := range s.bySuffix2[pair(base[n-2], base[n-1])] {
			if r.matchIn(p) {
				out = append(out, r.idx)
			}
		}
	}
	if len(s.byBigram) > 0 {
		for i := 0; i+1 < len(base); i++ {
			k := pair(base[i], base[i+1])
			if s.bigrams[k/64]&(1<<(k%64)) == 0 {
				continue
			}
			for _, r := range s.byBigram[k] {
				if r.matchIn(p) && !slices.Contains(out, r.idx) {
					out = append(out, r.idx)
				}
			}
		}
	}
	if len(s.byQuad) > 0 {
		for i := 0; i+3 < len(base); i++ {
			k := quad(base[i:])
			if h := quadHash(k); s.quads[h/64]&(1<<(h%64)) == 0 {
				continue
			}
			for _, r := range s.byQuad[k] {
				if r.matchIn(p) && !slices.Contains(out, r.idx) {
					out = append(out, r.idx)
				}
			}
		}
	}
	for _, r := range s.noExt {
		if r.matchIn(p) {
			out = append(out, r.idx)
		}
	}
	return out
}

// newClassRule compiles a one-segment name whose only meta characters are
// '*' and simple [...] classes of ASCII bytes; ok is false for anything
// else, which stays with doublestar alone.
func newClassRule(i int, name string) (classRule, bool) {
	if strings.ContainsAny(name, "?{}\\") {
		return classRule{}, false
	}
	first, last := strings.IndexByte(name, '*'), strings.LastIndexByte(name, '*')
	headPat, tailPat := name, ""
	if first >= 0 {
		headPat, tailPat = name[:first], name[last+1:]
	}
	head, ok1 := parseClasses(headPat)
	tail, ok2 := parseClasses(tailPat)
	if !ok1 || !ok2 {
		return classRule{}, false
	}
	if first < 0 { // no star: the whole name is fixed, checked as the head
		tail = nil
	}
	return classRule{idx: i, name: name, head: head, tail: tail}, true
}

// parseClasses turns "ab[0-9]" into one charClass per character.
func parseClasses(p string) ([]charClass, bool) {
	var out []charClass
	for len(p) > 0 {
		var c charClass
		if p[0] != '[' {
			if p[0] >= utf8.RuneSelf {
				return nil, false
			}
			c[p[0]] = true
			out, p = append(out, c), p[1:]
			continue
		}
		end := strings.IndexByte(p, ']')
		body := p[1:end]
		if body == "" || body[0] == '^' || body[0] == '!' {
			return nil, false
		}
		for j := 0; j < len(body); j++ {
			lo, hi := body[j], body[j]
			if j+2 < len(body) && body[j+1] == '-' {
				hi = body[j+2]
				j += 2
			}
			if lo >= utf8.RuneSelf || hi >= utf8.RuneSelf {
				return nil, false
			}
			for b := int(lo); b <= int(hi); b++ {
				c[b] = true
			}
		}
		out, p = append(out, c), p[end+1:]
	}
	return out, true
}

// match checks the fixed characters, then asks doublestar about the rest.
func (c classRule) match(base string) bool {
	if len(base) < len(c.head)+len(c.tail) {
		return false
	}
	for k, cc := range c.tail {
		if !cc[base[len(base)-len(c.tail)+k]] {
			return false
		}
	}
	for k, cc := range c.head {
		if !cc[base[k]] {
			return false
		}
	}
	ok, _ := doublestar.Match(c.name, base)
	return ok
}

func (s *set) candidates(p *pathParts, out []int) []int {
	if n := s.byNameOf(p.base); n != nil {
		out = append(out, n.exact...)
		for _, r := range n.suffixes {
			if p.full == r.text || strings.HasSuffix(p.full, r.text) && p.full[len(p.full)-len(r.text)-1] == '/' {
				out = append(out, r.idx)
			}
		}
	}
	if p.ext != "" {
		for _, r := range s.byExtOf(p.ext) {
			if r.matchIn(p) {
				out = append(out, r.idx)
			}
		}
	}
	if p.base != "" {
		if len(p.base) >= 2 {
			k := pair(p.base[0], p.base[1])
			if s.prefixAt[k/64]&(1<<(k%64)) != 0 {
				for _, r := range s.byPrefix2[k] {
					if r.matchIn(p) {
						out = append(out, r.idx)
					}
				}
			}
		}
		for _, r := range s.byFirst[p.base[0]] {
			if r.matchIn(p) {
				out = append(out, r.idx)
			}
		}
	}
	out = s.openCandidates(p, out)
	if len(s.folders) > 0 || len(s.starDirs) > 0 {
		out = s.folderCandidates(p.full, out)
	}
	for _, c := range s.classes {
		if c.match(p.base) {
			out = append(out, c.idx)
		}
	}
	if s.globNameAt.has(p.base) {
		for _, g := range s.namedGlobs[p.base] {
			if ok, _ := doublestar.Match(g.pattern, p.full); ok {
				out = append(out, g.idx)
			}
		}
	}
	for _, g := range s.globs {
		if g.name != "" && p.base != g.name ||
			len(p.base) < len(g.pre)+len(g.suf) || !strings.HasPrefix(p.base, g.pre) || !strings.HasSuffix(p.base, g.suf) {
			continue
		}
		if ok, _ := doublestar.Match(g.pattern, p.full); ok {
			out = append(out, g.idx)
		}
	}
	return out
}

// folderCandidates finds folder rules whose segments appear, in order and
// next to each other, anywhere in the path.
func (s *set) folderCandidates(full string, out []int) []int {
	for start := 0; start < len(full); {
		end := strings.IndexByte(full[start:], '/')
		if end < 0 {
			end = len(full)
		} else {
			end += start
		}
		seg := full[start:end]
		if s.folderAt.has(seg) {
			for _, r := range s.folders[seg] {
				if r.followedBy(full[end:]) {
					out = append(out, r.idx)
				}
			}
		}
		// A star-named folder rule needs a '.' when all of them have an
		// extension, which few folders do.
		if len(s.starDirs) > 0 && (s.anyDirs || strings.IndexByte(seg, '.') >= 0) {
			out = s.starDirCandidates(seg, out)
		}
		start = end + 1
	}
	return out
}

// starDirCandidates finds the star-named folder rules that match one
// segment: the rules for its extension and the rules with none.
func (s *set) starDirCandidates(seg string, out []int) []int {
	if dot := strings.LastIndexByte(seg, '.'); dot >= 0 && s.starDirAt.has(seg[dot:]) {
		for _, r := range s.starDirs[seg[dot:]] {
			if r.match(seg) {
				out = append(out, r.idx)
			}
		}
	}
	for _, r := range s.starDirs[""] {
		if r.match(seg) {
			out = append(out, r.idx)
		}
	}
	return out
}

// followedBy reports whether rest ("" or "/b/c...") starts with the rule's
// segments after its first.
func (r segRule) followedBy(rest string) bool {
	for _, seg := range r.segs[1:] {
		if len(rest) < 1+len(seg) || rest[0] != '/' || rest[1:1+len(seg)] != seg {
			return false
		}
		rest = rest[1+len(seg):]
		if rest != "" && rest[0] != '/' {
			return false
		}
	}
	return true
}

// matchIn matches the path's last segment, and the folders above it when
// the rule names some.
func (r starRule) matchIn(p *pathParts) bool {
	if !r.match(p.base) {
		return false
	}
	if r.dir == "" {
		return true
	}
	if len(p.full) < len(p.base)+1+len(r.dir) {
		return false
	}
	parent := p.full[:len(p.full)-len(p.base)-1]
	return parent == r.dir || strings.HasSuffix(parent, r.dir) && parent[len(parent)-len(r.dir)-1] == '/'
}

// match is doublestar's '*' on one segment: the literals in order, the first
// anchored at the start unless a star opens the pattern, the last anchored at
// the end unless a star closes it.
func (r starRule) match(name string) bool {
	parts := r.parts
	if len(parts) == 0 {
		return true
	}
	if !r.open[0] {
		if !strings.HasPrefix(name, parts[0]) {
			return false
		}
		name, parts = name[len(parts[0]):], parts[1:]
	}
	if !r.open[1] && len(parts) > 0 {
		last := parts[len(parts)-1]
		if !strings.HasSuffix(name, last) {
			return false
		}
		name, parts = name[:len(name)-len(last)], parts[:len(parts)-1]
	} else if !r.open[1] {
		return name == ""
	}
	for _, lit := range parts {
		i := strings.Index(name, lit)
		if i < 0 {
			return false
		}
		name = name[i+len(lit):]
	}
	return true
}
