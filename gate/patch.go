package gate

import (
	"bytes"
	"strconv"
	"strings"
)

// A patch is git's diff output, cut into one section per file. The secret
// filter keeps or drops whole sections, by every name a section carries:
// its "diff " line, the ---/+++ headers before its first hunk, and rename
// from/to and copy from/to lines, so a secret renamed or copied to an
// innocent name is still dropped (TestSectionNames and
// FuzzNoHeaderHidesASecret in gate/patch_test.go).
// A section whose names cannot all be read is dropped too: the filter fails
// closed.
//
// In git's output a line that starts with "diff " is always a file's header:
// every line of a hunk starts with its prefix columns (' ', '+' or '-', one
// column per parent in a combined diff; diff.c emit_line_0 and
// combine-diff.c dump_sline), "\ No newline" or "@@"; a binary patch's lines
// start with a length letter followed by base85, which has no space. git
// writes three such headers: "diff --git a/X b/Y" (diff.c, builtin_diff),
// and "diff --cc NAME" or "diff --combined NAME" for a merge and for an
// unmerged path (combine-diff.c, show_combined_header). Any other "diff "
// line is a form this filter does not know, and its section is dropped.

type section struct {
	text  []byte
	names []string // every name the header carries, without a/ or b/
	known bool     // the names are certain
}

// The headers git writes at the start of a file's section.
const (
	gitHeader      = "diff --git "
	ccHeader       = "diff --cc "
	combinedHeader = "diff --combined "
)

// splitPatch cuts a patch into sections at each line that starts "diff ".
// Text before the first one (a commit header in git show) is returned as
// head.
func splitPatch(p []byte) (head []byte, secs []section) {
	start := -1
	for i := 0; i < len(p); {
		end := bytes.IndexByte(p[i:], '\n')
		if end < 0 {
			end = len(p)
		} else {
			end += i + 1
		}
		if bytes.HasPrefix(p[i:end], []byte("diff ")) {
			if start < 0 {
				head = p[:i]
			} else {
				secs = append(secs, newSection(p[start:i]))
			}
			start = i
		}
		i = end
	}
	if start < 0 {
		return p, nil
	}
	return head, append(secs, newSection(p[start:]))
}

// newSection reads the names of one section. A "diff --git" line that
// cannot be split on its own must be explained by the names of the lines
// after it; a combined header carries one name, always readable; any other
// header is unknown.
func newSection(text []byte) section {
	lines := bytes.Split(text, []byte("\n"))
	first := string(lines[0])
	names, known := headerNames(lines[1:])
	if !known {
		return section{text: text}
	}
	switch {
	case strings.HasPrefix(first, gitHeader):
		lineNames, ok := parseGitLine(first)
		if !ok {
			// Ambiguous (a rename whose names hold " b/"): known only
			// when the other header lines name both sides exactly.
			return section{text: text, names: names, known: explains(first, names)}
		}
		return section{text: text, names: append(lineNames, names...), known: true}
	case strings.HasPrefix(first, ccHeader), strings.HasPrefix(first, combinedHeader):
		name, ok := parseCombinedLine(first)
		if !ok {
			return section{text: text}
		}
		return section{text: text, names: append([]string{name}, names...), known: true}
	}
	return section{text: text}
}

// headerNames reads the names on the header lines after a section's first
// line, up to its first hunk. A combined diff with --combined-all-paths has
// one --- line per parent, each with that parent's name.
func headerNames(lines [][]byte) (names []string, known bool) {
	for _, l := range lines {
		line := string(l)
		if strings.HasPrefix(line, "@@") || strings.HasPrefix(line, "Binary files") || strings.HasPrefix(line, "GIT binary patch") {
			break // the header ends here; hunk lines are content, never names
		}
		for _, h := range []struct{ prefix, strip string }{
			{"--- ", "a/"}, {"+++ ", "b/"}, {"rename from ", ""}, {"rename to ", ""},
			{"copy from ", ""}, {"copy to ", ""},
		} {
			rest, found := strings.CutPrefix(line, h.prefix)
			if !found {
				continue
			}
			name, good := unquoteName(strings.TrimSuffix(rest, "\t"))
			if !good {
				return nil, false
			}
			if name == "/dev/null" && (h.prefix == "--- " || h.prefix == "+++ ") {
				break
			}
			if h.strip != "" {
				stripped, had := strings.CutPrefix(name, h.strip)
				if !had {
					return nil, false
				}
				name = stripped
			}
			names = append(names, name)
			break
		}
	}
	return names, true
}

