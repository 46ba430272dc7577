package regress

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// otherRepo is another repository beside the checkout, holding a secret.
func otherRepo(e *Env) string {
	other := filepath.Join(e.Work, "other")
	e.InitAt(other, map[string]string{"theirs.txt": "THEIR-SECRET-MARKER\n"})
	return other
}

const redirected = "points outside it"

var locationCases = []Case{
	{Name: "core-worktree-outside", Attack: "core.worktree points status and diff at a folder outside the checkout",
		Build: func(e *Env) {
			e.WriteAt(filepath.Join(e.Work, "elsewhere"), map[string]string{"elsewhere.txt": "x\n"})
			e.Init(nil)
			e.Config("core.worktree", filepath.Join(e.Work, "elsewhere"))
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "status", "--porcelain"); return out },
		Fired: leaks("elsewhere.txt"), Method: "git.status", Grant: trust.View, Params: view,
		Want: refused("core.worktree")},
	{Name: "symlinked-dot-git", Attack: ".git is a symlink to another repository",
		Build: func(e *Env) {
			other := otherRepo(e)
			if err := os.MkdirAll(e.Dir, 0o755); err != nil {
				e.fail(err)
			}
			e.Symlink(filepath.Join(other, ".git"), ".git")
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "show", "HEAD:theirs.txt"); return out },
		Fired: leaks("THEIR-SECRET-MARKER"), Method: "git.status", Params: view,
		Want: Want{Unserved: true, Sentence: redirected}},
	{Name: "commondir-planted", Attack: "a commondir file in .git moves refs, objects and config to another repository",
		Build: func(e *Env) {
			other := otherRepo(e)
			e.Init(nil)
			e.WriteAt(e.Dir, map[string]string{".git/commondir": filepath.Join(other, ".git")})
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "show", "HEAD:theirs.txt"); return out },
		Fired: leaks("THEIR-SECRET-MARKER"), Method: "git.status", Params: view,
		Want: Want{Unserved: true, Sentence: redirected}},
	{Name: "alternates-outside", Attack: "objects/info/alternates lets git read another repository's objects (the desktop may still use such a clone)",
		Build: func(e *Env) {
			other := otherRepo(e)
			e.Var("blob", strings.TrimSpace(e.Git(other, "rev-parse", "HEAD:theirs.txt")))
			e.Init(nil)
			e.WriteAt(e.Dir, map[string]string{".git/objects/info/alternates": filepath.Join(other, ".git", "objects") + "\n"})
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "cat-file", "-p", e.Get("blob")); return out },
		Fired: leaks("THEIR-SECRET-MARKER"), Method: "git.status", Params: view,
		Want: refused(borrows)},
	{Name: "gitdir-to-an-unserved-repository", Attack: "a .git file makes the folder a worktree of a repository nobody chose to serve",
		Build: func(e *Env) {
			other := otherRepo(e)
			e.Git(other, "worktree", "add", "-q", e.Dir)
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "show", "HEAD:theirs.txt"); return out },
		Fired: leaks("THEIR-SECRET-MARKER"), Method: "git.status", Params: view,
		Want: Want{Unserved: true, Sentence: redirected}},
}

var argCases = []Case{
	{Name: "branch-name-as-an-option", Attack: "a branch named --orphan=pwned becomes an option of git switch",
		Build: func(e *Env) { e.Init(nil) },
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "switch", "--orphan=pwned"); return out },
		Fired: func(e *Env, out string) bool {
			head, _ := e.Run(e.Dir, "symbolic-ref", "HEAD")
			return strings.TrimSpace(head) == "refs/heads/pwned"
		},
		Method: "git.switchBranch",
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "branch": "--orphan=pwned"} },
		Want:   badParams("not a valid branch name")},
	{Name: "commit-id-as-an-option", Attack: "a commit id of --output=FILE makes git show write a file anywhere",
		Build:  func(e *Env) { e.Init(nil) },
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "show", "--output="+e.Marker, "HEAD"); return out },
		Method: "git.show", Grant: trust.View,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "oid": "--output=$marker"} },
		Want:   badParams("not a valid commit id")},
	{Name: "path-as-an-option", Attack: "a file named -f becomes git checkout's force flag and throws away every change",
		Build: func(e *Env) {
			e.Init(map[string]string{"-f": "f\n", "other.txt": "original\n"})
			e.Write(map[string]string{"-f": "changed\n", "other.txt": "work in progress\n"})
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "checkout", "HEAD", "-f"); return out },
		Fired: func(e *Env, out string) bool {
			data, err := os.ReadFile(filepath.Join(e.Dir, "other.txt"))
			return err == nil && string(data) == "original\n"
		},
		Method: "git.discard", Grant: trust.Control,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "paths": []string{"-f"}} },
		Want:   safe},
	{Name: "pathspec-magic-in-a-name", Attack: "a file named :(glob)*.txt is read as a pathspec and discards every .txt",
		Build: func(e *Env) {
			e.Init(map[string]string{":(glob)*.txt": "m\n", "keep.txt": "original\n"})
			e.Write(map[string]string{":(glob)*.txt": "changed\n", "keep.txt": "work in progress\n"})
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "restore", ":(glob)*.txt"); return out },
		Fired: func(e *Env, out string) bool {
			data, err := os.ReadFile(filepath.Join(e.Dir, "keep.txt"))
			return err == nil && string(data) == "original\n"
		},
		Method: "git.discard", Grant: trust.Control,
		Params: func(e *Env) map[string]any {
			return map[string]any{"target": "$target", "paths": []string{":(glob)*.txt"}}
		},
		Want: safe},
}

// Corpus is every case, by family.
func Corpus() []Case {
	var all []Case
	for _, family := range [][]Case{hookCases, configCases, networkCases, fileCases, locationCases, gitFolderCases, argCases, diffHeaderCases, transportCases, hunkCases, conflictCases, everydayCases, branchCases, blameCases, pullCases} {
		all = append(all, family...)
	}
	return all
}
