package gate

import (
	"strings"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Refusals. Each carries the sentence a device is shown; callers branch on
// them with errors.Is. Sentences that name an action or keys are built with
// refusal.Errorf from these sentinels.
var (
	ErrNotCheckout = refusal.New(refusal.Refused, "not a git checkout",
		"This folder is not a git checkout.")
	ErrRedirected = refusal.New(refusal.Refused, "git folder redirected",
		"This checkout's git folder is a link or points outside it, so gatehouse won't run git in it.")
	ErrRefused = refusal.New(refusal.Refused, "repository config refused",
		"This repository's git config runs programs; turn on Full access for remote devices on this computer to use Git on this checkout from the phone.")
	ErrSubmodules = refusal.New(refusal.Refused, "submodules",
		"This repository has submodules, whose own config gatehouse can't check; turn on Full access for remote devices on this computer to use Git on this checkout from the phone.")
	ErrConfigTooLarge = refusal.New(refusal.Refused, "config too large",
		"This repository's git config is too large to check; turn on Full access for remote devices on this computer to use Git on this checkout from the phone.")
	ErrBusy = refusal.New(refusal.Busy, "checkout busy",
		"Another git change is still running on this checkout.")
	ErrHardLinked = refusal.New(refusal.Refused, "hard-linked path",
		"A file is hard-linked elsewhere, so gatehouse won't stage it from your phone.")
	ErrSecret = refusal.New(refusal.Refused, "secret path",
		"This file may hold secrets. Give this phone Full access on the computer to see it.")
	ErrFiltered = refusal.New(refusal.Refused, "filtered path",
		"This file goes through a Git filter (Git LFS, for one) that gatehouse does not run for a phone. Do this on the computer.")
	ErrBadRef = refusal.New(refusal.BadParams, "invalid ref name",
		"This is not a valid branch name.")
	ErrBadOID = refusal.New(refusal.BadParams, "invalid object id",
		"This is not a valid commit id.")
	ErrUnknownRef = refusal.New(refusal.NotFound, "unknown ref",
		"That branch or commit does not exist here.")
	ErrTooManyPaths = refusal.New(refusal.BadParams, "too many paths",
		"Too many files at once.")
	ErrNoPaths = refusal.New(refusal.BadParams, "no paths",
		"Name at least one file.")
	ErrFolder = refusal.New(refusal.BadParams, "folder named",
		"This is a folder; name the files in it, or use Discard all.")
	ErrMessage = refusal.New(refusal.BadParams, "bad commit message",
		"Write a commit message (at most 64 KiB).")
	ErrNothingToCommit = refusal.New(refusal.Refused, "nothing staged",
		"Nothing is staged to commit. Stage the changes to commit first.")
	ErrNoUpstream = refusal.New(refusal.Refused, "no upstream",
		"This branch has no upstream to pull from or compare with, or its upstream branch is gone. Set one on the computer (git branch --set-upstream-to …).")
	ErrNoRemote = refusal.New(refusal.Refused, "no remote",
		"This checkout has no remote to push to or fetch from.")
	ErrNotFastForward = refusal.New(refusal.Refused, "not a fast-forward",
		"This branch and its upstream have both moved, so gatehouse won't pull without a merge. Pull on the computer.")
	ErrDetached = refusal.New(refusal.Refused, "detached HEAD",
		"This checkout is not on a branch (a detached HEAD). Switch to a branch first.")
	ErrConflict = refusal.New(refusal.Conflict, "merge conflict",
		"This worktree's branch conflicts with its main checkout's branch. Merge it anyway to resolve the conflicts from the phone, or merge it on the computer.")
	ErrDirty = refusal.New(refusal.Refused, "uncommitted changes",
		"This checkout has uncommitted changes in the way: git will not overwrite them, nor revert or rebase while changes are staged. Commit, stash or discard them first.")
	ErrNoIdentity = refusal.New(refusal.Refused, "no author identity",
		"Git does not know who is committing. Set user.name and user.email on the computer (git config --global user.name …, and the same for user.email), then commit again.")
	ErrLocked = refusal.New(refusal.Busy, "lock file exists",
		"Another git program holds a lock on this checkout (a .lock file in its .git folder, usually .git/index.lock). Wait for it to finish; if no git is running on the computer, delete that file there.")
	ErrPushRejected = refusal.New(refusal.Conflict, "push rejected: not a fast-forward",
		"The remote has commits this branch does not have, so it rejected the push. Pull, then push again.")
	ErrAuthFailed = refusal.New(refusal.Refused, "remote authentication failed",
		"The remote did not accept this computer's credentials. Sign in to the remote on the computer (a push there asks), then try again.")
	ErrUnmerged = refusal.New(refusal.Conflict, "unmerged paths",
		"This checkout has unresolved merge conflicts. Open Conflicts from the changes screen to resolve them, or abort the merge there.")
	ErrGitFailed = refusal.New(refusal.Refused, "git failed",
		"Git could not do this here. Check the checkout on the computer.")
	ErrTimeout = refusal.New(refusal.Retry, "git timed out",
		"Git took too long and was stopped. Try again, or check the checkout on the computer.")
	ErrOutOfMemory = refusal.New(refusal.Refused, "git out of memory",
		"Git needed more memory than gatehouse allows for a phone (1 GiB); the repository may hold a huge object. Use Git on the computer for this checkout.")
	ErrNotWorktree = refusal.New(refusal.BadParams, "not a linked worktree",
		"This checkout is not a worktree gatehouse made.")
	ErrExists = refusal.New(refusal.Conflict, "already exists",
		"A branch or worktree with this name already exists.")
)

// refuseConfig is the untrusted-config refusal: it names the keys and the
// action ("commit", "stage files"), so the person knows what to remove or
// where to allow it (docs/gate-rules.md, docs/policy.md).
func refuseConfig(keys []string, action string) error {
	shown := make([]string, 0, len(keys))
	for _, k := range keys {
		shown = append(shown, shownKey(k))
	}
	return refusal.Errorf(ErrRefused,
		"This repository's git config runs programs (%s); turn on Full access for remote devices on this computer to %s from the phone.",
		strings.Join(uniq(shown), ", "), action)
}

// shownKey is a config key as a device may see it: a subsection that could
// name a place on this computer or a URL (url.<base>.insteadOf,
// includeIf.gitdir:<path>.path, credential.<url>.helper) becomes "…".
func shownKey(key string) string {
	sec, rest, ok := strings.Cut(key, ".")
	i := strings.LastIndexByte(rest, '.')
	if !ok || i < 0 {
		return key
	}
	sub, name := rest[:i], rest[i+1:]
	if len(sub) > 40 || strings.ContainsAny(sub, "/\\: ~\t") {
		sub = "…"
	}
	return sec + "." + sub + "." + name
}

func refuseSubmodules(action string) error {
	return refusal.Errorf(ErrSubmodules,
		"This repository has submodules, whose own config gatehouse can't check; turn on Full access for remote devices on this computer to %s from the phone.",
		action)
}

// refuseSecret refuses to verb a secret file below the full grant.
func refuseSecret(path, verb string) error {
	return refusal.Errorf(ErrSecret, "%s may hold secrets. Give this phone Full access on the computer to %s it.", path, verb)
}

func refuseHardLinked(path, verb string) error {
	return refusal.Errorf(ErrHardLinked, "%s is hard-linked elsewhere, so gatehouse won't %s it from your phone.", path, verb)
}
