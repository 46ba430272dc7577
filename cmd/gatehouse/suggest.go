package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// suggestDistance is how many edits a typo may be from what was meant:
// cobra's SuggestionsMinimumDistance default, which gh keeps.
const suggestDistance = 2

// suggest lists the choices word may have been meant as, in the order
// given: those within two edits of it (a letter left out, added, changed:
// "stauts" has two), and those it begins ("dev" for "devices"), both
// ignoring case. It is the rule cobra's Command.SuggestionsFor applies to
// command names (github.com/spf13/cobra, command.go), for the words cobra
// does not know: flag names here, method names for do and call.
func suggest(word string, choices []string) []string {
	if word == "" {
		return nil
	}
	lower := strings.ToLower(word)
	var out []string
	for _, c := range choices {
		lc := strings.ToLower(c)
		if lc == lower {
			continue
		}
		if strings.HasPrefix(lc, lower) || distance(lower, lc) <= suggestDistance {
			out = append(out, c)
		}
	}
	return slices.Compact(out)
}

// distance is the Levenshtein distance between a and b, counted in
// bytes as cobra's ld does; it stops early once a row is past the bound,
// so a long word costs no more than a short one.
func distance(a, b string) int {
	if d := len(a) - len(b); d > suggestDistance || -d > suggestDistance {
		return suggestDistance + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > suggestDistance {
			return suggestDistance + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// printSuggestions writes git's and gh's block after an error line.
func printSuggestions(w io.Writer, suggestions []string) {
	if len(suggestions) == 0 {
		return
	}
	fmt.Fprint(w, "\nDid you mean this?\n")
	for _, s := range suggestions {
		fmt.Fprintf(w, "\t%s\n", s)
	}
}

// unknownFlag is a flag no command declares, with what it may have been
// meant as.
type unknownFlag struct {
	name        string
	suggestions []string // spelled --name
}

func (u *unknownFlag) Error() string { return "unknown flag --" + u.name }

func unknownFlagError(name string, known []string) *unknownFlag {
	u := &unknownFlag{name: name}
	for _, s := range suggest(name, known) {
		u.suggestions = append(u.suggestions, "--"+s)
	}
	return u
}

// flagError reports a flag the standard library's flag package refused,
// in the words the usage lines use (--name), and returns 2 as git and gh
// do for a usage error: an unknown flag with the nearest ones, a value of
// the wrong kind with the kind wanted.
func flagError(e *env, c *command, fs *flag.FlagSet, err error) int {
	msg := err.Error()
	// The flag package's sentences (flag.go, failf): they are its API in
	// all but name, and unchanged since Go 1.
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return unknownFlagUsage(e, c.name, unknownFlagError(name, names))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return usageError(e, c, "--%s needs a value", name)
	}
	if value, name, cause, ok := invalidValue(msg); ok {
		if f := fs.Lookup(name); f != nil {
			return usageError(e, c, "--%s wants %s, not %q%s", name, valueKind(f), value, cause)
		}
	}
	return usageError(e, c, "%s", strings.ReplaceAll(msg, " -", " --"))
}

// unknownFlagUsage prints an unknown flag's line and its suggestions.
func unknownFlagUsage(e *env, where string, u *unknownFlag) int {
	fmt.Fprintf(e.stderr, "gatehouse %s: %v; run 'gatehouse %s -h' for usage\n", where, u, where)
	printSuggestions(e.stderr, u.suggestions)
	return exitUsage
}

// invalidValue reads the flag package's `invalid value "V" for flag -N: C`
// and `invalid boolean value "V" for -N: C`. The cause is C in brackets when
// a flag.Value of the command's own gave it; the flag package's own
// "parse error" and "value out of range" say less than valueKind does.
func invalidValue(msg string) (value, name, cause string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "invalid value ")
	if !ok {
		rest, ok = strings.CutPrefix(msg, "invalid boolean value ")
	}
	if !ok {
		return "", "", "", false
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", "", "", false
	}
	value, _ = strconv.Unquote(quoted)
	after, ok := strings.CutPrefix(rest[len(quoted):], " for ")
	if !ok {
		return "", "", "", false
	}
	after = strings.TrimPrefix(after, "flag ")
	name, cause, _ = strings.Cut(strings.TrimLeft(after, "-"), ": ")
	switch cause {
	case "", "parse error", "value out of range":
		cause = ""
	default:
		cause = " (" + cause + ")"
	}
	return value, name, cause, true
}

// valueKind names what a flag takes, from the flag package's own value
// types; a flag.Value of the command's own says what it wants in its
// error, which invalidValue keeps.
func valueKind(f *flag.Flag) string {
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		return "a whole number"
	case "*flag.durationValue":
		return "a duration such as 30s, 5m or 1h"
	case "*flag.float64Value":
		return "a number"
	case "*flag.boolValue":
		return "true or false"
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "true or false"
	}
	return "another value"
}