// explains reports whether an unsplittable "diff --git a/X b/Y" line is
// exactly "a/"+x+" b/"+y for two names read from the rest of the header.
// Such a line is never quoted (a quoted one splits on its quotes).
func explains(line string, names []string) bool {
	rest := strings.TrimPrefix(line, gitHeader)
	for _, x := range names {
		for _, y := range names {
			if rest == "a/"+x+" b/"+y {
				return true
			}
		}
	}
	return false
}

// parseCombinedLine reads the one name of "diff --cc NAME" or
// "diff --combined NAME": git writes the path with no prefix, C-quoted when
// it needs quoting (combine-diff.c, dump_quoted_path).
func parseCombinedLine(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, ccHeader)
	if !ok {
		rest = strings.TrimPrefix(line, combinedHeader)
	}
	return unquoteName(rest)
}

// parseGitLine reads the names of "diff --git a/X b/Y". When X and Y are
// the same unquoted name, the line is "a/N b/N" and is split in the middle
// (the same way git apply reads it); a quoted name ends where its quote
// does. Anything else is ambiguous (a rename whose names hold " b/"), and
// the section then relies on its other header lines.
func parseGitLine(line string) ([]string, bool) {
	rest := strings.TrimPrefix(line, "diff --git ")
	if strings.HasPrefix(rest, `"`) {
		end := closingQuote(rest)
		if end < 0 {
			return nil, false
		}
		first, ok1 := unquoteName(rest[:end+1])
		second, ok2 := unquoteName(strings.TrimPrefix(rest[end+1:], " "))
		return stripBoth(first, second, ok1 && ok2)
	}
	if i := strings.Index(rest, ` "b/`); i >= 0 && strings.HasSuffix(rest, `"`) {
		second, ok := unquoteName(rest[i+1:])
		return stripBoth(rest[:i], second, ok)
	}
	if (len(rest)-1)%2 == 0 {
		n := (len(rest) - 1) / 2
		first, second := rest[:n], rest[n+1:]
		if rest[n] == ' ' && strings.HasPrefix(first, "a/") && strings.HasPrefix(second, "b/") && first[2:] == second[2:] {
			return []string{first[2:]}, true
		}
	}
	return nil, false
}

func stripBoth(first, second string, ok bool) ([]string, bool) {
	a, okA := strings.CutPrefix(first, "a/")
	b, okB := strings.CutPrefix(second, "b/")
	if !ok || !okA || !okB {
		return nil, false
	}
	return []string{a, b}, true
}

// closingQuote finds the quote that ends the quoted name at the start of s.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unquoteName undoes git's C-style quoting of a name ("a/x\tb", octal
// escapes for bytes outside ASCII). An unquoted name is returned as is.
func unquoteName(s string) (string, bool) {
	if !strings.HasPrefix(s, `"`) {
		return s, s != ""
	}
	if len(s) < 2 || !strings.HasSuffix(s, `"`) {
		return "", false
	}
	var b strings.Builder
	body := s[1 : len(s)-1]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			if c == '"' {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", false
		}
		switch e := body[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\':
			b.WriteByte(e)
		default:
			if i+3 > len(body) {
				return "", false
			}
			v, err := strconv.ParseUint(body[i:i+3], 8, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		}
	}
	return b.String(), true
}

// quoteName quotes a name the way git does when it holds a byte that needs
// it, for the previews gatehouse writes itself.
func quoteName(name string) string {
	need := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteString(`\` + strconv.FormatUint(uint64(c)|0o1000, 8)[1:])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
