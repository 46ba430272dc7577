package secretfiles

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/bmatcuk/doublestar/v4"
)

// Matcher answers whether a path is secret. It is built once from a rule
// table and is safe for concurrent use.
type Matcher struct {
	rules  []Rule
	all    *set   // every rule's pattern
	except []*set // each rule's exceptions, by rule index (nil: none)
}

// Compile builds a matcher from rules. Every pattern must start with "**/"
// (rules match at any depth) and be valid doublestar syntax.
func Compile(rules []Rule) (*Matcher, error) {
	m := &Matcher{rules: rules, except: make([]*set, len(rules))}
	pats := make([]string, len(rules))
	for i, r := range rules {
		pats[i] = r.Pattern
		if len(r.Except) > 0 {
			ex, err := compileSet(r.Except)
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", r.Pattern, err)
			}
			m.except[i] = ex
		}
	}
	all, err := compileSet(pats)
	if err != nil {
		return nil, err
	}
	m.all = all
	return m, nil
}

// Rules returns the table the matcher was built from.
func (m *Matcher) Rules() []Rule { return m.rules }

// Match reports the first rule (in table order) that makes path secret. path
// is slash-separated and relative; letter case is ignored. Match neither
// opens nor stats anything: a caller holding a symlink asks again with what
// it resolves to.
func (m *Matcher) Match(unsafePath string) (Rule, bool) {
	var buf [256]byte
	p := parts(unsafePath, buf[:0])
	var cand [8]int
	best := -1
	for _, i := range m.all.candidates(&p, cand[:0]) {
		if best >= 0 && i >= best {
			continue
		}
		if ex := m.except[i]; ex != nil {
			var exc [8]int
			if len(ex.candidates(&p, exc[:0])) > 0 {
				continue
			}
		}
		best = i
	}
	if best < 0 {
		return Rule{}, false
	}
	return m.rules[best], true
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
	byName   map[string]*named     // patterns whose last segment is a literal name
	byExt    map[string][]starRule // name patterns with stars, by the extension they end in
	byFirst  [256][]starRule       // the other star patterns with a fixed first letter
	noExt    []starRule            // star patterns that start with a star and have no fixed extension
	folders  map[string][]segRule  // "**/.ssh/**", "**/.aws/sso/cache/**": segments anywhere
	folderAt [256]bool             // first bytes of folders' first segments
	globs    []globRule            // anything else, through doublestar
}

// starRule is a single-segment pattern made of literals and '*'.
type starRule struct {
	idx   int
	parts []string // literals between stars
	open  [2]bool  // a star at the start, a star at the end
}

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
		folders: map[string][]segRule{}}
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
		s.folderAt[segs[0][0]] = true
		return
	}
	if strings.ContainsAny(rest, meta) {
		if !strings.Contains(rest, "/") && !strings.ContainsAny(rest, "?[]{}\\") {
			s.addStar(i, rest)
			return
		}
		last := rest[strings.LastIndexByte(rest, '/')+1:]
		g := globRule{idx: i, pattern: p}
		switch {
		case !strings.ContainsAny(last, meta):
			g.name = last
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
	}
	return n
}

func (s *set) addStar(i int, name string) {
	lits := strings.Split(name, "*")
	r := starRule{idx: i, open: [2]bool{lits[0] == "", lits[len(lits)-1] == ""}}
	for _, l := range lits {
		if l != "" {
			r.parts = append(r.parts, l)
		}
	}
	last := lits[len(lits)-1]
	dot := strings.LastIndexByte(last, '.')
	if r.open[1] || dot < 0 {
		if r.open[0] {
			s.noExt = append(s.noExt, r)
		} else {
			c := r.parts[0][0]
			s.byFirst[c] = append(s.byFirst[c], r)
		}
		return
	}
	ext := last[dot:]
	s.byExt[ext] = append(s.byExt[ext], r)
}

func (s *set) candidates(p *pathParts, out []int) []int {
	if n := s.byName[p.base]; n != nil {
		out = append(out, n.exact...)
		for _, r := range n.suffixes {
			if p.full == r.text || strings.HasSuffix(p.full, r.text) && p.full[len(p.full)-len(r.text)-1] == '/' {
				out = append(out, r.idx)
			}
		}
	}
	if p.ext != "" {
		for _, r := range s.byExt[p.ext] {
			if r.match(p.base) {
				out = append(out, r.idx)
			}
		}
	}
	if p.base != "" {
		for _, r := range s.byFirst[p.base[0]] {
			if r.match(p.base) {
				out = append(out, r.idx)
			}
		}
	}
	for _, r := range s.noExt {
		if r.match(p.base) {
			out = append(out, r.idx)
		}
	}
	if len(s.folders) > 0 {
		out = s.folderCandidates(p.full, out)
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
		if s.folderAt[full[start]] {
			for _, r := range s.folders[full[start:end]] {
				if r.followedBy(full[end:]) {
					out = append(out, r.idx)
				}
			}
		}
		start = end + 1
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
