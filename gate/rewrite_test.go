package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

func headOID(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

// An unpushed last commit is amended with a new message and what is
// staged; once it is on a remote-tracking branch, plain git would still
// rewrite it, and the phone is refused with the sentence.
func TestAmendOnlyUnpushed(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, "", "clone", "-q", "--bare", dir, origin)
	// What a fetch from the network leaves: origin/main at HEAD.
	git(t, dir, "remote", "add", "origin", "https://example.invalid/repo.git")
	git(t, dir, "update-ref", "refs/remotes/origin/main", "HEAD")
	r := open(t, dir)
	// Pushed: HEAD is origin's too.
	a, err := r.CanAmend(ctx, closed)
	if err != nil || a.OK || !strings.Contains(a.Reason, "already pushed") {
		t.Fatalf("can amend a pushed commit: %v %+v", err, a)
	}
	write(t, dir, map[string]string{"a.txt": "two\n"})
	git(t, dir, "add", "a.txt")
	_, err = r.Amend(ctx, closed, amendSeen(t, r), "rewritten")
	wantRefusal(t, err, ErrPushed, "already pushed", "make a new commit instead")
	plain := filepath.Join(t.TempDir(), "plain")
	git(t, "", "clone", "-q", origin, plain)
	before := headOID(t, plain)
	git(t, plain, "commit", "-q", "--amend", "-m", "rewritten")
	if headOID(t, plain) == before {
		t.Fatal("not reproduced: plain git did not rewrite the pushed commit")
	}
	// Unpushed: a new commit on top, amended.
	git(t, dir, "commit", "-q", "-m", "local")
	local := headOID(t, dir)
	if a, err := r.CanAmend(ctx, closed); err != nil || !a.OK || a.OID != local || a.Subject != "local" {
		t.Fatalf("cannot amend an unpushed commit: %v %+v", err, a)
	}
	write(t, dir, map[string]string{"b.txt": "b\n"})
	git(t, dir, "add", "b.txt")
	res, err := r.Amend(ctx, closed, amendSeen(t, r), "local, amended")
	if err != nil || res.Was != local || res.OID == local || res.OID != headOID(t, dir) {
		t.Fatalf("%v %+v", err, res)
	}
	if msg := git(t, dir, "log", "-1", "--format=%s"); strings.TrimSpace(msg) != "local, amended" {
		t.Fatalf("message %q", msg)
	}
	if files := git(t, dir, "show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, "b.txt") || !strings.Contains(files, "a.txt") {
		t.Fatalf("amended commit holds %q", files)
	}
	// The message alone, nothing staged: keeps the tree.
	if _, err := r.Amend(ctx, closed, amendSeen(t, r), ""); err == nil {
		t.Fatal("amended with nothing to change")
	} else {
		wantRefusal(t, err, ErrNothingToAmend)
	}
}

// A merge commit is not amended or reverted from the phone.
func TestAmendRevertRefuseMerge(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
	git(t, dir, "switch", "-q", "-c", "side")
	write(t, dir, map[string]string{"b.txt": "b\n"})
	git(t, dir, "add", "b.txt")
	git(t, dir, "commit", "-q", "-m", "side")
	git(t, dir, "switch", "-q", "-")
	write(t, dir, map[string]string{"c.txt": "c\n"})
	git(t, dir, "add", "c.txt")
	git(t, dir, "commit", "-q", "-m", "main")
	git(t, dir, "merge", "-q", "--no-edit", "side")
	r := open(t, dir)
	_, err := r.Amend(ctx, closed, amendSeen(t, r), "new")
	wantRefusal(t, err, ErrMergeCommit)
	_, err = r.Revert(ctx, closed, headOID(t, dir))
	wantRefusal(t, err, ErrMergeCommit)
}

