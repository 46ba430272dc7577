package regress

import (
	"os"
	"path/filepath"
	"strings"
)

// bothMoved is withRemote where Dir and origin have each a commit of their
// own: a.txt on both sides when conflict is set (the pull stops on it),
// else different files (the pull merges or rebases cleanly). config is
// set locally.
func bothMoved(e *Env, conflict bool, files map[string]string, config ...string) {
	if files == nil {
		files = map[string]string{"a.txt": "a\n"}
	}
	e.Init(files)
	base := filepath.Join(e.Work, "served")
	e.Git(e.Work, "clone", "-q", "--bare", e.Dir, filepath.Join(base, "origin.git"))
	url := e.Daemon(base) + "origin.git"
	e.Git(e.Dir, "remote", "add", "origin", url)
	e.Git(e.Dir, "fetch", "-q", "origin")
	e.Git(e.Dir, "branch", "-q", "--set-upstream-to=origin/main")
	other := filepath.Join(e.Work, "other")
	e.Git(e.Work, "clone", "-q", url, other)
	e.WriteAt(other, map[string]string{"a.txt": "upstream\n"})
	e.Git(other, "commit", "-q", "-am", "upstream")
	e.Git(other, "push", "-q", "origin", "HEAD:main")
	name := "a.txt"
	if !conflict {
		name = "local.txt"
	}
	e.Write(map[string]string{name: "local\n"})
	e.Git(e.Dir, "add", name)
	e.Git(e.Dir, "commit", "-q", "-m", "local")
	e.Config(config...)
}

// pullPlain is git pull as the user runs it, for the reproduction.
func pullPlain(e *Env) string {
	out, _ := e.Run(e.Dir, "pull", "--no-edit")
	return out
}

