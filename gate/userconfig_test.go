package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// wallAOnly opens dir with the kernel wall off, as macOS and kernels without
// Landlock run gatehouse: what holds then is the gate's own doing.
func wallAOnly(t *testing.T, dir string, served ...string) *Repo {
	t.Helper()
	r := open(t, dir, served...)
	kernelWallOff(r)
	return r
}

// userConfig appends text to the test's global git config (~/.gitconfig).
func userConfig(t *testing.T, text string) {
	t.Helper()
	p := filepath.Join(os.Getenv("HOME"), ".gitconfig")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// A driver the user's own config defines (global, system, or a file they
// include) is selected by a repository's attributes: for a closed call it
// is switched off like the repository's own, whatever file defines it.
// Shown with the kernel wall off: first the driver running for a closed
// call when only the repository's config is read (the old rule), then
// switched off.
func TestDriversFromTheUsersConfigAreSwitchedOff(t *testing.T) {
	cases := []struct {
		name   string
		config func(t *testing.T, prog string) string // global config text
		op     func(r *Repo, tr trust.Trust) error
		want   error
	}{
		{"a global clean filter on diff", func(t *testing.T, prog string) string {
			return "[filter \"evil\"]\n\tclean = " + prog + "\n"
		}, opDiff, nil},
		{"a global clean filter on status", func(t *testing.T, prog string) string {
			return "[filter \"evil\"]\n\tclean = " + prog + "\n"
		}, opStatus, nil},
		{"a required filter, as git lfs install writes it", func(t *testing.T, prog string) string {
			return "[filter \"evil\"]\n\tclean = " + prog + "\n\tprocess = " + prog + "\n\trequired = true\n"
		}, opStatus, nil},
		{"a filter in a file the global config includes", func(t *testing.T, prog string) string {
			inc := filepath.Join(t.TempDir(), "included")
			if err := os.WriteFile(inc, []byte("[filter \"evil\"]\n\tclean = "+prog+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "[include]\n\tpath = " + inc + "\n"
		}, opDiff, nil},
	}
	for _, c := range cases {
		for _, old := range []bool{true, false} {
			t.Run(c.name+map[bool]string{true: " (repository config only)", false: ""}[old], func(t *testing.T) {
				gittest.Home(t, "")
				prog, marker := gittest.PayloadFile(t)
				dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"})
				dirty(t, dir)
				userConfig(t, c.config(t, prog)) // after the setup's own git ran
				r := wallAOnly(t, dir)
				r.userConfigOffForTest = old
				err := c.op(r, closed)
				if old {
					if !gittest.Fired(marker) {
						t.Fatalf("not reproduced: the global driver did not run for a closed call reading only the repository's config (err %v)", err)
					}
					return
				}
				if gittest.Fired(marker) {
					t.Fatalf("a driver from the user's config ran for a closed call (err %v)", err)
				}
				if err != nil {
					t.Fatalf("want a safe success, got %v", err)
				}
			})
		}
	}
}

// A filter added to the user's config while serve runs is switched off from
// the next call on: the decision is tied to the user's config files too.
func TestADriverAddedLaterIsSwitchedOff(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"})
	r := wallAOnly(t, dir)
	if _, err := r.Status(ctx, closed); err != nil {
		t.Fatal(err)
	}
	prog, marker := gittest.PayloadFile(t)
	userConfig(t, "[filter \"evil\"]\n\tclean = "+prog+"\n")
	dirty(t, dir)
	if _, err := r.Diff(ctx, closed, trust.Full, DiffOptions{}); err != nil || gittest.Fired(marker) {
		t.Fatalf("a filter added to the global config after a decision: fired %v, err %v", gittest.Fired(marker), err)
	}
}

// A merge driver from the user's config refuses a closed merge: the
// repository's attributes could select it, and the merge would run it.
func TestAMergeDriverFromTheUsersConfigRefusesAMerge(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	main := gittest.Init(t, map[string]string{"a.txt": "one\ntwo\nthree\n", ".gitattributes": "*.txt merge=evil\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	write(t, wt, map[string]string{"a.txt": "one\ntwo\nthree\nfour\n"})
	git(t, wt, "commit", "-qam", "w")
	write(t, main, map[string]string{"a.txt": "zero\none\ntwo\nthree\n"})
	git(t, main, "commit", "-qam", "m")
	userConfig(t, "[merge \"evil\"]\n\tdriver = "+prog+" %O %A %B\n")
	m := wallAOnly(t, main)
	w := wallAOnly(t, wt, main)
	err := w.MergeWorktree(ctx, closed, m)
	if gittest.Fired(marker) {
		t.Fatal("a merge driver from the user's config ran for a closed merge")
	}
	wantRefusal(t, err, ErrRefused, "merge driver (merge.evil.driver (global))")
	if !strings.Contains(git(t, main, "log", "-1", "--format=%s"), "m") {
		t.Fatal("the main checkout changed")
	}
	// The desktop merges with it, as the user chose.
	if err := w.MergeWorktree(ctx, desktop, m); err != nil || !gittest.Fired(marker) {
		t.Fatalf("the desktop's merge: fired %v, err %v", gittest.Fired(marker), err)
	}
}

// A .git replaced under a running host is decided again: the decision (and
// the alternates check) followed the folder held open since Open, while git
// opens the new one by its path, so without the kernel wall the new
// folder's filter ran. Shown first with the decision tied to the held
// folder, then decided again for the folder git opens.
func TestAReplacedGitFolderIsDecidedAgain(t *testing.T) {
	for _, held := range []bool{true, false} {
		t.Run(map[bool]string{true: "decided on the held folder", false: "decided on the folder git opens"}[held], func(t *testing.T) {
			gittest.Home(t, "")
			dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"})
			r := wallAOnly(t, dir)
			r.heldFolderForTest = held
			settled(t, filepath.Join(dir, ".git", "config"))
			if _, err := r.Status(ctx, closed); err != nil { // decided and cached for the first folder
				t.Fatal(err)
			}
			// Another repository's git folder, whose own config defines the
			// filter the attributes select, takes .git's place.
			prog, marker := gittest.PayloadFile(t)
			other := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"})
			git(t, other, "config", "--local", "filter.evil.clean", prog)
			if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(t.TempDir(), "old.git")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(other, ".git"), filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			dirty(t, dir)
			_, err := r.Diff(ctx, closed, trust.Full, DiffOptions{})
			if held {
				if !gittest.Fired(marker) {
					t.Fatalf("not reproduced: the new folder's filter did not run on the held folder's decision (err %v)", err)
				}
				return
			}
			if gittest.Fired(marker) {
				t.Fatalf("the replaced folder's filter ran (err %v)", err)
			}
		})
	}
}

// settled waits until path last changed longer ago than the racy window, so
// a decision read from it is cached (a fresher file is read again each
// time, which would hide what a test looks for).
func settled(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		id, err := fileid.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !racy(id, time.Now()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s kept changing", path)
		}
	}
}

// The same for borrowed objects: a .git replaced by one whose alternates
// lead to another repository was checked through the held descriptor (the
// old folder, which borrows nothing), and git.show displayed the other
// repository's commit. Now the check reads the folder git opens.
func TestAReplacedGitFolderBorrowingObjectsIsRefused(t *testing.T) {
	for _, held := range []bool{true, false} {
		t.Run(map[bool]string{true: "checked on the held folder", false: "checked on the folder git opens"}[held], func(t *testing.T) {
			gittest.Home(t, "")
			dir := repoWith(t, map[string]string{"a.txt": "a\n"})
			secret := repoWith(t, map[string]string{"private.txt": "another repository's content\n"})
			oid := strings.TrimSpace(git(t, secret, "rev-parse", "HEAD"))
			r := wallAOnly(t, dir)
			r.heldFolderForTest = held
			if _, err := r.Status(ctx, closed); err != nil {
				t.Fatal(err)
			}
			other := repoWith(t, map[string]string{"a.txt": "a\n"})
			alt := filepath.Join(other, ".git", "objects", "info", "alternates")
			if err := os.WriteFile(alt, []byte(filepath.Join(secret, ".git", "objects")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(t.TempDir(), "old.git")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(other, ".git"), filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			show, err := r.Show(ctx, closed, trust.Full, oid, "")
			if held {
				if err != nil || !strings.Contains(show.Diff, "another repository's content") {
					t.Fatalf("not reproduced: the borrowed commit was not shown on the held folder's check (err %v)", err)
				}
				return
			}
			wantRefusal(t, err, ErrGitFolder, "borrows objects")
		})
	}
}

// A driver defined in a file the user's config includes only under a
// condition (includeIf) is switched off though the condition does not hold
// where the decision listed the config: it holds for the checkout that git
// worktree add starts in the new worktree, on its new branch and in its
// own git folder. Shown with the kernel wall off: first the smudge running
// for a phone's new worktree when only the files read in the checkout
// count, then switched off.
func TestDriversBehindAnIncludeConditionAreSwitchedOff(t *testing.T) {
	for _, cond := range []string{"onbranch:wt/**", "gitdir:**/worktrees/**"} {
		for _, old := range []bool{true, false} {
			t.Run(cond+map[bool]string{true: " (conditions as the checkout has them)", false: ""}[old], func(t *testing.T) {
				gittest.Home(t, "")
				prog, marker := gittest.PayloadFile(t)
				dir := repoWith(t, map[string]string{"f.ob": "content\n", ".gitattributes": "*.ob filter=ob\n"})
				inc := filepath.Join(t.TempDir(), "drivers.inc")
				if err := os.WriteFile(inc, []byte("[filter \"ob\"]\n\tsmudge = "+prog+"\n\tclean = "+prog+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				userConfig(t, "[includeIf \""+cond+"\"]\n\tpath = "+inc+"\n")
				r := wallAOnly(t, dir)
				r.userIncludesOffForTest = old
				wt, err := r.CreateWorktree(ctx, closed, "wt/two")
				if old {
					if !gittest.Fired(marker) {
						t.Fatalf("not reproduced: the included smudge did not run for a closed worktree.create (err %v)", err)
					}
					return
				}
				if gittest.Fired(marker) {
					t.Fatalf("a driver behind an include condition ran for a closed worktree.create (err %v)", err)
				}
				if err != nil {
					t.Fatalf("want the worktree made, got %v", err)
				}
				if got, err := os.ReadFile(filepath.Join(wt.Path, "f.ob")); err != nil || string(got) != "content\n" {
					t.Fatalf("the new worktree's f.ob: %q, %v; want its committed bytes", got, err)
				}
			})
		}
	}
}
