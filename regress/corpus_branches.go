package regress

// params builds a method's params from key value pairs, with the target.
func params(kv ...any) func(e *Env) map[string]any {
	return func(e *Env) map[string]any {
		p := map[string]any{"target": "$target"}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		return p
	}
}

// withBranch is a checkout with a branch other one commit ahead of main,
// on main, and the payload as hook (when hook is not "").
func withBranch(hook string) func(e *Env) {
	return func(e *Env) {
		e.Init(nil)
		e.Git(e.Dir, "switch", "-q", "-c", "other")
		e.Stage()
		e.Git(e.Dir, "commit", "-q", "-m", "other")
		e.Git(e.Dir, "switch", "-q", "main")
		if hook != "" {
			e.Hook(e.Dir, hook)
		}
	}
}

// withRemoteBranch is withBranch with a remote-tracking branch origin/fresh
// at other's commit; the remote is never reached.
func withRemoteBranch(hook string) func(e *Env) {
	return func(e *Env) {
		withBranch("")(e)
		e.Git(e.Dir, "remote", "add", "origin", "https://example.invalid/app.git")
		e.Git(e.Dir, "update-ref", "refs/remotes/origin/fresh", "other")
		if hook != "" {
			e.Hook(e.Dir, hook)
		}
	}
}

// signingHome names the payload as the user's own signing program, with
// signing turned on in the user's global config (which the gate trusts):
// extra is the [tag] and [gpg] lines beyond the program.
func signingHome(extra string) func(e *Env) {
	return func(e *Env) {
		e.GlobalConfig(extra + "[gpg]\n\tprogram = " + e.Payload + "\n[gpg \"ssh\"]\n\tprogram = " + e.Payload + "\n")
		e.Init(nil)
	}
}

func plainGit(args ...string) func(e *Env) string {
	return func(e *Env) string { out, _ := e.Run(e.Dir, args...); return out }
}

var branchCases = []Case{
	{Name: "hook-reference-transaction-on-branch-create", Attack: "the reference-transaction hook runs when a phone makes a branch",
		Build: withBranch("reference-transaction"), Plain: plainGit("branch", "new"),
		Method: "git.createBranch", Params: params("name", "new"), Want: safe},
	{Name: "hook-post-checkout-on-branch-create-and-switch", Attack: "a post-checkout hook runs when a phone makes a branch and switches to it",
		Build: withBranch("post-checkout"), Plain: plainGit("switch", "-q", "-c", "new", "other"),
		Method: "git.createBranch", Params: params("name", "new", "start", "other", "switch", true), Want: safe},
	{Name: "hook-reference-transaction-on-branch-rename", Attack: "the reference-transaction hook runs when a phone renames a branch",
		Build: withBranch("reference-transaction"), Plain: plainGit("branch", "-m", "other", "renamed"),
		Method: "git.renameBranch", Params: params("from", "other", "to", "renamed"), Want: safe},
	{Name: "hook-reference-transaction-on-branch-delete", Attack: "the reference-transaction hook runs when a phone deletes a branch",
		Build: withBranch("reference-transaction"), Plain: plainGit("branch", "-D", "other"),
		Method: "git.deleteBranch", Params: params("branch", "other", "force", true), Want: safe},
	{Name: "hook-post-checkout-on-switch-track", Attack: "a post-checkout hook runs when a phone switches to a remote branch",
		Build: withRemoteBranch("post-checkout"), Plain: plainGit("switch", "-q", "--track", "origin/fresh"),
		Method: "git.switchRemoteBranch", Params: params("remote", "origin/fresh"), Want: safe},
	{Name: "hook-reference-transaction-on-switch-track", Attack: "the reference-transaction hook runs when a phone's switch makes the tracking branch",
		Build: withRemoteBranch("reference-transaction"), Plain: plainGit("switch", "-q", "--track", "origin/fresh"),
		Method: "git.switchRemoteBranch", Params: params("remote", "origin/fresh"), Want: safe},
	{Name: "remote-branch-named-like-an-option", Attack: "a remote-tracking branch named origin/--detach becomes an option where its local name is passed to git switch",
		Build: func(e *Env) {
			withRemoteBranch("")(e)
			e.Git(e.Dir, "update-ref", "refs/remotes/origin/--detach", "other")
		},
		Plain: plainGit("switch", "--detach"),
		Fired: func(e *Env, _ string) bool {
			_, err := e.Run(e.Dir, "symbolic-ref", "-q", "HEAD")
			return err != nil // HEAD detached: the name was read as an option
		},
		Method: "git.switchRemoteBranch", Params: params("remote", "origin/--detach"), Want: badParams("not a valid branch name")},
	{Name: "hook-reference-transaction-on-tag-create", Attack: "the reference-transaction hook runs when a phone makes a tag",
		Build: withBranch("reference-transaction"), Plain: plainGit("tag", "-a", "-m", "one", "v1"),
		Method: "git.createTag", Params: params("name", "v1", "message", "one"), Want: safe},
	{Name: "hook-pre-push-on-tag-push", Attack: "a pre-push hook runs when a phone pushes a tag",
		Build: func(e *Env) {
			withRemote(e, true)
			e.Git(e.Dir, "tag", "v1")
			e.Hook(e.Dir, "pre-push")
		},
		Method: "git.pushTag", Params: params("name", "v1"), Want: safe},
	{Name: "tag-gpgsign-with-the-users-own-program", Attack: "tag.gpgSign in the user's config makes a phone's annotated tag run the signing program",
		Build:  signingHome("[tag]\n\tgpgSign = true\n"),
		Method: "git.createTag", Params: params("name", "v1", "message", "one"), Want: safe},
	{Name: "tag-gpgsign-signs-a-lightweight-tag", Attack: "tag.gpgSign turns a lightweight tag into a signed one, running the signing program",
		Build: signingHome("[tag]\n\tgpgSign = true\n"), Plain: plainGit("tag", "-m", "x", "v1"),
		Method: "git.createTag", Params: params("name", "v1"), Want: safe},
	{Name: "tag-force-sign-annotated", Attack: "tag.forceSignAnnotated signs a tag made with a message, whatever --no-sign says",
		Build: signingHome("[tag]\n\tforceSignAnnotated = true\n"), Plain: plainGit("tag", "--no-sign", "-m", "x", "v1"),
		Method: "git.createTag", Params: params("name", "v1", "message", "one"), Want: safe},
	{Name: "tag-ssh-signing-program", Attack: "ssh signing of tags runs gpg.ssh.program from the user's config",
		Build:  signingHome("[tag]\n\tgpgSign = true\n[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = key::ssh-ed25519 AAAA\n"),
		Method: "git.createTag", Params: params("name", "v1", "message", "one"), Want: safe},
	{Name: "tag-signing-program-in-the-checkout", Attack: "the checkout turns tag signing on and names the signing program",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("tag.gpgSign", "true", "gpg.program", e.Payload)
		},
		Method: "git.createTag", Params: params("name", "v1", "message", "one"), Want: refused(runsPrograms)},
}