// stoppedMerge is Dir with a merge of branch side stopped on a.txt, its
// conflict resolved and staged: what git.conclude finishes.
func stoppedMerge(e *Env) {
	e.Init(map[string]string{"a.txt": "a\n"})
	e.Git(e.Dir, "checkout", "-q", "-b", "side")
	e.Write(map[string]string{"a.txt": "side\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "side")
	e.Git(e.Dir, "checkout", "-q", "main")
	e.Write(map[string]string{"a.txt": "main\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "main")
	_, _ = e.Run(e.Dir, "merge", "side")
	e.Write(map[string]string{"a.txt": "resolved\n"})
	e.Git(e.Dir, "add", "a.txt")
}

// stoppedRebase is Dir on branch side, two commits rebased onto main and
// stopped at the first one's conflict, resolved and staged: what
// git.conclude continues (replaying the second commit, which changes c.txt:
// a content merge when main changed it too).
func stoppedRebase(e *Env, mainChangesC bool) {
	e.Init(map[string]string{"a.txt": "a\n", "c.txt": "c\n"})
	e.Git(e.Dir, "checkout", "-q", "-b", "side")
	e.Write(map[string]string{"a.txt": "side\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "side")
	e.Write(map[string]string{"c.txt": "side c\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "second")
	e.Git(e.Dir, "checkout", "-q", "main")
	e.Write(map[string]string{"a.txt": "main\n"})
	if mainChangesC {
		e.Write(map[string]string{"c.txt": "main c\n"})
	}
	e.Git(e.Dir, "commit", "-q", "-am", "main")
	e.Git(e.Dir, "checkout", "-q", "side")
	_, _ = e.Run(e.Dir, "rebase", "main")
	e.Write(map[string]string{"a.txt": "resolved\n"})
	e.Git(e.Dir, "add", "a.txt")
}

// seenOp is what git.conclude and git.abort take: the op and id the
// device read from git.conflicts just before, as a phone does. The runner
// asks gatehouse for them ($seenOp, $seenID): the id is gatehouse's own
// hash of the state, never spelled here.
func seenOp(e *Env) map[string]any {
	return map[string]any{"target": "$target", "op": seenOpParam, "id": seenIDParam}
}

func continuePlain(e *Env) string {
	out, _ := e.Run(e.Dir, "-c", "core.editor=true", "rebase", "--continue")
	return out
}

// conflictCases attack the operations that stop on a conflict and finish
// it: a pull that merges or rebases, and git.conclude. Each runs nothing
// the repository names for a closed phone.
var conflictCases = []Case{
	{Name: "hook-pre-rebase-on-pull", Attack: "a pre-rebase hook runs when a phone's pull rebases",
		Build:  func(e *Env) { bothMoved(e, false, nil, "pull.rebase", "true"); e.Hook(e.Dir, "pre-rebase") },
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: safe},
	{Name: "hook-post-rewrite-on-pull", Attack: "a post-rewrite hook runs when a phone's pull rebases",
		Build:  func(e *Env) { bothMoved(e, false, nil, "pull.rebase", "true"); e.Hook(e.Dir, "post-rewrite") },
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: safe},
	{Name: "hook-post-checkout-on-pull-rebase", Attack: "a post-checkout hook runs when a phone's pull rebases",
		Build:  func(e *Env) { bothMoved(e, false, nil, "pull.rebase", "true"); e.Hook(e.Dir, "post-checkout") },
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: safe},
	{Name: "hook-pre-merge-commit-on-pull", Attack: "a pre-merge-commit hook runs when a phone's pull merges",
		Build:  func(e *Env) { bothMoved(e, false, nil, "pull.rebase", "false"); e.Hook(e.Dir, "pre-merge-commit") },
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: safe},
	{Name: "hook-post-merge-on-pull-merge", Attack: "a post-merge hook runs when a phone's pull merges",
		Build:  func(e *Env) { bothMoved(e, false, nil, "pull.rebase", "false"); e.Hook(e.Dir, "post-merge") },
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: safe},
	{Name: "hook-pre-commit-on-conclude", Attack: "pre-commit and commit-msg hooks run when a phone concludes a merge",
		Build:  func(e *Env) { stoppedMerge(e); e.Hook(e.Dir, "pre-commit"); e.Hook(e.Dir, "commit-msg") },
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "commit", "--no-edit"); return out },
		Method: "git.conclude", Params: seenOp, Want: safe},
	{Name: "hook-post-rewrite-on-conclude", Attack: "a post-rewrite hook runs when a phone continues a rebase",
		Build:  func(e *Env) { stoppedRebase(e, false); e.Hook(e.Dir, "post-rewrite") },
		Plain:  continuePlain,
		Method: "git.conclude", Params: seenOp, Want: safe},
	{Name: "merge-driver-local-on-pull", Attack: "a merge driver the attributes choose, defined in the checkout's config, runs when a phone's pull merges",
		Build: func(e *Env) {
			bothMoved(e, true, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt merge=evil\n"}, "pull.rebase", "false")
			e.Config("merge.evil.driver", e.Payload+" %O %A %B")
		},
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: refused(runsPrograms)},
	{Name: "merge-driver-global-on-pull", Attack: "a merge driver the attributes choose, defined in the user's own config, runs when a phone's pull merges",
		Build: func(e *Env) {
			bothMoved(e, true, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt merge=evil\n"}, "pull.rebase", "false")
			e.GlobalConfig("[merge \"evil\"]\n\tdriver = " + e.Payload + " %O %A %B\n")
		},
		Plain:  pullPlain,
		Method: "git.pull", Params: target, Want: refused("defines a merge driver")},
	{Name: "gpg-sign-opt-on-conclude", Attack: "a rebase's state asks to sign (rebase-merge/gpg_sign_opt, read after the config), so continuing it runs the user's gpg.program",
		Build: func(e *Env) {
			e.GlobalConfig("[gpg]\n\tprogram = " + e.Payload + "\n")
			stoppedRebase(e, false)
			e.Write(map[string]string{".git/rebase-merge/gpg_sign_opt": "-S\n"})
		},
		Plain:  continuePlain,
		Method: "git.conclude", Params: seenOp, Want: refused("Finish it on the computer")},
	{Name: "merge-driver-global-on-conclude", Attack: "a merge driver of the user's config runs when a phone continues a rebase that replays more commits",
		Build: func(e *Env) {
			e.GlobalConfig("[merge \"evil\"]\n\tdriver = " + e.Payload + " %O %A %B\n")
			stoppedRebase(e, true)
			e.Write(map[string]string{".git/info/attributes": "* merge=evil\n"})
		},
		Plain:  continuePlain,
		Method: "git.conclude", Params: seenOp, Want: refused("defines a merge driver")},
	{Name: "rerere-linked-postimage-on-pull", Attack: "rerere replays a recorded resolution whose postimage links to a file outside the checkout into the merged file",
		Build: func(e *Env) { plantPostimage(e, os.Symlink) },
		Plain: pullPlain, Fired: holdsOutsideSecret,
		Method: "git.pull", Params: target, Want: refused("which is a symlink")},
	{Name: "rerere-hardlinked-postimage-on-pull", Attack: "rerere replays a recorded resolution whose postimage is a hard link to a file outside the checkout into the merged file",
		Build: func(e *Env) { plantPostimage(e, os.Link) },
		Plain: pullPlain, Fired: holdsOutsideSecret,
		Method: "git.pull", Params: target, Want: refused("hard-linked elsewhere")},
}

// holdsOutsideSecret: the merged file took the outside file's bytes.
func holdsOutsideSecret(e *Env, _ string) bool {
	data, _ := os.ReadFile(filepath.Join(e.Dir, "a.txt"))
	return strings.Contains(string(data), "outside-secret")
}

// plantPostimage records a.txt's conflict with rerere, then makes its
// postimage (the resolution rerere replays) a link made by link to a file
// outside the checkout.
func plantPostimage(e *Env, link func(oldname, newname string) error) {
	bothMoved(e, true, nil, "rerere.enabled", "true", "pull.rebase", "false")
	secret := e.Outside("secret.txt", "outside-secret\n")
	e.Git(e.Dir, "fetch", "-q")
	_, _ = e.Run(e.Dir, "merge", "origin/main") // records the preimage
	e.Git(e.Dir, "merge", "--abort")
	ids, err := os.ReadDir(filepath.Join(e.Dir, ".git", "rr-cache"))
	if err != nil || len(ids) != 1 {
		e.fail(err)
		return
	}
	if err := link(secret, filepath.Join(e.Dir, ".git", "rr-cache", ids[0].Name(), "postimage")); err != nil {
		e.fail(err)
	}
}
