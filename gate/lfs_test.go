package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// lfsLike is a filter as git lfs install writes one into the user's global
// config, required and both ways, but one that turns a file into its
// "pointer" by rot13 so a test can tell the two apart: the index holds the
// clean bytes, the work tree the smudged ones.
const lfsLike = "[filter \"lfs\"]\n\tclean = tr a-zA-Z n-za-mN-ZA-M\n\tsmudge = tr a-zA-Z n-za-mN-ZA-M\n\trequired = true\n"

// lfsRepo is a checkout whose big.bin goes through lfsLike, committed and
// checked out by the user's own git (the filter ran), with big.bin then
// changed in the work tree and a plain a.txt changed beside it.
func lfsRepo(t *testing.T) string {
	t.Helper()
	gittest.Home(t, lfsLike)
	dir := repoWith(t, map[string]string{"a.txt": "a\n", "big.bin": "hello\n", ".gitattributes": "*.bin filter=lfs\n"})
	if got := git(t, dir, "cat-file", "-p", "HEAD:big.bin"); got != "uryyb\n" {
		t.Fatalf("setup: the index holds %q, not the clean bytes", got)
	}
	write(t, dir, map[string]string{"big.bin": "hello there\n", "a.txt": "b\n"})
	return dir
}

// A file that goes through a filter a closed call switches off (an LFS
// file) is never read or written as if it had none. Shown first as
// gatehouse did before: the diff compared the smudged file with the clean
// bytes and showed a change that is not the user's, staging stored the
// smudged bytes where the pointer belongs, and discarding wrote the clean
// bytes over the file. Then the diff leaves it out and counts it, a diff,
// stage or discard naming it is refused with a sentence, and nothing
// changes; reads from the index are served. With the kernel wall off.
func TestFilesThroughASwitchedOffFilter(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		dir := lfsRepo(t)
		r := wallAOnly(t, dir)
		r.filteredOffForTest = true
		df, err := r.Diff(ctx, closed, trust.Full, DiffOptions{Path: "big.bin"})
		if err != nil || !strings.Contains(df.Diff, "-uryyb\n+hello there\n") {
			t.Fatalf("not reproduced: the diff of the filtered file compares the clean bytes with the smudged (err %v):\n%s", err, df.Diff)
		}
		if _, err := r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"big.bin"}}); err != nil {
			t.Fatal(err)
		}
		if got := git(t, dir, "cat-file", "-p", ":big.bin"); got != "hello there\n" {
			t.Fatalf("not reproduced: staging stored %q", got)
		}
		git(t, dir, "reset", "-q")
		if _, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{"big.bin"}, Grant: trust.Full}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, dir+"/big.bin"); got != "uryyb\n" {
			t.Fatalf("not reproduced: discarding left %q", got)
		}
	})

	dir := lfsRepo(t)
	r := wallAOnly(t, dir)
	df, err := r.Diff(ctx, closed, trust.Full, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(df.Diff, "big.bin") || !strings.Contains(df.Diff, "+b\n") || df.HiddenFiltered != 1 {
		t.Fatalf("the whole diff: want a.txt's change and big.bin counted as hidden, got %d hidden:\n%s", df.HiddenFiltered, df.Diff)
	}
	_, err = r.Diff(ctx, closed, trust.Full, DiffOptions{Path: "big.bin"})
	wantRefusal(t, err, ErrFiltered, `big.bin goes through the Git filter "lfs"`, "can't show the changes of it")
	_, err = r.StageHunks(ctx, closed, trust.Full, HunksOptions{Path: "big.bin", Hunks: []int{0}, Hash: strings.Repeat("0", 64)})
	wantRefusal(t, err, ErrFiltered)

	_, err = r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"big.bin"}})
	wantRefusal(t, err, ErrFiltered, "can't stage it")
	res, err := r.Stage(ctx, closed, trust.Full, StageOptions{All: true})
	if err != nil || res.Count != 1 || res.Skipped != 1 {
		t.Fatalf("stage all: %+v, %v; want a.txt staged and big.bin left out", res, err)
	}
	if got := git(t, dir, "cat-file", "-p", ":big.bin"); got != "uryyb\n" {
		t.Fatalf("the index's big.bin became %q", got)
	}
	_, err = r.Discard(ctx, closed, DiscardOptions{Paths: []string{"big.bin"}, Grant: trust.Full})
	wantRefusal(t, err, ErrFiltered, "can't discard the changes of it")
	if got := read(t, dir+"/big.bin"); got != "hello there\n" {
		t.Fatalf("the refused discard left %q", got)
	}

	// A new file through the filter is refused too; deleting one needs no
	// filter and is staged.
	write(t, dir, map[string]string{"new.bin": "new\n"})
	_, err = r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"new.bin"}})
	wantRefusal(t, err, ErrFiltered)
	git(t, dir, "rm", "-q", "--cached", "big.bin")
	git(t, dir, "add", "big.bin") // the user's own git, with the filter: the index holds the clean bytes again
	if err := os.Remove(filepath.Join(dir, "big.bin")); err != nil {
		t.Fatal(err)
	}
	if res, err := r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"big.bin"}}); err != nil || res.Count != 1 {
		t.Fatalf("staging the deletion of a filtered file: %+v, %v", res, err)
	}

	// The staged diff reads the index and HEAD only: served, the clean bytes.
	df, err = r.Diff(ctx, closed, trust.Full, DiffOptions{Staged: true, Path: "big.bin"})
	if err != nil || !strings.Contains(df.Diff, "-uryyb\n") {
		t.Fatalf("the staged diff of the filtered file: %v\n%s", err, df.Diff)
	}

	// The desktop's git runs the user's filter, as the user chose: git
	// compares the clean bytes (for LFS, the pointers).
	git(t, dir, "reset", "-q")
	write(t, dir, map[string]string{"big.bin": "hello again\n"})
	df, err = r.Diff(ctx, desktop, trust.Full, DiffOptions{Path: "big.bin"})
	if err != nil || !strings.Contains(df.Diff, "-uryyb\n+uryyb ntnva\n") {
		t.Fatalf("the desktop's diff: %v\n%s", err, df.Diff)
	}
}

