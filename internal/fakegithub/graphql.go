package fakegithub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// This file is a small GraphQL engine: it parses the query gh sends, then
// walks the selection over a tree of objects (obj) built from Data, so the
// answer holds exactly the fields gh asked for, with GitHub's shapes.
// Fields that take arguments are fieldFuncs.

// obj is a GraphQL object; "__typename" names its type.
type obj map[string]any

// fieldFunc computes a field from its arguments.
type fieldFunc func(args map[string]any) any

type selection struct {
	alias, name string
	args        map[string]any
	children    []selection // nil for a scalar
	onType      string      // inline fragment type condition
	fragment    bool        // inline fragment (or spread, resolved at parse time)
}

type document struct {
	kind, name string // "query" or "mutation"; the operation name
	sel        []selection
}

var errSyntax = errors.New("graphql syntax error")

// Bounds on what a query may make the fake do; gh's deepest query (a pull
// request's checks) nests about ten levels.
const (
	maxQueryBytes = 1 << 20
	maxDepth      = 64
)

type gqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

type gqlLoc struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

type gqlError struct {
	Type      string   `json:"type,omitempty"`
	Path      []any    `json:"path,omitempty"`
	Locations []gqlLoc `json:"locations,omitempty"`
	Message   string   `json:"message"`
}

func (s *Server) serveGraphQL(w http.ResponseWriter, r *http.Request) {
	var req gqlRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxQueryBytes))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		s.record(Request{Method: r.Method, Path: r.URL.Path})
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	doc, err := parseDocument(req.Query, req.Variables)
	s.record(Request{Method: r.Method, Path: r.URL.Path, Operation: operationName(doc, req.Query), Variables: req.Variables})
	if err != nil {
		s.t.Logf("fakegithub: %v in %q", err, req.Query)
		writeJSON(w, http.StatusOK, map[string]any{"errors": []gqlError{{Message: err.Error()}}})
		return
	}
	if doc.kind == "mutation" && strings.Contains(req.Query, "mergePullRequest") {
		s.waitMergeHold()
	}
	s.Mu.Lock()
	q := &query{s: s}
	root := q.queryRoot()
	if doc.kind == "mutation" {
		root = q.mutationRoot()
	}
	data := q.project(root, doc.sel, "")
	s.Mu.Unlock()
	resp := map[string]any{"data": data}
	if len(q.errors) > 0 {
		resp["errors"] = q.errors
	}
	writeJSON(w, http.StatusOK, resp)
}

func operationName(doc document, raw string) string {
	if doc.name != "" {
		return doc.name
	}
	f := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '{' || r == '(' || r == '\n' || r == '\t' })
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// query is one request's walk: the errors it collected.
type query struct {
	s      *Server
	errors []gqlError
}

func (q *query) fail(typ, field, format string, args ...any) {
	q.errors = append(q.errors, gqlError{Type: typ, Path: []any{field}, Locations: []gqlLoc{{Line: 1, Column: 1}}, Message: fmt.Sprintf(format, args...)})
}

// project answers sel over v. path names the field for the log.
func (q *query) project(v any, sel []selection, path string) any {
	switch v := v.(type) {
	case nil:
		return nil
	case []obj:
		out := make([]any, len(v))
		for i, o := range v {
			out[i] = q.project(o, sel, path)
		}
		return out
	case obj:
		out := map[string]any{}
		q.projectInto(out, v, sel, path)
		return out
	default:
		q.s.t.Logf("fakegithub: %s: selection on a scalar", path)
		return nil
	}
}

func (q *query) projectInto(out map[string]any, o obj, sel []selection, path string) {
	for _, f := range sel {
		if f.fragment {
			if f.onType == "" || f.onType == o["__typename"] || implements(o, f.onType) {
				q.projectInto(out, o, f.children, path)
			}
			continue
		}
		key := f.alias
		if key == "" {
			key = f.name
		}
		val, ok := o[f.name]
		if !ok {
			q.s.t.Logf("fakegithub: unknown field %s.%s", path, f.name)
		}
		if fn, isFunc := val.(fieldFunc); isFunc {
			val = fn(f.args)
		}
		if f.children != nil {
			val = q.project(val, f.children, path+"."+f.name)
		}
		out[key] = val
	}
}

func implements(o obj, typ string) bool {
	list, _ := o["__implements"].([]string)
	for _, t := range list {
		if t == typ {
			return true
		}
	}
	return false
}

// parser is a recursive-descent GraphQL parser for what gh sends: one
// operation, fields with aliases and arguments, inline fragments and named
// fragments. Commas are whitespace, as in the GraphQL grammar.
type parser struct {
	src   string
	pos   int
	depth int // nesting of selections and values, bounded by maxDepth
	vars  map[string]any
	frag  map[string][]selection
}

func parseDocument(src string, vars map[string]any) (doc document, err error) {
	p := &parser{src: src, vars: vars, frag: map[string][]selection{}}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok && errors.Is(e, errSyntax) {
				err = e
				return
			}
			panic(r)
		}
	}()
	// Named fragments may come after the operation: collect them first.
	p.collectFragments()
	p.pos = 0
	doc.kind = "query"
	for p.skip(); p.pos < len(p.src); p.skip() {
		if p.peek() == '{' {
			doc.sel = p.selectionSet()
			continue
		}
		word := p.name()
		switch word {
		case "fragment":
			p.name()
			p.expectName("on")
			p.name()
			p.selectionSet()
		case "query", "mutation", "subscription":
			doc.kind = word
			if p.skip(); isNameStart(p.peek()) {
				doc.name = p.name()
			}
			if p.skip(); p.peek() == '(' {
				p.skipBalanced('(', ')')
			}
			doc.sel = p.selectionSet()
		default:
			p.failf("unexpected %q", word)
		}
	}
	return doc, nil
}

