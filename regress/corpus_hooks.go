package regress

import (
	"path/filepath"
	"strconv"

	"github.com/gatehouse/gatehouse/trust"
)

// target is the params of a method that takes only the checkout.
func target(e *Env) map[string]any { return map[string]any{"target": "$target"} }

func commit(e *Env) map[string]any {
	return map[string]any{"target": "$target", "message": "from the phone"}
}

// hookOnCommit is a checkout with a change staged and the payload as hook.
func hookOnCommit(hook string) func(e *Env) {
	return func(e *Env) {
		e.Init(nil)
		e.Hook(e.Dir, hook)
		e.Stage()
	}
}

// withRemote gives Dir an origin served over git:// on loopback (a transport
// a closed phone may use) with its upstream set; ahead leaves Dir one commit
// ahead, else origin is one commit ahead.
func withRemote(e *Env, ahead bool) {
	e.Init(nil)
	base := filepath.Join(e.Work, "served")
	e.Git(e.Work, "clone", "-q", "--bare", e.Dir, filepath.Join(base, "origin.git"))
	url := e.Daemon(base) + "origin.git"
	e.Git(e.Dir, "remote", "add", "origin", url)
	e.Git(e.Dir, "fetch", "-q", "origin")
	e.Git(e.Dir, "branch", "-q", "--set-upstream-to=origin/main")
	if ahead {
		e.Stage()
		e.Git(e.Dir, "commit", "-q", "-m", "ahead")
		return
	}
	other := filepath.Join(e.Work, "other")
	e.Git(e.Work, "clone", "-q", url, other)
	e.WriteAt(other, map[string]string{"upstream.txt": "from upstream\n"})
	e.Git(other, "add", "upstream.txt")
	e.Git(other, "commit", "-q", "-m", "upstream")
	e.Git(other, "push", "-q", "origin", "HEAD:main")
}

// worktreeOf makes Dir a linked worktree (branch feature, one commit ahead)
// of a main checkout in Work/main, which is served first; main moves too,
// so the merge needs a merge commit.
func worktreeOf(e *Env, mainFiles, wtFiles, mainChange map[string]string) string {
	main := filepath.Join(e.Work, "main")
	e.InitAt(main, mainFiles)
	e.Git(main, "worktree", "add", "-q", "-b", "feature", e.Dir)
	e.WriteAt(e.Dir, wtFiles)
	e.Git(e.Dir, "add", "-A")
	e.Git(e.Dir, "commit", "-q", "-m", "in the worktree")
	e.WriteAt(main, mainChange)
	e.Git(main, "add", "-A")
	e.Git(main, "commit", "-q", "-m", "in the main checkout")
	e.Extra, e.Worktree = []string{main}, true
	return main
}

