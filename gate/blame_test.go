package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// threeCommits builds a file whose lines come from three commits and
// returns the checkout and the commits' ids, oldest first.
func threeCommits(t *testing.T) (string, []string) {
	t.Helper()
	dir := gittest.Init(t, map[string]string{"f.txt": "one\ntwo\nthree\nfour\n"})
	write(t, dir, map[string]string{"f.txt": "one\nTWO\nthree\nfour\nfive\n"})
	git(t, dir, "commit", "-qam", "second")
	write(t, dir, map[string]string{"f.txt": "one\nTWO\nthree\nFOUR\nfive\nsix\n"})
	git(t, dir, "commit", "-qam", "third")
	ids := strings.Fields(git(t, dir, "rev-list", "--reverse", "HEAD"))
	return dir, ids
}

// plainBlame is git's own answer: the commit of each line, in order.
func plainBlame(t *testing.T, dir, path string) []string {
	t.Helper()
	var oids []string
	for _, l := range strings.Split(git(t, dir, "blame", "--line-porcelain", "HEAD", "--", path), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && len(f[0]) == 40 && !strings.HasPrefix(l, "\t") {
			if _, err := strconv.Atoi(f[2]); err == nil {
				oids = append(oids, f[0])
			}
		}
	}
	return oids
}

// TestBlameMatchesGit: every line's commit, text and original line as git
// blame gives them, each commit told once, and paging that adds up to the
// whole file.
func TestBlameMatchesGit(t *testing.T) {
	gittest.Home(t, "")
	dir, ids := threeCommits(t)
	r := open(t, dir)
	want := plainBlame(t, dir, "f.txt")
	b, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"one", "TWO", "three", "FOUR", "five", "six"}
	if len(b.Lines) != len(want) || len(b.Lines) != len(texts) {
		t.Fatalf("got %d lines, git %d: %+v", len(b.Lines), len(want), b.Lines)
	}
	for i, l := range b.Lines {
		if l.OID != want[i] || l.Text != texts[i] || l.Line != i+1 || l.OrigPath != "f.txt" {
			t.Errorf("line %d: %+v, want %s %q", i+1, l, want[i], texts[i])
		}
	}
	if len(b.Commits) != 3 || b.Commits[ids[1]].Subject != "second" || b.Commits[ids[0]].Author != "Test" || !b.Commits[ids[0]].Boundary {
		t.Errorf("commits: %+v", b.Commits)
	}
	if b.Next != 0 {
		t.Errorf("next %d for a whole file", b.Next)
	}
	// Pages of two lines.
	var got []string
	for start := 1; start != 0; {
		p, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt", Start: start, Count: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Lines) > 2 || len(p.Lines) == 0 {
			t.Fatalf("page at %d: %d lines", start, len(p.Lines))
		}
		for _, l := range p.Lines {
			got = append(got, l.OID)
			if _, ok := p.Commits[l.OID]; !ok {
				t.Errorf("page at %d: commit %s not told", start, l.OID)
			}
		}
		start = p.Next
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paged %v, want %v", got, want)
	}
	// At a commit the device saw, and a range past the end.
	old, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt", Rev: ids[0]})
	if err != nil || len(old.Lines) != 4 || old.Lines[1].Text != "two" {
		t.Fatalf("at the first commit: %+v %v", old, err)
	}
	_, err = r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt", Start: 40})
	wantRefusal(t, err, ErrBlameRange)
	_, err = r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt", Rev: "HEAD~1"})
	wantRefusal(t, err, ErrBadOID)
	_, err = r.Blame(ctx, closed, trust.View, BlameOptions{Path: "nope.txt"})
	wantRefusal(t, err, ErrNotCommitted, "no history")
	_, err = r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt", Rev: strings.Repeat("0", 40)})
	wantRefusal(t, err, ErrUnknownRef)
	_, err = r.Blame(ctx, closed, trust.View, BlameOptions{Path: "../x"})
	if err == nil {
		t.Fatal("a path outside the checkout was blamed")
	}
}

