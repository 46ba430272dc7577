package secretfiles

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The corpus scores the table against the public record
// (docs/secret-rules.md, "Where the rules come from"):
// testdata/secret-paths.tsv holds secret files taken from the secret scanners'
// file rules and the vendors' documentation of where their tools keep
// credentials; testdata/lookalike-paths.tsv holds files that share their names
// but hold no secret. Both were chosen without looking at what the rules
// match, so the score says how much of what people actually keep a phone below
// full cannot read, and how often a shared file is refused for nothing.
//
// Run with -corpus.report to log every miss and false positive:
//
//	go test -run TestCorpus ./secretfiles/ -v -corpus.report

var corpusReport = flag.Bool("corpus.report", false, "log every corpus miss, not only the first 40")

const (
	minRecall     = 0.95 // the bar: recall ≥ 95 %
	maxFalsePos   = 0.01 // and false positives ≤ 1 %
	minCorpusSize = 450  // each file, so one entry moves the score by at most 0.22 %
	shownMisses   = 40
)

// corpusEntry is one line of a corpus file: path, kind, and the source or the
// reason it belongs there.
type corpusEntry struct {
	line   int
	path   string
	kind   string
	source string
}

// loadCorpus reads a corpus TSV, skipping comments and blank lines.
func loadCorpus(t *testing.T, name string) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 || fields[0] == "" || fields[1] == "" || fields[2] == "" {
			t.Fatalf("%s:%d: want path<TAB>kind<TAB>source, got %q", name, n, line)
		}
		out = append(out, corpusEntry{line: n, path: fields[0], kind: fields[1], source: fields[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("corpus %s: %v", name, err)
	}
	return out
}

// corpusScope matches the way `gatehouse secrets check` does for a relative
// path (cmd/gatehouse/secrets.go matchPath): cleaned, slash-separated, through
// the Default table's scope. The checkout sits outside home, so each path is
// judged by its own name and folders only.
func corpusMatch(p string) (Rule, bool) {
	scope := Default().For("/srv/checkout", "/home/alice")
	return scope.Match(filepath.ToSlash(filepath.Clean(p)))
}

// kindScore counts matches per kind.
type kindScore struct{ matched, total int }

// scoreCorpus matches every entry, returning per-kind counts and the entries
// whose answer was matched (want true) or not matched (want false).
func scoreCorpus(entries []corpusEntry, want bool) (map[string]*kindScore, []corpusEntry, map[string]Rule) {
	kinds := map[string]*kindScore{}
	var wrong []corpusEntry
	rules := map[string]Rule{}
	for _, e := range entries {
		k := kinds[e.kind]
		if k == nil {
			k = &kindScore{}
			kinds[e.kind] = k
		}
		k.total++
		r, ok := corpusMatch(e.path)
		if ok {
			k.matched++
			rules[e.path] = r
		}
		if ok != want {
			wrong = append(wrong, e)
		}
	}
	return kinds, wrong, rules
}

func formatKinds(kinds map[string]*kindScore) string {
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		k := kinds[n]
		fmt.Fprintf(&b, "\n  %-26s %3d/%3d  %5.1f %%", n, k.matched, k.total, 100*float64(k.matched)/float64(k.total))
	}
	return b.String()
}

// TestCorpusWellFormed keeps the corpus honest: large enough, no path twice,
// no path on both sides.
func TestCorpusWellFormed(t *testing.T) {
	secrets := loadCorpus(t, "secret-paths.tsv")
	looks := loadCorpus(t, "lookalike-paths.tsv")
	if len(secrets) < minCorpusSize || len(looks) < minCorpusSize {
		t.Errorf("corpus too small: %d secret paths, %d look-alikes, want ≥ %d each", len(secrets), len(looks), minCorpusSize)
	}
	seen := map[string]string{}
	for _, set := range []struct {
		name    string
		entries []corpusEntry
	}{{"secret-paths.tsv", secrets}, {"lookalike-paths.tsv", looks}} {
		for _, e := range set.entries {
			key := strings.ToLower(e.path) // matching ignores case, so must the corpus
			if prev, dup := seen[key]; dup {
				t.Errorf("%s:%d: %q already in %s", set.name, e.line, e.path, prev)
			}
			seen[key] = set.name
			if strings.HasPrefix(e.path, "/") || filepath.Clean(e.path) != e.path {
				t.Errorf("%s:%d: %q is not a clean path relative to a checkout", set.name, e.line, e.path)
			}
		}
	}
}

// TestCorpusScore holds the Default table to its bar: recall ≥ 95 % on
// the secret paths, false positives ≤ 1 % on the look-alikes. It logs the
// score per kind, the first misses and every false positive, so whoever
// extends the table sees what is left. Never edit the corpus to make it
// pass: fix the rules.
func TestCorpusScore(t *testing.T) {
	secrets := loadCorpus(t, "secret-paths.tsv")
	looks := loadCorpus(t, "lookalike-paths.tsv")

	sKinds, misses, _ := scoreCorpus(secrets, true)
	lKinds, falsePos, fpRules := scoreCorpus(looks, false)
	recall := 1 - float64(len(misses))/float64(len(secrets))
	fpRate := float64(len(falsePos)) / float64(len(looks))

	t.Logf("recall %.1f %% (%d/%d secret paths matched); false positives %.1f %% (%d/%d look-alikes matched)",
		100*recall, len(secrets)-len(misses), len(secrets), 100*fpRate, len(falsePos), len(looks))
	t.Logf("recall per kind:%s", formatKinds(sKinds))
	t.Logf("look-alikes matched per kind:%s", formatKinds(lKinds))
	logMisses(t, misses)
	for _, e := range falsePos {
		r := fpRules[e.path]
		t.Logf("false positive: %s\t[%s] matched %q (%s)", e.path, e.kind, r.Pattern, e.source)
	}

	if recall < minRecall || fpRate > maxFalsePos {
		t.Errorf("corpus score below the bar: recall %.1f %% (want ≥ %.0f %%), false positives %.1f %% (want ≤ %.0f %%); "+
			"the table in secretfiles/rules.go comes from the public record (docs/secret-rules.md); "+
			"fix the rules, never the corpus (run with -v -corpus.report to see every miss)",
			100*recall, 100*minRecall, 100*fpRate, 100*maxFalsePos)
	}
}

func logMisses(t *testing.T, misses []corpusEntry) {
	t.Helper()
	shown := misses
	if !*corpusReport && len(shown) > shownMisses {
		shown = shown[:shownMisses]
	}
	for _, e := range shown {
		t.Logf("miss: %s\t[%s] %s", e.path, e.kind, e.source)
	}
	if len(shown) < len(misses) {
		t.Logf("... and %d more misses (run with -corpus.report to see them all)", len(misses)-len(shown))
	}
}

// Copies an editor or a careless save leaves beside a secret are secret
// too (the red team read ".env~" and ".env " as a view device); the names
// they were made from decide, so a public file's backup stays public.
func TestBackupCopiesOfSecrets(t *testing.T) {
	for p, want := range map[string]bool{
		".env~": true, ".env ": true, ".env.": true, "config/.env~~": true, "server.key~": true, "id_ed25519 ": true,
		"README.md~": false, "notes.txt ": false, "a/..": false, "~": false, "...": false,
	} {
		if got := Default().IsSecret(p); got != want {
			t.Errorf("Default().IsSecret(%q) = %v, want %v", p, got, want)
		}
	}
}
