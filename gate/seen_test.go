package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// driverOnStash is a checkout whose attributes select merge driver "evil"
// for every file, with a stash that changes a.txt where HEAD changed it
// too: applying it merges a.txt three ways.
func driverOnStash(t *testing.T) (dir, stash string) {
	dir = gittest.Init(t, map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n", ".gitattributes": "* merge=evil\n"})
	write(t, dir, map[string]string{"a.txt": "1\n2\nSTASH\n4\n5\n6\n"})
	git(t, dir, "stash", "push", "-q")
	write(t, dir, map[string]string{"a.txt": "HEAD\n2\n3\n4\n5\n6\n"})
	git(t, dir, "commit", "-qam", "meanwhile")
	return dir, stashList(t, dir)[0]
}

// The user's own merge driver (global config) that the checkout's
// attributes select runs inside git stash apply (do_apply_stash calls
// merge_ort_nonrecursive) and git revert (sequencer.c do_recursive_merge),
// as in a pull. Shown running for the desktop, then refused for a closed
// phone with the kernel wall off, so the gate alone stops it.
func TestUsersMergeDriverOnStashApplyAndRevert(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	userConfig(t, "[merge \"evil\"]\n\tdriver = "+prog+" %O %A %B\n")

	dir, stash := driverOnStash(t)
	if _, err := open(t, dir).StashApply(ctx, desktop, trust.Full, StashRef{0, stash}, false); err != nil || !gittest.Fired(marker) {
		t.Fatalf("not reproduced: the desktop's stash apply: fired %v, err %v", gittest.Fired(marker), err)
	}
	os.Remove(marker)
	dir, stash = driverOnStash(t)
	for _, pop := range []bool{false, true} {
		_, err := wallAOnly(t, dir).StashApply(ctx, closed, trust.Full, StashRef{0, stash}, pop)
		wantRefusal(t, err, ErrRefused, "merge driver (merge.evil.driver (global))")
	}
	if gittest.Fired(marker) || git(t, dir, "status", "--porcelain") != "" {
		t.Fatal("a closed stash apply ran the user's merge driver or changed the checkout")
	}

	// A revert of a commit older than HEAD's last change to the file.
	dir = gittest.Init(t, map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n", ".gitattributes": "* merge=evil\n"})
	write(t, dir, map[string]string{"a.txt": "TOP\n2\n3\n4\n5\n6\n"})
	git(t, dir, "commit", "-qam", "top")
	top := headOID(t, dir)
	write(t, dir, map[string]string{"a.txt": "TOP\n2\n3\n4\n5\nBOTTOM\n"})
	git(t, dir, "commit", "-qam", "bottom")
	_, err := wallAOnly(t, dir).Revert(ctx, closed, top)
	wantRefusal(t, err, ErrRefused, "merge driver (merge.evil.driver (global))", "revert a commit")
	if gittest.Fired(marker) {
		t.Fatal("a closed revert ran the user's merge driver")
	}
	// The payload leaves our side as it is, so git finds nothing to
	// commit after it: what counts is that it ran.
	if _, err := open(t, dir).Revert(ctx, desktop, top); !gittest.Fired(marker) {
		t.Fatalf("not reproduced: the desktop's revert: fired %v, err %v", gittest.Fired(marker), err)
	}
}

// twoCommitRebase stops a rebase of side (two commits) onto main on its
// first commit's conflict, resolved and staged: --continue then commits it
// and merges the second.
func twoCommitRebase(t *testing.T) string {
	dir := gittest.Init(t, map[string]string{"f.txt": regionsFile[0]})
	git(t, dir, "checkout", "-q", "-b", "side")
	commitSide(t, dir, map[string][3]string{"f.txt": regionsFile}, 2, "side change")
	write(t, dir, map[string]string{"g.txt": "g\n"})
	git(t, dir, "add", "g.txt")
	git(t, dir, "commit", "-qm", "second")
	git(t, dir, "checkout", "-q", "main")
	commitSide(t, dir, map[string][3]string{"f.txt": regionsFile}, 1, "main change")
	git(t, dir, "checkout", "-q", "side")
	git(t, dir, "!", "rebase", "main")
	git(t, dir, "checkout", "--ours", "f.txt")
	git(t, dir, "add", "f.txt")
	return dir
}

// twoCommitPick stops a cherry-pick of two commits on the first one's
// conflict, resolved and staged: git keeps the sequence in sequencer/.
func twoCommitPick(t *testing.T) string {
	dir := gittest.Init(t, map[string]string{"f.txt": regionsFile[0]})
	git(t, dir, "checkout", "-q", "-b", "side")
	commitSide(t, dir, map[string][3]string{"f.txt": regionsFile}, 2, "side change")
	write(t, dir, map[string]string{"g.txt": "g\n"})
	git(t, dir, "add", "g.txt")
	git(t, dir, "commit", "-qm", "second")
	git(t, dir, "checkout", "-q", "main")
	commitSide(t, dir, map[string][3]string{"f.txt": regionsFile}, 1, "main change")
	git(t, dir, "!", "cherry-pick", "main..side")
	git(t, dir, "checkout", "--theirs", "f.txt")
	git(t, dir, "add", "f.txt")
	return dir
}

// The state folder of a rebase, cherry-pick or revert holds options git
// reads on --continue after the command line and the config
// (builtin/rebase.c read_basic_state, sequencer.c read_populate_opts), so
// commit.gpgSign=false does not stop them: gpg_sign_opt signs with
// gpg.program, a strategy other than ort or recursive runs git-merge-NAME,
// sequencer/opts' options.gpg-sign signs. Each is shown running for the
// desktop, then refused for a closed phone with the kernel wall off.
func TestClosedConcludeRefusesStateThatRunsPrograms(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	userConfig(t, "[gpg]\n\tprogram = "+prog+"\n")
	bin := t.TempDir()
	if err := os.Symlink(prog, filepath.Join(bin, "git-merge-evil")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cases := []struct {
		name  string
		build func(t *testing.T) string
		state map[string]string
	}{
		{"rebase gpg_sign_opt", twoCommitRebase, map[string]string{".git/rebase-merge/gpg_sign_opt": "-S\n"}},
		{"rebase empty gpg_sign_opt", twoCommitRebase, map[string]string{".git/rebase-merge/gpg_sign_opt": ""}},
		{"rebase strategy", twoCommitRebase, map[string]string{".git/rebase-merge/strategy": "evil\n"}},
		{"cherry-pick options.gpg-sign", twoCommitPick, map[string]string{"+.git/sequencer/opts": "[options]\n\tGPG-Sign = KEY\n"}},
		{"cherry-pick options.strategy", twoCommitPick, map[string]string{"+.git/sequencer/opts": "[options] strategy = evil\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tr := range []trust.Trust{desktop, closed} {
				os.Remove(marker)
				dir := c.build(t)
				for name, text := range c.state {
					if rest, ok := strings.CutPrefix(name, "+"); ok {
						userConfigAt(t, filepath.Join(dir, rest), text)
						continue
					}
					write(t, dir, map[string]string{name: text})
				}
				r := wallAOnly(t, dir)
				_, err := r.Conclude(ctx, tr, seen(t, r, tr))
				if tr == desktop {
					if !gittest.Fired(marker) {
						t.Fatalf("not reproduced: the desktop's conclude ran nothing (%v)", err)
					}
					continue
				}
				wantRefusal(t, err, ErrStateRunsProgram, "Finish it on the computer")
				if gittest.Fired(marker) {
					t.Fatal("a closed conclude ran the program its state names")
				}
			}
		})
	}
}

// userConfigAt appends text to a file, made when missing (git writes
// sequencer/opts only when an option differs from its default).
func userConfigAt(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// A stash apply that stops on a conflict leaves no operation file; the one
// undo is reset --merge, which resets every index entry that differs from
// HEAD, so changes staged before the apply are lost. Shown at the desktop
// (git's own behaviour), then a device's apply is refused while anything is
// staged, and the abort note says what is not kept.
func TestDeviceStashApplyRefusedWhileStaged(t *testing.T) {
	gittest.Home(t, "")
	build := func() (string, string) {
		dir := gittest.Init(t, map[string]string{"a.txt": "1\n2\n", "b.txt": "b\n", "c.txt": "c\n"})
		write(t, dir, map[string]string{"a.txt": "1\nSTASH\n"})
		git(t, dir, "stash", "push", "-q")
		write(t, dir, map[string]string{"a.txt": "1\nHEAD\n"})
		git(t, dir, "commit", "-qam", "head")
		write(t, dir, map[string]string{"b.txt": "STAGED\n", "c.txt": "UNSTAGED\n"})
		git(t, dir, "add", "b.txt")
		return dir, stashList(t, dir)[0]
	}
	dir, stash := build()
	r := open(t, dir)
	if res, err := r.StashApply(ctx, desktop, trust.Full, StashRef{0, stash}, false); err != nil || !res.Conflict {
		t.Fatalf("desktop apply: %+v %v", res, err)
	}
	c, err := r.Conflicts(ctx, closed, trust.Full)
	if err != nil || !strings.Contains(c.AbortNote, "staged before the stash was applied are not kept") {
		t.Fatalf("abort note %q, %v", c.AbortNote, err)
	}
	if _, err := r.Abort(ctx, closed, Expected{c.Op, c.ID}); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "b.txt")) != "b\n" || read(t, filepath.Join(dir, "c.txt")) != "UNSTAGED\n" {
		t.Fatal("not reproduced: the abort kept the staged change")
	}

	for _, tr := range []trust.Trust{closed, phoneOn} {
		dir, stash = build()
		_, err = open(t, dir).StashApply(ctx, tr, trust.Full, StashRef{0, stash}, false)
		wantRefusal(t, err, ErrStagedBeforeApply, "commit or unstage them first")
		if read(t, filepath.Join(dir, "a.txt")) != "1\nHEAD\n" || git(t, dir, "diff", "--cached", "--name-only") != "b.txt\n" {
			t.Fatal("a refused apply changed the checkout")
		}
	}
}

// A pop drops the stash, as git.stashDrop (full only) does: below full it
// is refused and the stash stays; an apply stays at control.
func TestStashPopNeedsFull(t *testing.T) {
	dir := gittest.Init(t, map[string]string{"a.txt": "one\n"})
	write(t, dir, map[string]string{"a.txt": "two\n"})
	git(t, dir, "stash", "push", "-q")
	oid := stashList(t, dir)[0]
	r := open(t, dir)
	_, err := r.StashApply(ctx, closed, trust.Control, StashRef{0, oid}, true)
	wantRefusal(t, err, ErrPopNeedsFull, "Apply it instead")
	if len(stashList(t, dir)) != 1 || read(t, filepath.Join(dir, "a.txt")) != "one\n" {
		t.Fatal("a refused pop changed something")
	}
	if res, err := r.StashApply(ctx, closed, trust.Control, StashRef{0, oid}, false); err != nil || !res.Kept {
		t.Fatalf("apply at control: %+v %v", res, err)
	}
}

// The phone read HEAD on main; the person switched to another branch at
// the computer; an amend without the commit the phone saw rewrote the
// other branch's last commit. Shown by amending with what is there now
// (what the old call did), then refused when the phone names what it saw.
func TestAmendNamesTheCommitSeen(t *testing.T) {
	gittest.Home(t, "")
	build := func() (string, *Repo, AmendTarget) {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		r := open(t, dir)
		saw := amendSeen(t, r)
		git(t, dir, "checkout", "-q", "-b", "other")
		write(t, dir, map[string]string{"b.txt": "b\n"})
		git(t, dir, "add", "b.txt")
		git(t, dir, "commit", "-qm", "precise release notes")
		return dir, r, saw
	}
	dir, r, _ := build()
	if _, err := r.Amend(ctx, closed, amendSeen(t, r), "wip"); err != nil || !strings.Contains(git(t, dir, "log", "-1", "--format=%s", "other"), "wip") {
		t.Fatalf("not reproduced: %v", err)
	}
	dir, r, saw := build()
	if saw.Branch != "main" || !fullOID(saw.OID) {
		t.Fatalf("canAmend said %+v", saw)
	}
	before := headOID(t, dir)
	_, err := r.Amend(ctx, closed, saw, "wip")
	wantRefusal(t, err, ErrHeadMoved, "another branch was switched to")
	// The same commit on another branch is another amend too.
	git(t, dir, "checkout", "-q", "-b", "twin", "main")
	_, err = r.Amend(ctx, closed, saw, "wip")
	wantRefusal(t, err, ErrHeadMoved)
	if git(t, dir, "rev-parse", "other") != before+"\n" && headOID(t, dir) == before {
		t.Fatal("a refused amend changed a branch")
	}
	if !strings.Contains(git(t, dir, "log", "-1", "--format=%s", "other"), "precise release notes") {
		t.Fatal("the other branch's commit was rewritten")
	}
}

// The phone read a merge in progress; the person aborted it at the
// computer and started another; conclude and abort then name the one the
// phone saw and are refused.
func TestConcludeAndAbortNameTheOperationSeen(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
	r := open(t, dir)
	saw := seen(t, r, closed)
	if saw.Op != OpMerge || saw.ID == "" {
		t.Fatalf("seen %+v", saw)
	}
	git(t, dir, "merge", "--abort")
	git(t, dir, "checkout", "-q", "-b", "third", "main~1")
	write(t, dir, map[string]string{"f.txt": "other\n"})
	git(t, dir, "commit", "-qam", "third")
	git(t, dir, "checkout", "-q", "main")
	git(t, dir, "!", "merge", "-q", "third")
	git(t, dir, "checkout", "--theirs", "f.txt")
	git(t, dir, "add", "f.txt")
	now := seen(t, r, closed)
	if now.Op != OpMerge || now.ID == saw.ID {
		t.Fatalf("two merges, one id: %+v %+v", saw, now)
	}
	_, err := r.Conclude(ctx, closed, saw)
	wantRefusal(t, err, ErrOpChanged, "Reload the conflicts")
	_, err = r.Abort(ctx, closed, saw)
	wantRefusal(t, err, ErrOpChanged)
	_, err = r.Abort(ctx, closed, Expected{Op: OpRebase, ID: now.ID})
	wantRefusal(t, err, ErrOpChanged)
	if git(t, dir, "rev-parse", "-q", "--verify", "MERGE_HEAD") == "" {
		t.Fatal("a refused call ended the merge")
	}
	if _, err := r.Conclude(ctx, closed, now); err != nil {
		t.Fatal(err)
	}
}

// An amend of a commit a tag names would leave the tag on the old commit
// (and a pushed tag has told others about it): refused, with the tag
// named; a commit in a tag's history is refused too.
func TestAmendRefusesATaggedCommit(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	git(t, dir, "tag", "t1")
	r := open(t, dir)
	a, err := r.CanAmend(ctx, closed)
	if err != nil || a.OK || !strings.Contains(a.Reason, "tagged t1") {
		t.Fatalf("can amend a tagged commit: %+v %v", a, err)
	}
	write(t, dir, map[string]string{"a.txt": "b\n"})
	git(t, dir, "add", "a.txt")
	_, err = r.Amend(ctx, closed, amendSeen(t, r), "")
	wantRefusal(t, err, ErrTagged, "The last commit is tagged t1; amending it would leave the tag on the old commit.")
	git(t, dir, "tag", "-d", "t1")
	git(t, dir, "checkout", "-q", "-b", "later")
	git(t, dir, "commit", "-qm", "later")
	git(t, dir, "tag", "-a", "-m", "v", "v2")
	git(t, dir, "checkout", "-q", "main")
	_, err = r.Amend(ctx, closed, amendSeen(t, r), "")
	wantRefusal(t, err, ErrTagged, "in the history of tag v2")
	git(t, dir, "tag", "-d", "v2")
	if _, err := r.Amend(ctx, closed, amendSeen(t, r), "untagged now"); err != nil {
		t.Fatal(err)
	}
}

// The id a device concludes or aborts by covers everything git would act
// on, found by a second red team: an id of HEAD alone (a conflicted stash
// apply) let an abort throw away what was staged at the computer after
// the phone looked; one of a rebase's orig-head and onto let a rebase
// started again with another todo (a commit dropped) be concluded; one of
// MERGE_HEAD's first line let a head added to it be committed as an
// octopus. Each is shown matching the old id's parts, then refused.
func TestTheIDCoversWhatConcludeAndAbortActOn(t *testing.T) {
	gittest.Home(t, "")
	t.Run("staged at the computer during a stash apply", func(t *testing.T) {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		write(t, dir, map[string]string{"a.txt": "stashed\n"})
		git(t, dir, "stash", "push", "-q")
		write(t, dir, map[string]string{"a.txt": "committed\n"})
		git(t, dir, "commit", "-qam", "committed")
		git(t, dir, "!", "stash", "apply")
		r := open(t, dir)
		head := git(t, dir, "rev-parse", "HEAD")
		saw := seen(t, r, closed)
		if saw.Op != OpUnmerged {
			t.Fatalf("seen %+v", saw)
		}
		write(t, dir, map[string]string{"b.txt": "staged at the desk\n", "new.txt": "new at the desk\n"})
		git(t, dir, "add", "b.txt", "new.txt")
		if git(t, dir, "rev-parse", "HEAD") != head {
			t.Fatal("not reproduced: HEAD moved, so an id of HEAD alone would change")
		}
		_, err := r.Abort(ctx, closed, saw)
		wantRefusal(t, err, ErrOpChanged)
		if read(t, filepath.Join(dir, "b.txt")) != "staged at the desk\n" || read(t, filepath.Join(dir, "new.txt")) != "new at the desk\n" {
			t.Fatal("a refused abort changed the desk's work")
		}
		// What the abort does once the device has seen this state: the
		// staged work goes, as its note says.
		if _, err := r.Abort(ctx, closed, seen(t, r, closed)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("not reproduced: the abort kept what was staged: %v", err)
		}
	})
	t.Run("a rebase started again with another todo", func(t *testing.T) {
		dir := twoCommitRebase(t)
		r := open(t, dir)
		saw := seen(t, r, closed)
		stateOf := func() string {
			return read(t, filepath.Join(dir, ".git", "rebase-merge", "orig-head")) + read(t, filepath.Join(dir, ".git", "rebase-merge", "onto"))
		}
		before := stateOf()
		git(t, dir, "rebase", "--abort")
		git(t, dir, "!", "-c", "sequence.editor=sed -i -e 2s/^pick/drop/", "rebase", "-i", "main")
		git(t, dir, "checkout", "--ours", "f.txt")
		git(t, dir, "add", "f.txt")
		if stateOf() != before {
			t.Fatal("not reproduced: orig-head and onto differ, so the old id would change")
		}
		_, err := r.Conclude(ctx, closed, saw)
		wantRefusal(t, err, ErrOpChanged)
	})
	t.Run("a head added to a merge", func(t *testing.T) {
		dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
		git(t, dir, "branch", "b2", "main~1")
		r := open(t, dir)
		saw := seen(t, r, closed)
		mh := filepath.Join(dir, ".git", "MERGE_HEAD")
		first := read(t, mh)
		f, err := os.OpenFile(mh, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(f, git(t, dir, "rev-parse", "b2"))
		f.Close()
		if !strings.HasPrefix(read(t, mh), first) {
			t.Fatal("not reproduced: MERGE_HEAD's first head changed")
		}
		_, err = r.Conclude(ctx, closed, saw)
		wantRefusal(t, err, ErrOpChanged)
	})
}