// TestBlameTextNeverReadsAsHeaders: a file whose lines are porcelain
// headers (a commit id line, author, filename, summary) is text, line for
// line; its commit's fields are git's.
func TestBlameTextNeverReadsAsHeaders(t *testing.T) {
	gittest.Home(t, "")
	fake := strings.Repeat("a", 40)
	lines := []string{fake + " 1 1 1", "author Mallory", "author-time 1", "summary forged", "filename ../../etc/passwd", "boundary", "\tindented", "", "previous " + fake + " x"}
	dir := gittest.Init(t, map[string]string{"h.txt": strings.Join(lines, "\n") + "\n"})
	b, err := open(t, dir).Blame(ctx, closed, trust.View, BlameOptions{Path: "h.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Lines) != len(lines) {
		t.Fatalf("%d lines, want %d: %+v", len(b.Lines), len(lines), b.Lines)
	}
	for i, l := range b.Lines {
		if l.Text != lines[i] || l.OrigPath != "h.txt" || l.OID == fake {
			t.Errorf("line %d: %+v, want text %q", i+1, l, lines[i])
		}
	}
	for oid, c := range b.Commits {
		if c.Author != "Test" || c.Subject != "first" || c.Time == 1 {
			t.Errorf("commit %s: %+v", oid, c)
		}
	}
}

// FuzzParseBlame: no output git could give, or a cut of it, makes the
// parser panic or take a TAB line as a field.
func FuzzParseBlame(f *testing.F) {
	oid := strings.Repeat("b", 40)
	f.Add([]byte(oid+" 1 1 1\nauthor A\nsummary s\nfilename f\n\tauthor B\n"), false)
	f.Add([]byte(oid+" 1 1\n\t"+oid+" 2 2\n"), true)
	f.Fuzz(func(t *testing.T, out []byte, truncated bool) {
		b, err := parseBlame(out, truncated)
		if err != nil {
			return
		}
		for _, c := range b.Commits {
			if strings.Contains(c.Author, "\n") || strings.Contains(c.Subject, "\n") {
				t.Fatalf("a field holds a newline: %+v", c)
			}
		}
	})
}

// TestBlameSecretOnlyAtFull: the visibility rule decides a blame as it
// does a diff. git itself blames the secret for anyone who asks; the gate
// refuses it below full and gives it at full.
func TestBlameSecretOnlyAtFull(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".env": "TOKEN=hunter2\n"})
	if out := git(t, dir, "blame", "--porcelain", "HEAD", "--", ".env"); !strings.Contains(out, "hunter2") {
		t.Fatalf("not reproduced: plain blame %q", out)
	}
	r := open(t, dir)
	for _, g := range []trust.Grant{trust.View, trust.Control} {
		_, err := r.Blame(ctx, closed, g, BlameOptions{Path: ".env"})
		wantRefusal(t, err, ErrSecret)
	}
	b, err := r.Blame(ctx, closed, trust.Full, BlameOptions{Path: ".env"})
	if err != nil || len(b.Lines) != 1 || b.Lines[0].Text != "TOKEN=hunter2" {
		t.Fatalf("full: %+v %v", b, err)
	}
}

// TestBlameHardLinkedHidden: a committed file whose work-tree copy is hard
// linked to a file outside holds that file's bytes; no device gets its
// blame, the desktop does.
func TestBlameHardLinkedHidden(t *testing.T) {
	gittest.Home(t, "")
	outside := filepath.Join(t.TempDir(), "id_key")
	if err := os.WriteFile(outside, []byte("PRIVATE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := gittest.Init(t, nil)
	if err := os.Link(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "notes.txt")
	git(t, dir, "commit", "-qm", "notes")
	r := open(t, dir)
	if b, err := r.Blame(ctx, desktop, trust.Full, BlameOptions{Path: "notes.txt"}); err != nil || b.Lines[0].Text != "PRIVATE" {
		t.Fatalf("not reproduced: the desktop's blame %+v %v", b, err)
	}
	for _, tr := range []trust.Trust{closed, phoneOn} {
		_, err := r.Blame(ctx, tr, trust.Full, BlameOptions{Path: "notes.txt"})
		wantRefusal(t, err, ErrHardLinked, "notes.txt")
	}
}

// blocks runs plain git with args in dir and reports whether it was still
// running after a while: the attack works without the gate's pin.
func blocks(t *testing.T, dir string, args ...string) bool {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, "git", args...)
	cmd.Dir = dir
	_ = cmd.Run()
	return c.Err() != nil
}

// TestBlameReadsNoFileConfigNames: blame.ignoreRevsFile and mailmap.file
// name any file, and a FIFO there hangs plain git blame. The closed gate's
// blame reads neither and answers.
func TestBlameReadsNoFileConfigNames(t *testing.T) {
	gittest.Home(t, "")
	for _, key := range []string{"blame.ignoreRevsFile", "mailmap.file"} {
		t.Run(key, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := mkfifo(fifo); err != nil {
				t.Fatal(err)
			}
			dir, _ := threeCommits(t)
			git(t, dir, "config", key, fifo)
			if !blocks(t, dir, "blame", "--porcelain", "HEAD", "--", "f.txt") {
				t.Fatalf("not reproduced: plain git blame did not wait on %s", key)
			}
			b, err := open(t, dir).Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt"})
			if err != nil || len(b.Lines) != 6 {
				t.Fatalf("%+v %v", b, err)
			}
		})
	}
	// /etc/passwd as the list of revisions: plain git reads it and fails
	// on its first line; the gate's blame never opens it.
	dir, _ := threeCommits(t)
	git(t, dir, "config", "blame.ignoreRevsFile", "/etc/passwd")
	if out := git(t, dir, "!", "blame", "--porcelain", "HEAD", "--", "f.txt"); !strings.Contains(out, "invalid object name") {
		t.Fatalf("not reproduced: plain git blame with /etc/passwd: %q", out)
	}
	if _, err := open(t, dir).Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
}