// Revert makes a commit undoing the one named; one that conflicts stops
// and says so, leaving REVERT_HEAD; one not in HEAD's history is refused.
func TestRevert(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
	write(t, dir, map[string]string{"b.txt": "b\n"})
	git(t, dir, "add", "b.txt")
	git(t, dir, "commit", "-q", "-m", "add b")
	addB := headOID(t, dir)
	r := open(t, dir)
	res, err := r.Revert(ctx, closed, addB[:12])
	if err != nil || res.Conflict || res.OID != headOID(t, dir) {
		t.Fatalf("%v %+v", err, res)
	}
	if out := git(t, dir, "ls-files"); strings.Contains(out, "b.txt") {
		t.Fatal("b.txt still tracked after the revert")
	}
	// Not in history: a commit on another branch.
	git(t, dir, "switch", "-q", "-c", "other")
	write(t, dir, map[string]string{"o.txt": "o\n"})
	git(t, dir, "add", "o.txt")
	git(t, dir, "commit", "-q", "-m", "other")
	other := headOID(t, dir)
	git(t, dir, "switch", "-q", "-")
	_, err = r.Revert(ctx, closed, other)
	wantRefusal(t, err, ErrNotInHistory)
	// A conflict: a later commit changed the same line.
	write(t, dir, map[string]string{"a.txt": "two\n"})
	git(t, dir, "commit", "-q", "-am", "two")
	two := headOID(t, dir)
	write(t, dir, map[string]string{"a.txt": "three\n"})
	git(t, dir, "commit", "-q", "-am", "three")
	res, err = r.Revert(ctx, closed, two)
	if err != nil || !res.Conflict {
		t.Fatalf("%v %+v", err, res)
	}
	if strings.TrimSpace(git(t, dir, "rev-parse", "REVERT_HEAD")) != two {
		t.Fatal("REVERT_HEAD not left for the conflicts screen")
	}
	_, err = r.Revert(ctx, closed, addB)
	wantRefusal(t, err, ErrUnmerged)
}

// A branch named like an abbreviated id is taken over the id by git: the
// device that sent "beef" for a commit would revert the branch's commit.
// The id git resolved must begin with what was sent.
func TestRevertNamesACommitNotABranch(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, map[string]string{"b.txt": "b\n"})
	git(t, dir, "add", "b.txt")
	git(t, dir, "commit", "-q", "-m", "add b")
	git(t, dir, "branch", "beef", "HEAD")
	if got := strings.TrimSpace(git(t, dir, "rev-parse", "--verify", "-q", "beef^{commit}")); got != headOID(t, dir) || strings.HasPrefix(got, "beef") {
		t.Skip("the commit's id happens to begin with beef")
	}
	r := open(t, dir)
	_, err := r.Revert(ctx, closed, "beef")
	wantRefusal(t, err, ErrUnknownRef)
	if strings.TrimSpace(git(t, dir, "log", "-1", "--format=%s")) != "add b" {
		t.Fatal("a revert was made")
	}
}

// A staged file hard-linked to one outside the checkout: plain git amend
// puts its bytes in the commit; the phone's amend is refused, as a commit.
func TestAmendRefusesAStagedHardLink(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"notes.txt": "n\n"})
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "local")
	outside := filepath.Join(t.TempDir(), "id_rsa")
	write(t, filepath.Dir(outside), map[string]string{"id_rsa": "PRIVATE\n"})
	link := filepath.Join(dir, "notes.txt")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, link); err != nil {
		t.Skip("no hard links here:", err)
	}
	git(t, dir, "add", "notes.txt")
	r := open(t, dir)
	_, err := r.Amend(ctx, closed, amendSeen(t, r), "amended")
	wantRefusal(t, err, ErrHardLinked, "notes.txt")
	if strings.TrimSpace(git(t, dir, "log", "-1", "--format=%s")) != "local" {
		t.Fatal("amended")
	}
	git(t, dir, "commit", "-q", "--amend", "-m", "plain")
	if got := git(t, dir, "show", "HEAD:notes.txt"); got != "PRIVATE\n" {
		t.Fatalf("not reproduced: plain git amended in %q", got)
	}
}
