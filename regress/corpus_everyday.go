package regress

import (
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// everydayCases attack stash, amend and revert. git stash runs further gits
// of its own (update-index, read-tree, reset, clean), and each must inherit
// the closed gate's options; amend and revert run the commit machinery with
// its hooks and signing. Which hooks fire was read from git 2.39 with every
// hook installed: stash push runs post-index-change and
// reference-transaction, apply post-index-change, pop both; amend runs
// pre-commit, prepare-commit-msg, commit-msg, post-commit and post-rewrite;
// revert runs prepare-commit-msg, post-commit and reference-transaction.

// stashed is a checkout with one stash (a.txt changed), its id in "stash",
// and the hook installed after, so building fires nothing.
func stashed(hook string) func(e *Env) {
	return func(e *Env) {
		e.Init(map[string]string{"a.txt": "a\n"})
		e.Write(map[string]string{"a.txt": "stashed\n"})
		e.Git(e.Dir, "stash", "push", "-q")
		e.Var("stash", strings.TrimSpace(e.Git(e.Dir, "rev-parse", "refs/stash")))
		if hook != "" {
			e.Hook(e.Dir, hook)
		}
	}
}

// changedWithHook is a checkout with a.txt changed and hook installed.
func changedWithHook(hook string) func(e *Env) {
	return func(e *Env) {
		e.Init(map[string]string{"a.txt": "a\n"})
		e.Write(map[string]string{"a.txt": "changed\n"})
		e.Hook(e.Dir, hook)
	}
}

// amendable is a checkout with a change staged onto an unpushed HEAD.
func amendable(hook string) func(e *Env) {
	return func(e *Env) {
		e.Init(nil)
		e.Stage()
		e.Hook(e.Dir, hook)
	}
}

// revertable is a checkout whose HEAD ("head") adds b.txt.
func revertable(hook string) func(e *Env) {
	return func(e *Env) {
		e.Init(nil)
		e.Write(map[string]string{"b.txt": "b\n"})
		e.Git(e.Dir, "add", "b.txt")
		e.Git(e.Dir, "commit", "-q", "-m", "add b")
		e.Var("head", e.Head())
		if hook != "" {
			e.Hook(e.Dir, hook)
		}
	}
}

func stashRef(e *Env) map[string]any {
	return map[string]any{"target": "$target", "index": 0, "oid": e.Get("stash")}
}

func stashPop(e *Env) map[string]any {
	p := stashRef(e)
	p["pop"] = true
	return p
}

// amendParams name the commit git.canAmend showed: HEAD on main.
func amendParams(e *Env) map[string]any {
	return map[string]any{"target": "$target", "oid": e.Head(), "branch": "main", "message": "amended from the phone"}
}

func revertHead(e *Env) map[string]any {
	return map[string]any{"target": "$target", "oid": e.Get("head")}
}

var everydayCases = []Case{
	{Name: "hook-post-index-change-on-stash", Attack: "a post-index-change hook runs when a phone stashes",
		Build: changedWithHook("post-index-change"), Method: "git.stash", Grant: trust.Control, Params: target, Want: safe},
	{Name: "hook-reference-transaction-on-stash", Attack: "the reference-transaction hook runs when a stash updates refs/stash",
		Build: changedWithHook("reference-transaction"), Method: "git.stash", Grant: trust.Control, Params: target, Want: safe},
	{Name: "hook-post-index-change-on-stash-apply", Attack: "a post-index-change hook runs when a phone applies a stash",
		Build: stashed("post-index-change"), Method: "git.stashApply", Grant: trust.Control, Params: stashRef, Want: safe},
	{Name: "hook-reference-transaction-on-stash-pop", Attack: "the reference-transaction hook runs when a pop drops the stash",
		Build: stashed("reference-transaction"), Method: "git.stashApply", Grant: trust.Full, Params: stashPop, Want: safe},
	{Name: "merge-driver-on-stash-apply", Attack: "a merge driver the attributes choose runs when a stash is applied onto a changed file",
		Build: func(e *Env) {
			attributed(e, "merge")
			e.Write(map[string]string{"a.txt": "stashed\n"})
			e.Git(e.Dir, "stash", "push", "-q")
			e.Var("stash", strings.TrimSpace(e.Git(e.Dir, "rev-parse", "refs/stash")))
			e.Write(map[string]string{"a.txt": "committed\n"})
			e.Git(e.Dir, "commit", "-q", "-am", "meanwhile")
			e.Config("merge.evil.driver", e.Payload+" %O %A %B")
		},
		Method: "git.stashApply", Grant: trust.Control, Params: stashRef, Want: refused(runsPrograms)},
	{Name: "merge-driver-global-on-stash-apply", Attack: "a merge driver of the user's own config, chosen by the checkout's attributes, runs when a phone applies a stash onto a changed file",
		Build: func(e *Env) {
			e.GlobalConfig("[merge \"evil\"]\n\tdriver = " + e.Payload + " %O %A %B\n")
			attributed(e, "merge")
			e.Write(map[string]string{"a.txt": "stashed\n"})
			e.Git(e.Dir, "stash", "push", "-q")
			e.Var("stash", strings.TrimSpace(e.Git(e.Dir, "rev-parse", "refs/stash")))
			e.Write(map[string]string{"a.txt": "committed\n"})
			e.Git(e.Dir, "commit", "-q", "-am", "meanwhile")
		},
		Method: "git.stashApply", Grant: trust.Control, Params: stashRef, Want: refused("defines a merge driver")},
	{Name: "merge-driver-global-on-revert", Attack: "a merge driver of the user's own config, chosen by the checkout's attributes, runs when a phone reverts a commit older than the file's last change",
		Build: func(e *Env) {
			e.GlobalConfig("[merge \"evil\"]\n\tdriver = " + e.Payload + " %O %A %B\n")
			attributed(e, "merge")
			e.Write(map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n"})
			e.Git(e.Dir, "commit", "-q", "-am", "six")
			e.Write(map[string]string{"a.txt": "TOP\n2\n3\n4\n5\n6\n"})
			e.Git(e.Dir, "commit", "-q", "-am", "top")
			e.Var("head", e.Head())
			e.Write(map[string]string{"a.txt": "TOP\n2\n3\n4\n5\nBOTTOM\n"})
			e.Git(e.Dir, "commit", "-q", "-am", "bottom")
		},
		Method: "git.revert", Params: revertHead, Want: refused("defines a merge driver")},
	{Name: "textconv-on-stash-show", Attack: "a textconv program runs when a stash is shown",
		Build: func(e *Env) {
			attributed(e, "diff")
			e.Write(map[string]string{"a.txt": "stashed\n"})
			e.Git(e.Dir, "stash", "push", "-q")
			e.Var("stash", strings.TrimSpace(e.Git(e.Dir, "rev-parse", "refs/stash")))
			e.Config("diff.evil.textconv", e.Payload)
		},
		Method: "git.stashShow", Grant: trust.View, Params: stashRef, Want: safe},
	{Name: "hook-pre-commit-on-amend", Attack: "a pre-commit hook runs when a phone amends",
		Build: amendable("pre-commit"), Method: "git.amend", Params: amendParams, Want: safe},
	{Name: "hook-prepare-commit-msg-on-amend", Attack: "a prepare-commit-msg hook runs when a phone amends",
		Build: amendable("prepare-commit-msg"), Method: "git.amend", Params: amendParams, Want: safe},
	{Name: "hook-commit-msg-on-amend", Attack: "a commit-msg hook runs when a phone amends",
		Build: amendable("commit-msg"), Method: "git.amend", Params: amendParams, Want: safe},
	{Name: "hook-post-rewrite-on-amend", Attack: "a post-rewrite hook runs after a phone's amend (--no-verify does not skip it)",
		Build: amendable("post-rewrite"), Method: "git.amend", Params: amendParams, Want: safe},
	{Name: "gpgsign-with-the-users-own-program-on-amend", Attack: "commit.gpgSign makes a phone's amend run the user's signing program",
		Build: func(e *Env) {
			e.GlobalConfig("[gpg]\n\tprogram = " + e.Payload + "\n")
			e.Init(nil)
			e.Config("commit.gpgSign", "true")
			e.Stage()
		},
		Method: "git.amend", Params: amendParams, Want: safe},
	{Name: "hook-prepare-commit-msg-on-revert", Attack: "a prepare-commit-msg hook runs when a phone reverts",
		Build: revertable("prepare-commit-msg"), Method: "git.revert", Params: revertHead, Want: safe},
	{Name: "hook-post-commit-on-revert", Attack: "a post-commit hook runs after a phone's revert",
		Build: revertable("post-commit"), Method: "git.revert", Params: revertHead, Want: safe},
	{Name: "hook-reference-transaction-on-revert", Attack: "the reference-transaction hook runs when a revert moves the branch",
		Build: revertable("reference-transaction"), Method: "git.revert", Params: revertHead, Want: safe},
	{Name: "gpgsign-with-the-users-own-program-on-revert", Attack: "commit.gpgSign makes a phone's revert run the user's signing program",
		Build: func(e *Env) {
			e.GlobalConfig("[gpg]\n\tprogram = " + e.Payload + "\n")
			revertable("")(e)
			e.Config("commit.gpgSign", "true")
		},
		Method: "git.revert", Params: revertHead, Want: safe},
}