// TestBlameWorkTreeMailmap: blame always reads the work tree's .mailmap.
// A FIFO there is stopped by the runner's FIFO watch with a sentence; a
// hard-linked one (another file's bytes, renaming authors) is refused, and
// with that refusal switched off the linked file's names reach the phone.
func TestBlameWorkTreeMailmap(t *testing.T) {
	gittest.Home(t, "")
	dir, _ := threeCommits(t)
	if err := mkfifo(filepath.Join(dir, ".mailmap")); err != nil {
		t.Fatal(err)
	}
	if !blocks(t, dir, "-c", "mailmap.file=", "blame", "--porcelain", "HEAD", "--", "f.txt") {
		t.Fatal("not reproduced: plain git blame did not wait on .mailmap")
	}
	_, err := open(t, dir).Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt"})
	if !errors.Is(err, errFIFOWait) {
		t.Fatalf("got %v, want the FIFO refusal", err)
	}
	wantRefusal(t, err, ErrTimeout, "FIFO")

	dir, _ = threeCommits(t)
	outside := filepath.Join(t.TempDir(), "names")
	if err := os.WriteFile(outside, []byte("Secret Name <test@example.com>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, ".mailmap")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	blameMailmapLinkForTest = true
	b, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt"})
	blameMailmapLinkForTest = false
	if err != nil || b.Commits[b.Lines[0].OID].Author != "Secret Name" {
		t.Fatalf("not reproduced: a linked .mailmap's names: %+v %v", b, err)
	}
	_, err = r.Blame(ctx, closed, trust.View, BlameOptions{Path: "f.txt"})
	wantRefusal(t, err, ErrHardLinked, ".mailmap")
}

// TestBlameRunsNoTextconv: a textconv driver the attributes name runs for
// the desktop's blame; the closed gate's blame shows the bytes.
func TestBlameRunsNoTextconv(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	dir := repoWith(t, map[string]string{"t.conv": "t\n", ".gitattributes": "*.conv diff=conv\n"}, "diff.conv.textconv", prog)
	r := open(t, dir)
	if _, err := r.Blame(ctx, desktop, trust.Full, BlameOptions{Path: "t.conv"}); err != nil {
		t.Fatal(err)
	}
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: the desktop's blame ran no textconv")
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	b, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "t.conv"})
	if err != nil || b.Lines[0].Text != "t" {
		t.Fatalf("%+v %v", b, err)
	}
	if gittest.Fired(marker) {
		t.Fatal("the closed blame ran the textconv program")
	}
}

// TestBlamePageBounds: a file of long lines ends its page at the reply
// bound, and the next page goes on from there.
func TestBlamePageBounds(t *testing.T) {
	gittest.Home(t, "")
	var sb strings.Builder
	for i := range 200 {
		fmt.Fprintf(&sb, "%d %s\n", i, strings.Repeat("x", 3000))
	}
	dir := gittest.Init(t, map[string]string{"long.txt": sb.String()})
	r := open(t, dir)
	b, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "long.txt", Count: MaxBlameLines})
	if err != nil {
		t.Fatal(err)
	}
	if jsonSize(b) > maxBlameReply+1024 || b.Next == 0 || b.Next != len(b.Lines)+1 {
		t.Fatalf("page of %d lines, %d bytes, next %d", len(b.Lines), jsonSize(b), b.Next)
	}
	rest, err := r.Blame(ctx, closed, trust.View, BlameOptions{Path: "long.txt", Start: b.Next, Count: MaxBlameLines})
	if err != nil || rest.Lines[0].Line != b.Next || !strings.HasPrefix(rest.Lines[0].Text, strconv.Itoa(b.Next-1)+" ") {
		t.Fatalf("next page: %v", err)
	}
}

// A line's original name is read as git quotes it (core.quotePath's C
// style, octal escapes for bytes outside ASCII), the way the diff reader
// reads a name: a file renamed from café.txt names café.txt. And an
// author-time past int64 reads as unknown (0), never a wrapped date.
func TestBlameNamesAndTimesAsGitWritesThem(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"café.txt": "one\ntwo\n"})
	git(t, dir, "mv", "café.txt", "plain.txt")
	git(t, dir, "commit", "-qm", "rename")
	if out := git(t, dir, "blame", "--porcelain", "-C", "-M", "HEAD", "--", "plain.txt"); !strings.Contains(out, `filename "caf\303\251.txt"`) {
		t.Fatalf("not reproduced: git printed the old name unquoted:\n%s", out)
	}
	b, err := open(t, dir).Blame(ctx, closed, trust.View, BlameOptions{Path: "plain.txt"})
	if err != nil || len(b.Lines) != 2 || b.Lines[0].OrigPath != "café.txt" {
		t.Fatalf("blame: %+v %v", b, err)
	}
	oid := strings.Repeat("b", 40)
	p, err := parseBlame([]byte(oid+" 1 1 1\nauthor A\nauthor-time 18446744073709551615\nsummary s\nfilename f\n\tx\n"), false)
	if err != nil || p.Commits[oid].Time != 0 {
		t.Fatalf("a time past int64: %+v %v", p, err)
	}
}