// A filter the user's git reads from where the environment moves its
// config ($XDG_CONFIG_HOME/git/config, $GIT_CONFIG_GLOBAL) is known to the
// gate's git too. First as before, when git got none of these variables:
// the filter was unknown, and a phone's stage stored the file's content
// where its pointer belongs. Then it is refused like a filter in
// ~/.gitconfig, and the desktop's stage runs it. Wall on and off
// (GATEHOUSE_KERNEL_WALL), since the wall must let git read that file.
func TestAFilterWhereTheEnvironmentMovesTheConfig(t *testing.T) {
	for _, where := range []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"} {
		for _, old := range []bool{true, false} {
			t.Run(where+map[bool]string{true: " (not passed to git)", false: ""}[old], func(t *testing.T) {
				gittest.Home(t, "")
				moved := t.TempDir()
				file := filepath.Join(moved, "git", "config")
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(lfsLike), 0o644); err != nil {
					t.Fatal(err)
				}
				if where == "XDG_CONFIG_HOME" {
					t.Setenv(where, moved)
				} else {
					// GIT_CONFIG_GLOBAL replaces ~/.gitconfig: the test's identity goes there too.
					home, _ := os.ReadFile(filepath.Join(os.Getenv("HOME"), ".gitconfig"))
					if err := os.WriteFile(file, append(home, lfsLike...), 0o644); err != nil {
						t.Fatal(err)
					}
					t.Setenv(where, file)
				}
				dir := repoWith(t, map[string]string{"big.bin": "hello\n", ".gitattributes": "*.bin filter=lfs\n"})
				if got := git(t, dir, "cat-file", "-p", "HEAD:big.bin"); got != "uryyb\n" {
					t.Fatalf("setup: the user's git did not clean big.bin: %q", got)
				}
				write(t, dir, map[string]string{"big.bin": "hello there\n"})
				r := open(t, dir)
				r.userEnvOffForTest = old
				_, err := r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{"big.bin"}})
				if old {
					if got := git(t, dir, "cat-file", "-p", ":big.bin"); err != nil || got != "hello there\n" {
						t.Fatalf("not reproduced: with the filter unknown, the stage gave %v and stored %q", err, got)
					}
					return
				}
				wantRefusal(t, err, ErrFiltered)
				if _, err := r.Stage(ctx, desktop, trust.Full, StageOptions{Paths: []string{"big.bin"}}); err != nil {
					t.Fatal(err)
				}
				if got := git(t, dir, "cat-file", "-p", ":big.bin"); got != "uryyb gurer\n" {
					t.Fatalf("the desktop's stage stored %q, not the clean bytes", got)
				}
			})
		}
	}
}

// A discard restores a file through the index's attributes first (git's
// checkout direction), so a .gitattributes changed in the work tree does
// not make a filtered file look unfiltered. Before: asked the work tree's
// way only, the discard went on and wrote the clean bytes over the file.
func TestADiscardReadsTheIndexsAttributes(t *testing.T) {
	dir := lfsRepo(t)
	write(t, dir, map[string]string{".gitattributes": "# edited\n"})
	r := wallAOnly(t, dir)
	_, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{"big.bin"}, Grant: trust.Full})
	wantRefusal(t, err, ErrFiltered)
	if got := read(t, dir+"/big.bin"); got != "hello there\n" {
		t.Fatalf("the refused discard left %q", got)
	}
}
