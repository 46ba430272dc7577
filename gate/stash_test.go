package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

func stashList(t *testing.T, dir string) []string {
	t.Helper()
	out := strings.TrimSpace(git(t, dir, "stash", "list", "--format=%H"))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// A phone stashes with a message, lists, reads and pops it; git agrees at
// each step. Closed and open gates alike.
func TestStashRoundTrip(t *testing.T) {
	for _, tr := range []trust.Trust{closed, phoneOn, desktop} {
		t.Run(tr.String(), func(t *testing.T) {
			dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
			write(t, dir, map[string]string{"a.txt": "two\n", "new.txt": "fresh\n"})
			r := open(t, dir)
			res, err := r.StashPush(ctx, tr, trust.Control, StashOptions{Message: "half done", Untracked: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := stashList(t, dir); len(got) != 1 || got[0] != res.OID || res.Files != 2 {
				t.Fatalf("git stash list %v, result %+v", got, res)
			}
			if read(t, filepath.Join(dir, "a.txt")) != "one\n" {
				t.Fatal("the work tree still holds the change")
			}
			list, err := r.Stashes(ctx, tr)
			if err != nil || len(list) != 1 || list[0].Message != "half done" || list[0].Branch != "main" && list[0].Branch != "master" || list[0].OID != res.OID {
				t.Fatalf("list: %v %+v", err, list)
			}
			shown, err := r.StashShow(ctx, tr, trust.View, StashRef{0, res.OID})
			if err != nil || !strings.Contains(shown.Diff, "+two") || !strings.Contains(shown.Diff, "+fresh") || !shown.Untracked {
				t.Fatalf("show: %v %+v", err, shown)
			}
			ap, err := r.StashApply(ctx, tr, trust.Full, StashRef{0, res.OID}, true)
			if err != nil || ap.Conflict || ap.Kept {
				t.Fatalf("pop: %v %+v", err, ap)
			}
			if stashList(t, dir) != nil || read(t, filepath.Join(dir, "a.txt")) != "two\n" || read(t, filepath.Join(dir, "new.txt")) != "fresh\n" {
				t.Fatal("pop did not restore the changes and drop the stash")
			}
			_, err = r.StashPush(ctx, tr, trust.Control, StashOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.StashPush(ctx, tr, trust.Control, StashOptions{}); err == nil {
				t.Fatal("a second stash with only untracked files left and no -u")
			} else {
				wantRefusal(t, err, ErrNothingToStash)
			}
		})
	}
}

// stash@{N} shifts when a stash is made: a phone that read the list and
// then drops "stash@{0}" would drop the stash made since. The id it saw is
// checked first.
func TestStashDropNamesTheStashSeen(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
	r := open(t, dir)
	write(t, dir, map[string]string{"a.txt": "first stash\n"})
	git(t, dir, "stash", "push", "-q", "-m", "seen")
	seen := stashList(t, dir)[0]
	write(t, dir, map[string]string{"a.txt": "made since\n"})
	git(t, dir, "stash", "push", "-q", "-m", "since")
	since := stashList(t, dir)[0]
	// Without the rule: position 0 is no longer the stash the phone saw.
	if since == seen {
		t.Fatal("not reproduced: stash@{0} did not shift")
	}
	err := r.StashDrop(ctx, closed, StashRef{0, seen})
	wantRefusal(t, err, ErrStashMoved, "changed since")
	if got := stashList(t, dir); len(got) != 2 {
		t.Fatalf("a stash was dropped: %v", got)
	}
	if err := r.StashDrop(ctx, closed, StashRef{1, seen}); err != nil {
		t.Fatal(err)
	}
	if got := stashList(t, dir); len(got) != 1 || got[0] != since {
		t.Fatalf("dropped the wrong stash: %v", got)
	}
}

// Below the full grant a stash would take a secret file out of the work
// tree into a commit the phone cannot see; plain git does that. The phone
// is refused; at full it may.
func TestStashSecretBelowFull(t *testing.T) {
	dir := gittest.Init(t, map[string]string{".env": "A=1\n", "a.txt": "a\n"})
	write(t, dir, map[string]string{".env": "A=2\n"})
	plain := filepath.Join(t.TempDir(), "plain")
	git(t, "", "clone", "-q", dir, plain)
	write(t, plain, map[string]string{".env": "A=2\n"})
	git(t, plain, "stash", "push", "-q")
	if read(t, filepath.Join(plain, ".env")) != "A=1\n" {
		t.Fatal("not reproduced: plain git stash left the secret in place")
	}
	r := open(t, dir)
	_, err := r.StashPush(ctx, closed, trust.Control, StashOptions{})
	wantRefusal(t, err, ErrSecret, ".env", "stash")
	if read(t, filepath.Join(dir, ".env")) != "A=2\n" || stashList(t, dir) != nil {
		t.Fatal("the refused stash changed the checkout")
	}
	res, err := r.StashPush(ctx, closed, trust.Full, StashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The stash's diff hides the secret below full, shows it at full.
	below, err := r.StashShow(ctx, closed, trust.Control, StashRef{0, res.OID})
	if err != nil || strings.Contains(below.Diff, "A=2") || below.HiddenSecrets != 1 {
		t.Fatalf("below full: %v %+v", err, below)
	}
	if commitLinksShownForTest {
		t.Fatal("unexpected test switch")
	}
	full, err := r.StashShow(ctx, closed, trust.Full, StashRef{0, res.OID})
	if err != nil || !strings.Contains(full.Diff, "+A=2") {
		t.Fatalf("at full: %v %+v", err, full)
	}
}

// A hard-linked work-tree file's bytes are another file's: stashing it
// would copy them into a commit. Plain git stashes it; the phone is refused.
func TestStashHardLinkRefused(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"notes.txt": "n\n"})
	outside := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(outside, []byte("PRIVATE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Skip("no hard links here:", err)
	}
	r := open(t, dir)
	_, err := r.StashPush(ctx, closed, trust.Full, StashOptions{})
	wantRefusal(t, err, ErrHardLinked, "notes.txt")
	if stashList(t, dir) != nil {
		t.Fatal("stashed")
	}
	git(t, dir, "stash", "push", "-q")
	if got := git(t, dir, "stash", "show", "-p"); !strings.Contains(got, "PRIVATE") {
		t.Fatalf("not reproduced: plain git stash did not take the linked bytes: %s", got)
	}
}

// A pop that stops on a conflict leaves the stash in the list (git keeps
// it) and the index unmerged; the result says both.
func TestStashPopConflict(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
	write(t, dir, map[string]string{"a.txt": "stashed\n"})
	git(t, dir, "stash", "push", "-q")
	oid := stashList(t, dir)[0]
	write(t, dir, map[string]string{"a.txt": "committed\n"})
	git(t, dir, "commit", "-q", "-am", "meanwhile")
	r := open(t, dir)
	res, err := r.StashApply(ctx, closed, trust.Full, StashRef{0, oid}, true)
	if err != nil || !res.Conflict || !res.Kept {
		t.Fatalf("%v %+v", err, res)
	}
	if got := stashList(t, dir); len(got) != 1 {
		t.Fatalf("stash list %v", got)
	}
	if u := git(t, dir, "ls-files", "-u"); u == "" {
		t.Fatal("no unmerged paths")
	}
}

// A stash made on the computer that changes a secret file: applying it
// from a phone below full would write the secret file the phone may
// neither read nor change (plain git writes it). Refused below full,
// applied at full.
func TestStashApplySecretBelowFull(t *testing.T) {
	dir := gittest.Init(t, map[string]string{".env": "A=1\n", "a.txt": "a\n"})
	write(t, dir, map[string]string{".env": "A=2\n"})
	git(t, dir, "stash", "push", "-q")
	oid := stashList(t, dir)[0]
	git(t, dir, "stash", "apply", "-q")
	if read(t, filepath.Join(dir, ".env")) != "A=2\n" {
		t.Fatal("not reproduced: plain git stash apply did not write the secret")
	}
	git(t, dir, "checkout", "--", ".env")
	r := open(t, dir)
	_, err := r.StashApply(ctx, closed, trust.Control, StashRef{0, oid}, false)
	wantRefusal(t, err, ErrSecret, ".env", "apply")
	if read(t, filepath.Join(dir, ".env")) != "A=1\n" {
		t.Fatal("the refused apply wrote the secret")
	}
	if _, err := r.StashApply(ctx, closed, trust.Full, StashRef{0, oid}, false); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, ".env")) != "A=2\n" {
		t.Fatal("the apply at full did not write it")
	}
}

// An untracked secret inside a new folder goes into a -u stash; below full
// it refuses the stash, named.
func TestStashUntrackedSecretInFolder(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, map[string]string{"conf/.env": "TOKEN=1\n", "conf/plain.txt": "p\n"})
	r := open(t, dir)
	_, err := r.StashPush(ctx, closed, trust.Control, StashOptions{Untracked: true})
	wantRefusal(t, err, ErrSecret, "conf/.env")
	if stashList(t, dir) != nil {
		t.Fatal("stashed")
	}
}

// git stash runs without GIT_LITERAL_PATHSPECS (its own "git clean :/"
// needs the magic), so it must never carry a device's path: run refuses
// one, and every other subcommand keeps the variable.
func TestOwnPathspecsTakeNoDevicePath(t *testing.T) {
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	d, err := r.decide(ctx, closed, changeGate, "stash changes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(ctx, closed, d, call{sub: subStash, opts: []string{"push"}, paths: []string{":(top)x"}}); !errors.Is(err, ErrOptionShaped) {
		t.Fatalf("a path reached git stash: %v", err)
	}
	has := func(s sub) bool { return slices.Contains(r.environ(closed, s), "GIT_LITERAL_PATHSPECS=1") }
	if has(subStash) || !has(subDiff) || !has(subCommit) {
		t.Fatalf("GIT_LITERAL_PATHSPECS: stash %v, diff %v, commit %v", has(subStash), has(subDiff), has(subCommit))
	}
}

// A stash or a commit that changes a file behind a filter the closed gate
// switches off (LFS): applying or reverting it would write the filter's
// clean bytes where the file belongs. Shown first with the check off, then
// refused with a sentence, the file untouched.
func TestStashApplyAndRevertThroughASwitchedOffFilter(t *testing.T) {
	setup := func(t *testing.T) (string, *Repo, string, string) {
		dir := lfsRepo(t)
		git(t, dir, "checkout", "--", "a.txt")
		git(t, dir, "stash", "push", "-q")
		stash := stashList(t, dir)[0]
		write(t, dir, map[string]string{"big.bin": "changed\n"})
		git(t, dir, "commit", "-q", "-am", "big")
		return dir, wallAOnly(t, dir), stash, headOID(t, dir)
	}
	t.Run("before", func(t *testing.T) {
		dir, r, stash, _ := setup(t)
		r.filteredOffForTest = true
		git(t, dir, "reset", "-q", "--hard", "HEAD~1")
		// Not racily clean: the closed call, filter off, must trust the
		// index's stat data rather than hash big.bin again.
		past := time.Now().Add(-time.Hour)
		for _, f := range []string{"big.bin", "a.txt", ".gitattributes"} {
			if err := os.Chtimes(filepath.Join(dir, f), past, past); err != nil {
				t.Fatal(err)
			}
		}
		git(t, dir, "update-index", "-q", "--really-refresh")
		if _, err := r.StashApply(ctx, closed, trust.Full, StashRef{0, stash}, false); err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(dir, "big.bin")); got != "uryyb gurer\n" {
			t.Fatalf("not reproduced: the apply wrote %q", got)
		}
	})
	dir, r, stash, big := setup(t)
	_, err := r.Revert(ctx, closed, big)
	wantRefusal(t, err, ErrFiltered, "big.bin", "revert the change to it")
	git(t, dir, "reset", "-q", "--hard", "HEAD~1")
	_, err = r.StashApply(ctx, closed, trust.Full, StashRef{0, stash}, false)
	wantRefusal(t, err, ErrFiltered, "big.bin", "apply a stash that changes it")
	if got := read(t, filepath.Join(dir, "big.bin")); got != "hello\n" {
		t.Fatalf("the refused apply left %q", got)
	}
}

// A -u stash's new file that is back in the work tree: git applies
// nothing, and says so in words of its own, which read as "a branch
// already exists" through the general failures table. The stash's own
// sentence says what is in the way; the stash is kept.
func TestStashApplyNewFileInTheWay(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, map[string]string{"new.txt": "stashed\n"})
	git(t, dir, "stash", "push", "-q", "-u")
	oid := stashList(t, dir)[0]
	write(t, dir, map[string]string{"new.txt": "in the way\n"})
	r := open(t, dir)
	_, err := r.StashApply(ctx, closed, trust.Full, StashRef{0, oid}, true)
	wantRefusal(t, err, ErrStashInTheWay, "is in the work tree again")
	if len(stashList(t, dir)) != 1 || read(t, filepath.Join(dir, "new.txt")) != "in the way\n" {
		t.Fatal("the refused pop changed the checkout")
	}
}