func (p *parser) collectFragments() {
	for p.skip(); p.pos < len(p.src); p.skip() {
		if p.peek() == '{' {
			p.skipBalanced('{', '}')
			continue
		}
		if p.peek() == '(' {
			p.skipBalanced('(', ')')
			continue
		}
		if !isNameStart(p.peek()) {
			p.pos++
			continue
		}
		if p.name() != "fragment" {
			continue
		}
		name := p.name()
		p.expectName("on")
		p.name()
		sel := p.selectionSetNoSpreads()
		p.frag[name] = sel
	}
}

func (p *parser) selectionSetNoSpreads() []selection {
	saved := p.frag
	p.frag = nil
	defer func() { p.frag = saved }()
	return p.selectionSet()
}

func (p *parser) failf(format string, args ...any) {
	panic(fmt.Errorf("%w at byte %d: %s", errSyntax, p.pos, fmt.Sprintf(format, args...)))
}

func (p *parser) skip() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *parser) peek() byte {
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

func (p *parser) expect(c byte) {
	p.skip()
	if p.peek() != c {
		p.failf("want %q", c)
	}
	p.pos++
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func (p *parser) name() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) && (isNameStart(p.src[p.pos]) || (p.src[p.pos] >= '0' && p.src[p.pos] <= '9')) {
		p.pos++
	}
	if start == p.pos {
		p.failf("want a name")
	}
	return p.src[start:p.pos]
}

func (p *parser) expectName(want string) {
	if got := p.name(); got != want {
		p.failf("want %q, got %q", want, got)
	}
}

func (p *parser) skipBalanced(open, closing byte) {
	p.expect(open)
	for depth := 1; depth > 0; p.pos++ {
		if p.pos >= len(p.src) {
			p.failf("unbalanced %q", open)
		}
		switch p.src[p.pos] {
		case open:
			depth++
		case closing:
			depth--
		case '"':
			p.str()
			p.pos--
		}
	}
}

// enter counts one level of nesting; the caller defers the returned func.
func (p *parser) enter() func() {
	if p.depth++; p.depth > maxDepth {
		p.failf("nested deeper than %d", maxDepth)
	}
	return func() { p.depth-- }
}

func (p *parser) selectionSet() []selection {
	defer p.enter()()
	p.expect('{')
	sel := []selection{}
	for p.skip(); p.peek() != '}'; p.skip() {
		if p.pos >= len(p.src) {
			p.failf("unterminated selection")
		}
		sel = append(sel, p.selection()...)
	}
	p.pos++
	return sel
}

func (p *parser) selection() []selection {
	if strings.HasPrefix(p.src[p.pos:], "...") {
		p.pos += 3
		return []selection{p.fragment()}
	}
	f := selection{name: p.name()}
	if p.skip(); p.peek() == ':' {
		p.pos++
		f.alias, f.name = f.name, p.name()
	}
	if p.skip(); p.peek() == '(' {
		f.args = p.arguments()
	}
	for p.skip(); p.peek() == '@'; p.skip() {
		p.pos++
		p.name()
		if p.skip(); p.peek() == '(' {
			p.arguments()
		}
	}
	if p.skip(); p.peek() == '{' {
		f.children = p.selectionSet()
	}
	return []selection{f}
}

func (p *parser) fragment() selection {
	p.skip()
	if p.peek() == '{' {
		return selection{fragment: true, children: p.selectionSet()}
	}
	word := p.name()
	if word == "on" {
		typ := p.name()
		return selection{fragment: true, onType: typ, children: p.selectionSet()}
	}
	sel, ok := p.frag[word]
	if !ok {
		p.failf("unknown fragment %q", word)
	}
	return selection{fragment: true, children: sel}
}

func (p *parser) arguments() map[string]any {
	p.expect('(')
	args := map[string]any{}
	for p.skip(); p.peek() != ')'; p.skip() {
		k := p.name()
		p.expect(':')
		args[k] = p.value()
	}
	p.pos++
	return args
}

func (p *parser) value() any {
	defer p.enter()()
	p.skip()
	switch c := p.peek(); {
	case c == '$':
		p.pos++
		return p.vars[p.name()]
	case c == '"':
		return p.str()
	case c == '[':
		p.pos++
		list := []any{}
		for p.skip(); p.peek() != ']'; p.skip() {
			list = append(list, p.value())
		}
		p.pos++
		return list
	case c == '{':
		p.pos++
		m := map[string]any{}
		for p.skip(); p.peek() != '}'; p.skip() {
			k := p.name()
			p.expect(':')
			m[k] = p.value()
		}
		p.pos++
		return m
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		for p.pos++; p.pos < len(p.src) && strings.IndexByte("0123456789.eE+-", p.src[p.pos]) >= 0; p.pos++ {
		}
		n, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil {
			p.failf("bad number")
		}
		return n
	default:
		switch w := p.name(); w {
		case "true":
			return true
		case "false":
			return false
		case "null":
			return nil
		default:
			return w // an enum value
		}
	}
}

func (p *parser) str() string {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) && p.src[p.pos] != '"' {
		if p.src[p.pos] == '\\' {
			p.pos++
		}
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.failf("unterminated string")
	}
	p.pos++
	s, err := strconv.Unquote(p.src[start:p.pos])
	if err != nil {
		p.failf("bad string")
	}
	return s
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
