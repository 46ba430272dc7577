// Package docrefs holds one check over the repository's own text: a comment,
// a rule's reason, a page of Markdown, the page's scripts or a testscript
// may not send its reader to a numbered
// issue or to a review round ("issue 12", "seed Round 7", "Rounds 8 and 9").
// Neither the issues nor the document the rounds belonged to are in the
// repository, and the repository is all a newcomer has: the reason is
// written once in docs/ (docs/gate-rules.md, docs/secret-rules.md,
// docs/policy.md, docs/relay.md) and the text points there, or at the test
// that proves the rule, by name. CHANGELOG.md may name issues: it is history.
package docrefs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// reference matches the spellings found in the tree: "seed Round 10",
// "(seed Rounds 8 and 9)", "the seed's Round 10", "Round 6", "issue 12",
// "Issue 13: the secret table", "issues 11 and 12". Case is ignored; a
// number must follow, so "Round(time.Second)" and "an issue the user
// filed" are not references.
var reference = regexp.MustCompile(`(?i)\b(?:seed(?:'s)?\s+)?rounds?\s+[0-9]+|\bissues?\s+[0-9]+`)

// skipped reports the folders never walked: git's own folder, and the
// page's dependencies and built bundle (third-party text).
func skipped(rel string) bool {
	return rel == ".git" || rel == "web/dist" || filepath.Base(rel) == "node_modules"
}

// samples are the files that spell references out on purpose, as the
// cases of a check of their own: this one, and gatehouse policy's test that
// its output carries none (its pointerAtNothing is the same rule, over the
// command's output).
var samples = map[string]bool{
	"internal/docrefs/docrefs_test.go": true,
	"cmd/gatehouse/policytext_test.go": true,
}

// checked reports whether the check reads the file at rel (a slash path
// from the repository's root): every Go file but the samples, every
// Markdown page but CHANGELOG.md (history), the page's own scripts and the
// testscripts.
func checked(rel string) bool {
	if samples[rel] || rel == "CHANGELOG.md" {
		return false
	}
	for _, ext := range []string{".go", ".md", ".js", ".mjs", ".txtar"} {
		if strings.HasSuffix(rel, ext) {
			return true
		}
	}
	return false
}

func TestNoReferenceANewcomerCannotFollow(t *testing.T) {
	root := repoRoot(t)
	found, files, err := scan(root)
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	if files < 100 {
		t.Fatalf("read only %d files under %s: the walk did not reach the repository", files, root)
	}
	names := make([]string, 0, len(found))
	for rel := range found {
		names = append(names, rel)
	}
	sort.Strings(names)
	for _, rel := range names {
		for _, h := range found[rel] {
			t.Errorf("%s:%s: a reference a newcomer cannot follow; say what it means and point at docs/ or at the test that proves it", rel, h)
		}
	}
}

// The walk finds a reference planted in a Go file, a page of docs/, the
// README, a script of the page and a testscript, and reads nothing it is
// not meant to: the page's dependencies, and CHANGELOG.md (which may name
// issues).
func TestScanFindsAPlantedReference(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"gate/forced.go":          "package gate\n\n// never reads (seed Round 7).\n",
		"docs/relay.md":           "# Relay\n\nA tombstone (issue 12) keeps the id.\n",
		"docs/clean.md":           "# Clean\n\nSee TestDevicePinsTheHostKey.\n",
		"CHANGELOG.md":            "- the relay keeps tombstones (issue 12)\n",
		"web/node_modules/x/x.go": "package x // issue 3\n",
		"README.md":               "# gatehouse\n\nFixed in issue 31.\n",
		"web/src/agree.js":        "// as in seed Round 4\n",
		"cmd/x/testdata/a.txtar":  "# Issue 12: one computer\n",
	} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, files, err := scan(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"gate/forced.go": "3: seed Round 7", "docs/relay.md": "3: issue 12", "README.md": "3: issue 31",
		"web/src/agree.js": "1: seed Round 4", "cmd/x/testdata/a.txtar": "1: Issue 12"}
	if files != 6 || len(found) != len(want) {
		t.Fatalf("read %d files (want 6), found %v (want %v)", files, found, want)
	}
	for rel, hit := range want {
		if len(found[rel]) != 1 || found[rel][0] != hit {
			t.Errorf("%s: found %q, want %q", rel, found[rel], hit)
		}
	}
}

// scan walks the tree at root and returns, for each file the check reads,
// the references in it ("line: text"), and how many files it read.
func scan(root string) (map[string][]string, int, error) {
	found := map[string][]string{}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipped(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !checked(rel) {
			return nil
		}
		files++
		hits, err := references(path)
		if err != nil {
			return err
		}
		if len(hits) > 0 {
			found[rel] = hits
		}
		return nil
	})
	return found, files, err
}

// The pattern finds every spelling the tree used, and leaves alone what only
// looks like one.
func TestReferencePattern(t *testing.T) {
	for _, s := range []string{
		"(seed Round 10)", "seed Rounds 8 and 9", "the seed's Round 10 says", "// Round 6",
		"(issue 11)", "Issue 13: the secret table", "before issue 14 the device", "issues 11 and 12",
	} {
		if !reference.MatchString(s) {
			t.Errorf("%q is not found", s)
		}
	}
	for _, s := range []string{
		"time.Since(t).Round(time.Second)", "an issue the user filed", "issue #1 = %+v",
		"wallet seed phrase", "maphash.Seed", "around 20 s", "rounds have no limit",
	} {
		if reference.MatchString(s) {
			t.Errorf("%q is taken for a reference", s)
		}
	}
}

// references returns "line: text" for each line of the file at path that
// holds a reference.
func references(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hits []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		if m := reference.FindString(sc.Text()); m != "" {
			hits = append(hits, strconv.Itoa(n)+": "+strings.TrimSpace(m))
		}
	}
	return hits, sc.Err()
}

// repoRoot is the folder holding go.mod, above this package's folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}
