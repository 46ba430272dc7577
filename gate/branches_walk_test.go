package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// optionNames are branch names that git would read as options, each one
// that does something: --orphan=NAME empties the work tree onto a new
// branch, --detach leaves the branch, --upload-pack=CMD names a program,
// -l lists instead of creating.
var optionNames = []string{"--orphan=evil", "--detach", "--upload-pack=x", "-l", "-b"}

// gitAsBuilt runs real git with the argv and environment the runner gives
// c for the desktop (Repo.argv, Repo.environ), without the runner's last
// wall (fixedShape refuses a ref argument starting with '-' before git
// starts): so what git itself makes of a name shows.
func gitAsBuilt(t *testing.T, r *Repo, c call) string {
	t.Helper()
	cmd := exec.Command(r.git, r.argv(desktop, nil, c)...)
	cmd.Dir = r.workTree
	cmd.Env = r.environ(desktop, c.sub)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// unchanged checks the checkout is still on branch with a.txt, and its
// branches and worktrees are the ones it had.
func unchanged(t *testing.T, dir, branch, refs string, what string) {
	t.Helper()
	if got := strings.TrimSpace(git(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/"+branch {
		t.Errorf("%s: HEAD is %s, want refs/heads/%s", what, got, branch)
	}
	if got := git(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads"); got != refs {
		t.Errorf("%s: branches\n%s\nwant\n%s", what, got, refs)
	}
	if n := strings.Count(git(t, dir, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("%s: %d worktrees, want 1", what, n)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("%s: a.txt: %v", what, err)
	}
}

// A device's branch name reaches git where git takes a name or a ref, never
// where it parses options, by construction and not only by ValidBranch:
// with the validation off (branchCheckOffForTest), Switch and
// CreateWorktree are refused and change nothing, and git itself, given the
// very argv gatehouse builds but without the runner's shape check, refuses
// each name as a name ("invalid reference", "not a valid branch name"),
// never as an option. Without the construction the same names are options:
// git switch without --end-of-options takes --orphan=evil and empties the
// work tree onto an unborn branch, and git worktree add -b NAME, as
// CreateWorktree called it, hands NAME on to a git branch of its own
// (builtin/worktree.c add()), which parsed --upload-pack=x as an option.
func TestADevicesBranchNameIsNeverAnOption(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	r := open(t, dir)
	branch := r.HeadBranch()
	refs := git(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads")
	branchCheckOffForTest.Store(true)
	defer branchCheckOffForTest.Store(false)

	for _, name := range optionNames {
		for _, tr := range []trust.Trust{desktop, phoneOn} {
			if err := r.Switch(ctx, tr, name); err == nil {
				t.Errorf("%v: Switch(%q) was answered", tr, name)
			}
			if wt, err := r.CreateWorktree(ctx, tr, name); err == nil {
				t.Errorf("%v: CreateWorktree(%q) made %+v", tr, name, wt)
			}
			unchanged(t, dir, branch, refs, name)
		}
		wtDir := filepath.Join(t.TempDir(), "wt")
		for _, c := range append([]call{switchCall(name)}, newWorktreeCalls(name, wtDir)...) {
			out := gitAsBuilt(t, r, c)
			if !strings.Contains(out, "invalid reference: "+name) && !strings.Contains(out, "'"+name+"' is not a valid branch name") {
				t.Errorf("git %s given %q by gatehouse's argv did not refuse it as a name:\n%s", c.sub.name, name, out)
			}
			if strings.Contains(out, "unknown option") || strings.Contains(out, "usage:") {
				t.Errorf("git %s read %q as an option:\n%s", c.sub.name, name, out)
			}
			unchanged(t, dir, branch, refs, "git "+c.sub.name+" "+name)
		}
	}

	// Without the construction, the names are options.
	old := call{sub: subWorktree, config: noHooks, opts: []string{"add", "-q", "-b", "--upload-pack=x", filepath.Join(t.TempDir(), "wt"), "HEAD"}}
	if out := gitAsBuilt(t, r, old); !strings.Contains(out, "unknown option `upload-pack=x'") {
		t.Errorf("git worktree add -b --upload-pack=x: its git branch did not read the name as an option:\n%s", out)
	}
	bare := switchCall("--orphan=evil")
	bare.sub.endOfOptions = false
	gitAsBuilt(t, r, bare)
	if got := strings.TrimSpace(git(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/evil" {
		t.Errorf("git switch --orphan=evil without --end-of-options: HEAD is %s, want the attack's refs/heads/evil", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("git switch --orphan=evil without --end-of-options left a.txt (%v): the attack did not empty the work tree", err)
	}
}

// MergeWorktree hands git the worktree's branch as refs/heads/NAME: a tag
// of the same name, which a short name's lookup prefers (refs/tags/ comes
// before refs/heads/ in git's rules), is not what gets merged.
func TestMergeWorktreeMergesTheBranchNotATagOfItsName(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	r := open(t, dir)
	wt, err := r.CreateWorktree(ctx, closed, "feature")
	if err != nil {
		t.Fatal(err)
	}
	w := open(t, wt.Path, dir)
	write(t, wt.Path, map[string]string{"b.txt": "from the worktree\n"})
	git(t, wt.Path, "add", "b.txt")
	git(t, wt.Path, "commit", "-q", "-m", "b")
	git(t, dir, "switch", "-q", "-c", "side")
	write(t, dir, map[string]string{"tagged.txt": "from the tag\n"})
	git(t, dir, "add", "tagged.txt")
	git(t, dir, "commit", "-q", "-m", "tagged")
	git(t, dir, "tag", "feature")
	git(t, dir, "switch", "-q", "-")
	if err := w.MergeWorktree(ctx, closed, r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tagged.txt")); err == nil {
		t.Error("MergeWorktree merged the tag named as the worktree's branch")
	}
	if read(t, filepath.Join(dir, "b.txt")) != "from the worktree\n" {
		t.Error("MergeWorktree did not merge the worktree's branch")
	}
}
