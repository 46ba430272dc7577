package gate

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// plainLog runs plain git log with the gate's own history format and
// returns its standard output only.
func plainLog(t *testing.T, dir, format string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", append([]string{"log", "-z", format}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	return out
}

// A repository's output encoding reaches log's whole formatted output, ids
// and separators included: UTF-16 puts a NUL after every byte, and the
// history parser read no record at all (the page was empty). The encoding
// is forced for everyone, so the page reads.
func TestHistoryOutputEncodingIsPinned(t *testing.T) {
	for _, key := range []string{"i18n.logOutputEncoding", "i18n.commitEncoding"} {
		t.Run(key, func(t *testing.T) {
			gittest.Home(t, "")
			dir := gittest.Init(t, nil)
			write(t, dir, map[string]string{"b.txt": "b\n"})
			git(t, dir, "add", "b.txt")
			git(t, dir, "commit", "-q", "-m", "zweite Änderung")
			git(t, dir, "config", key, "UTF-16")
			if l, err := parseLog(plainLog(t, dir, logFormat, "-n", "3"), false, 50); err == nil && len(l.Commits) == 2 {
				t.Fatal("not reproduced: plain git log printed readable history")
			}
			r := open(t, dir)
			for _, tr := range []trust.Trust{desktop, closed} {
				l, err := r.Log(ctx, tr, LogOptions{Limit: 5})
				if err != nil || len(l.Commits) != 2 || l.Commits[0].Subject != "zweite Änderung" || l.Commits[1].Subject != "first" {
					t.Fatalf("%v: %v %+v", tr, err, l)
				}
				s, err := r.Show(ctx, tr, trust.View, l.Commits[0].OID, "")
				if err != nil || s.Commit.Subject != "zweite Änderung" || s.Commit.OID != l.Commits[0].OID || !strings.Contains(s.Diff, "+b") {
					t.Fatalf("%v: show: %v %+v", tr, err, s)
				}
			}
		})
	}
}

// A subject is the commit author's text: any byte but NUL. The old format
// split fields on a unit separator, so a subject holding one made five
// fields and its commit left the page without a word; with NUL-ended
// fields it is the subject's own byte.
func TestHistorySubjectCannotSplitFields(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one\x1ftwo\x1f0123456789012345678901234567890123456789")
	const oldFormat = "--format=%H%x1f%<(300,trunc)%s%x1f%<(100,trunc)%an%x1f%aI"
	rec, _, _ := strings.Cut(string(plainLog(t, dir, oldFormat, "-n", "1")), "\x00")
	if n := len(strings.Split(rec, "\x1f")); n == 4 {
		t.Fatal("not reproduced: the subject's separators did not add fields")
	}
	l, err := open(t, dir).Log(ctx, closed, LogOptions{Limit: 5})
	if err != nil || len(l.Commits) != 2 || !strings.HasPrefix(l.Commits[0].Subject, "one\x1ftwo\x1f") || l.Commits[0].Author != "Test" {
		t.Fatalf("%v %+v", err, l)
	}
}

// Every id read from git's output is a whole object id before it is shown
// or handed to git again; output that does not make whole records is an
// error, not an empty page.
func TestHistoryIDsAreChecked(t *testing.T) {
	id := strings.Repeat("ab", 20)
	rec := func(oid, subject string) string {
		return oid + "\x00" + subject + "\x00Test\x002026-01-01T00:00:00+00:00\x00"
	}
	for _, c := range []struct {
		name, out string
		truncated bool
		want      []string // subjects; nil: an error
		next      string
	}{
		{name: "two records", out: rec(id, "a") + rec(strings.Repeat("cd", 20), "b"), want: []string{"a", "b"}},
		{name: "SHA-256", out: rec(strings.Repeat("ef", 32), "a"), want: []string{"a"}},
		{name: "one past the page", out: rec(id, "a") + rec(id, "b") + rec(strings.Repeat("cd", 20), "c"), want: []string{"a", "b"}, next: strings.Repeat("cd", 20)},
		{name: "an option for an id", out: rec("--output=/tmp/x", "a")},
		{name: "a revision expression", out: rec("HEAD:.env", "a")},
		{name: "an abbreviated id", out: rec(id[:12], "a")},
		{name: "upper case", out: rec(strings.ToUpper(id), "a")},
		{name: "a field missing", out: rec(id, "a") + id + "\x00b\x00Test\x00"},
		{name: "cut at the bound", out: rec(id, "a") + rec(strings.Repeat("cd", 20), "b") + id + "\x00c", truncated: true,
			want: []string{"a"}, next: strings.Repeat("cd", 20)},
		{name: "nothing", out: "", want: []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := parseLog([]byte(c.out), c.truncated, 2)
			if c.want == nil {
				if !errors.Is(err, ErrGitFailed) {
					t.Fatalf("got %v %+v, want the output refused", err, l)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cm := range l.Commits {
				got = append(got, cm.Subject)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || l.Next != c.next {
				t.Fatalf("got %v next %q, want %v next %q", got, l.Next, c.want, c.next)
			}
		})
	}
}

// git show of an annotated tag prints the tag's own text before the commit
// line, so the field Show took for the commit id held the tag's name, its
// tagger and its message, and went to git again as a revision. It is
// refused as not a commit before a second git starts.
func TestShowNeverPassesUnreadOutputToGit(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	git(t, dir, "tag", "-a", "-m", "HEAD:.env", "v1")
	tag := strings.TrimSpace(git(t, dir, "rev-parse", "v1"))
	r := open(t, dir)
	for _, tr := range []trust.Trust{desktop, closed} {
		before := r.started.Load()
		_, err := r.Show(ctx, tr, trust.View, tag, "")
		if !errors.Is(err, ErrUnknownRef) {
			t.Fatalf("%v: show of a tag: %v", tr, err)
		}
		// The desktop's decision runs no git: the show is the only one.
		if n := r.started.Load() - before; tr == desktop && n != 1 {
			t.Fatalf("show of a tag started %d gits; the tag's text went to git", n)
		}
	}
}

// log.follow=true turns a file's history into --follow, which guesses
// renames through the whole history: the page is no longer the commits
// that changed the path.
func TestLogFollowIsOff(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "one\ntwo\nthree\nfour\n"})
	git(t, dir, "mv", "a.txt", "b.txt")
	git(t, dir, "commit", "-q", "-m", "rename")
	git(t, dir, "config", "log.follow", "true")
	if out := plainLog(t, dir, logFormat, "--first-parent", "--", "b.txt"); strings.Count(string(out), "\x00") != 2*logFields {
		t.Fatalf("not reproduced: plain git log followed no rename: %q", out)
	}
	for _, tr := range []trust.Trust{desktop, closed} {
		l, err := open(t, dir).Log(ctx, tr, LogOptions{Path: "b.txt"})
		if err != nil || len(l.Commits) != 1 || l.Commits[0].Subject != "rename" {
			t.Fatalf("%v: %v %+v", tr, err, l)
		}
	}
}
