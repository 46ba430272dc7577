package github

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// ErrForeignQualifier: a search query names where to search. The seed's
// sentence.
var ErrForeignQualifier = refusal.New(refusal.BadParams, "search qualifier leaves the repository",
	"Search this project only: leave out repo:, org:, user: and owner: filters.")

// scopeQualifiers are GitHub's search qualifiers that choose which
// repositories are searched. GitHub's search syntax ("Understanding the
// search syntax", "Searching issues and pull requests") reads a qualifier
// as a keyword, a colon and a value with no space between; a "-" or "NOT "
// before it negates it, parentheses group it, and quotes go around the
// value, not the keyword (repo:"a/b"). GitHub matches keywords without
// regard to case.
var scopeQualifiers = []string{"repo", "org", "user", "owner"}

// foreignQualifier reports whether query holds a scope qualifier anywhere
// it could be read as one. This is not a parser of the query: it looks at
// every colon and the run of letters just before it, so quoting ("repo:x"
// inside a phrase, which GitHub reads as text but a later reading might
// not), a "-", "NOT", "(" or any other punctuation in front, and Unicode
// case folding (strings.EqualFold: "ſ" is an "s", "REPO" is "repo") all
// still count. It refuses more than GitHub would read (a phrase "fix
// user: login"), which costs a rewording; it cannot know every way a future
// GitHub might read a query (a new qualifier, a compatibility form of a
// letter), so the results are still kept to the pinned repository by their
// address (Search) whatever this says.
func foreignQualifier(query string) bool {
	for i, r := range query {
		if r != ':' {
			continue
		}
		start := i
		for start > 0 {
			prev, size := utf8.DecodeLastRuneInString(query[:start])
			if !unicode.IsLetter(prev) {
				break
			}
			start -= size
		}
		word := query[start:i]
		for _, q := range scopeQualifiers {
			if strings.EqualFold(word, q) {
				return true
			}
		}
	}
	return false
}

// searchQualifiersAllowedForTest switches the qualifier refusal off, so a
// test can show the address check holding alone.
var searchQualifiersAllowedForTest bool