var hookCases = []Case{
	{Name: "hook-pre-commit", Attack: "a pre-commit hook runs when a phone commits",
		Build: hookOnCommit("pre-commit"), Method: "git.commit", Params: commit, Want: safe},
	{Name: "hook-prepare-commit-msg", Attack: "a prepare-commit-msg hook runs when a phone commits",
		Build: hookOnCommit("prepare-commit-msg"), Method: "git.commit", Params: commit, Want: safe},
	{Name: "hook-commit-msg", Attack: "a commit-msg hook runs when a phone commits",
		Build: hookOnCommit("commit-msg"), Method: "git.commit", Params: commit, Want: safe},
	{Name: "hook-post-commit", Attack: "a post-commit hook runs after a phone's commit",
		Build: hookOnCommit("post-commit"), Method: "git.commit", Params: commit, Want: safe},
	{Name: "hook-reference-transaction", Attack: "the reference-transaction hook runs on every ref update, a commit's too",
		Build: hookOnCommit("reference-transaction"), Method: "git.commit", Params: commit, Want: safe},
	{Name: "hook-pre-push", Attack: "a pre-push hook runs when a phone pushes",
		Build:  func(e *Env) { withRemote(e, true); e.Hook(e.Dir, "pre-push") },
		Method: "git.push", Params: target, Want: safe},
	{Name: "hook-post-merge-on-pull", Attack: "a post-merge hook runs when a phone pulls",
		Build:  func(e *Env) { withRemote(e, false); e.Hook(e.Dir, "post-merge") },
		Method: "git.pull", Params: target, Want: safe},
	{Name: "hook-reference-transaction-on-fetch", Attack: "the reference-transaction hook runs when a fetch updates refs",
		Build:  func(e *Env) { withRemote(e, false); e.Hook(e.Dir, "reference-transaction") },
		Method: "git.fetch", Params: target, Want: safe},
	{Name: "hook-post-checkout-on-switch", Attack: "a post-checkout hook runs when a branch is switched",
		Build:  func(e *Env) { e.Init(nil); e.Git(e.Dir, "branch", "other"); e.Hook(e.Dir, "post-checkout") },
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "switch", "-q", "other"); return out },
		Method: "git.switchBranch", Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "branch": "other"} },
		Want: safe},
	{Name: "hook-post-checkout-on-worktree-add", Attack: "a post-checkout hook runs when a worktree is added",
		Build: func(e *Env) { e.Init(nil); e.Hook(e.Dir, "post-checkout") },
		Plain: func(e *Env) string {
			out, _ := e.Run(e.Dir, "worktree", "add", "-q", filepath.Join(e.Work, "plain-wt"))
			return out
		},
		Method: "worktree.create", Params: target, Want: safe},
	{Name: "hook-post-index-change-on-stage", Attack: "a post-index-change hook runs when staging writes the index",
		Build: func(e *Env) {
			e.Init(nil)
			e.Hook(e.Dir, "post-index-change")
			e.Write(map[string]string{"README.md": "changed\n"})
		},
		Method: "git.stage", Grant: trust.Control,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "all": true} }, Want: safe},
	{Name: "hook-pre-auto-gc-after-commit", Attack: "the auto gc after a commit runs the pre-auto-gc hook",
		Build: func(e *Env) {
			e.GlobalConfig("[gc]\n\tauto = 1\n\tautoDetach = false\n")
			e.Init(nil)
			files := map[string]string{}
			for i := range 2000 {
				files["loose/"+strconv.Itoa(i)] = "object " + strconv.Itoa(i) + "\n"
			}
			e.Write(files)
			e.Git(e.Dir, "add", "loose")
			e.Git(e.Dir, "reset", "-q", "loose")
			e.Hook(e.Dir, "pre-auto-gc")
			e.Stage()
		},
		Method: "git.commit", Params: commit, Want: safe},
	{Name: "hooks-path-into-a-tracked-folder", Attack: "core.hooksPath points at hooks the repository itself tracks",
		Build: func(e *Env) {
			e.Init(map[string]string{"README.md": "x\n", ".githooks/pre-commit": "#!/bin/sh\nexec '" + e.Payload + "'\n"})
			e.Git(e.Dir, "update-index", "--chmod=+x", ".githooks/pre-commit")
			e.Git(e.Dir, "checkout", "--", ".githooks/pre-commit")
			e.Config("core.hooksPath", ".githooks")
			e.Stage()
		},
		Method: "git.commit", Params: commit, Want: safe},
	{Name: "hook-pre-merge-commit-on-worktree-merge", Attack: "a pre-merge-commit hook runs when a worktree is merged",
		Build: func(e *Env) {
			main := worktreeOf(e, nil, map[string]string{"w.txt": "w\n"}, map[string]string{"m.txt": "m\n"})
			e.Hook(main, "pre-merge-commit")
		},
		Method: "worktree.merge", Params: target, Want: safe},
	{Name: "hook-post-merge-on-worktree-merge", Attack: "a post-merge hook runs when a worktree is merged",
		Build: func(e *Env) {
			main := worktreeOf(e, nil, map[string]string{"w.txt": "w\n"}, map[string]string{"m.txt": "m\n"})
			e.Hook(main, "post-merge")
		},
		Method: "worktree.merge", Params: target, Want: safe},
}
