package regress

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// attributed is a checkout whose .txt files use the driver "evil" of kind
// (filter, diff, merge) in .gitattributes.
func attributed(e *Env, kind string) {
	e.Init(map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt " + kind + "=evil\n"})
}

// withOther adds a branch "other" whose a.txt differs, so switching to it
// checks a.txt out (and runs its smudge filter).
func withOther(e *Env) {
	e.Git(e.Dir, "switch", "-q", "-c", "other")
	e.Write(map[string]string{"a.txt": "other side\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "other")
	e.Git(e.Dir, "switch", "-q", "main")
}

func view(e *Env) map[string]any { return map[string]any{"target": "$target"} }

var configCases = []Case{
	// Filters.
	{Name: "filter-clean-on-status", Attack: "a clean filter the checkout's config names runs during a status",
		Build: func(e *Env) {
			attributed(e, "filter")
			e.Config("filter.evil.clean", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.status", Grant: trust.View, Params: view, Want: safe},
	{Name: "filter-process-on-diff", Attack: "a long-running filter process the config names runs during a diff",
		Build: func(e *Env) {
			attributed(e, "filter")
			e.Config("filter.evil.process", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.diff", Grant: trust.View, Params: view, Want: safe},
	{Name: "filter-clean-on-stage", Attack: "a clean filter runs when a phone stages",
		Build: func(e *Env) {
			attributed(e, "filter")
			e.Config("filter.evil.clean", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.stage", Grant: trust.Control,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "all": true} },
		Want:   refused(runsPrograms)},
	{Name: "filter-smudge-on-switch", Attack: "a smudge filter runs when a branch is checked out",
		Build:  func(e *Env) { attributed(e, "filter"); withOther(e); e.Config("filter.evil.smudge", e.Payload) },
		Method: "git.switchBranch", Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "branch": "other"} },
		Want: refused(runsPrograms)},
	{Name: "filter-smudge-on-worktree-add", Attack: "a smudge filter runs when a worktree is added",
		Build:  func(e *Env) { attributed(e, "filter"); e.Config("filter.evil.smudge", e.Payload) },
		Method: "worktree.create", Params: target, Want: refused(runsPrograms)},
	{Name: "filter-smudge-on-discard", Attack: "a smudge filter runs when a discard restores a file",
		Build: func(e *Env) {
			attributed(e, "filter")
			e.Config("filter.evil.smudge", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.discard", Grant: trust.Control,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "paths": []string{"a.txt"}} },
		Want:   refused(runsPrograms)},
	// Diff and merge drivers.
	{Name: "textconv-on-diff", Attack: "a textconv program the config names runs for a diff",
		Build: func(e *Env) {
			attributed(e, "diff")
			e.Config("diff.evil.textconv", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.diff", Grant: trust.View, Params: view, Want: safe},
	{Name: "textconv-on-show", Attack: "a textconv program runs when a commit is shown",
		Build: func(e *Env) {
			attributed(e, "diff")
			e.Config("diff.evil.textconv", e.Payload)
			e.Touch("a.txt", "b\n")
			e.Git(e.Dir, "commit", "-q", "-am", "two")
			e.Var("head", e.Head())
		},
		Method: "git.show", Grant: trust.View,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "oid": e.Get("head")} }, Want: safe},
	{Name: "external-diff-driver", Attack: "a diff driver's command the attributes choose runs for a diff",
		Build:  func(e *Env) { attributed(e, "diff"); e.Config("diff.evil.command", e.Payload); e.Touch("a.txt", "b\n") },
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "diff"); return out },
		Method: "git.diff", Grant: trust.View, Params: view, Want: safe},
	{Name: "diff-external", Attack: "diff.external runs a program for every diff",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Config("diff.external", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "diff"); return out },
		Method: "git.diff", Grant: trust.View, Params: view, Want: safe},
	{Name: "merge-driver-on-worktree-merge", Attack: "a merge driver the attributes choose runs when branches merge",
		Build: func(e *Env) {
			main := worktreeOf(e, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt merge=evil\n"},
				map[string]string{"a.txt": "worktree\n"}, map[string]string{"a.txt": "main\n"})
			e.Git(main, "config", "merge.evil.driver", e.Payload+" %O %A %B")
		},
		Method: "worktree.merge", Params: target, Want: refused(runsPrograms)},
	// fsmonitor.
	{Name: "fsmonitor-in-local-config", Attack: "core.fsmonitor names a program every status runs",
		Build:  func(e *Env) { e.Init(nil); e.Config("core.fsmonitor", e.Payload) },
		Method: "git.status", Grant: trust.View, Params: view, Want: safe},
	{Name: "fsmonitor-in-config-worktree", Attack: "core.fsmonitor hides in the per-worktree config",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("extensions.worktreeConfig", "true")
			e.Git(e.Dir, "config", "--worktree", "core.fsmonitor", e.Payload)
		},
		Method: "git.status", Grant: trust.View, Params: view, Want: safe},
	{Name: "fsmonitor-in-a-submodule", Attack: "a submodule's own config names an fsmonitor that a status recursing into it runs",
		Build: func(e *Env) {
			sub := filepath.Join(e.Work, "sub")
			e.InitAt(sub, nil)
			e.Init(nil)
			e.Git(e.Dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			e.Git(e.Dir, "commit", "-q", "-m", "sub")
			e.Git(filepath.Join(e.Dir, "sub"), "config", "core.fsmonitor", e.Payload)
		},
		Method: "git.status", Grant: trust.View, Params: view, Want: safe},
	// Includes.
	{Name: "include-path", Attack: "include.path pulls in a file whose keys the listing does not show",
		Build: func(e *Env) {
			inc := e.Outside("included.cfg", "[core]\n\tfsmonitor = "+e.Payload+"\n")
			e.Init(nil)
			e.Config("include.path", inc)
		},
		Method: "git.status", Grant: trust.View, Params: view, Want: refused(runsPrograms)},
	{Name: "include-if-gitdir", Attack: "includeIf pulls in a filter the listing does not show",
		Build: func(e *Env) {
			inc := e.Outside("included.cfg", "[filter \"evil\"]\n\tclean = "+e.Payload+"\n")
			attributed(e, "filter")
			e.Config("includeIf.gitdir:"+e.Dir+"/.path", inc)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.diff", Grant: trust.View, Params: view, Want: refused(runsPrograms)},
	// Signing.
	{Name: "gpg-program-signs-a-commit", Attack: "the checkout turns signing on and names the signing program",
		Build:  func(e *Env) { e.Init(nil); e.Config("commit.gpgSign", "true", "gpg.program", e.Payload); e.Stage() },
		Method: "git.commit", Params: commit, Want: refused(runsPrograms)},
	{Name: "ssh-signing-program", Attack: "the checkout signs with ssh through a program it names",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("commit.gpgSign", "true", "gpg.format", "ssh", "gpg.ssh.program", e.Payload, "user.signingKey", "key")
			e.Stage()
		},
		Method: "git.commit", Params: commit, Want: refused(runsPrograms)},
	{Name: "gpgsign-with-the-users-own-program", Attack: "commit.gpgSign (allowed) makes a phone's commit run the user's signing program",
		Build: func(e *Env) {
			e.GlobalConfig("[gpg]\n\tprogram = " + e.Payload + "\n")
			e.Init(nil)
			e.Config("commit.gpgSign", "true")
			e.Stage()
		},
		Method: "git.commit", Params: commit, Want: safe},
	{Name: "show-signature-on-log", Attack: "log.showSignature makes every log run the signature program",
		Build: func(e *Env) {
			e.GlobalConfig("[gpg]\n\tprogram = " + e.Payload + "\n")
			e.Init(nil)
			e.Config("log.showSignature", "true")
			tree := strings.TrimSpace(e.Git(e.Dir, "rev-parse", "HEAD^{tree}"))
			signed := "tree " + tree + "\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> 1700000000 +0000\n" +
				"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
			p := e.Outside("commit.txt", signed)
			oid := strings.TrimSpace(e.Git(e.Dir, "hash-object", "-t", "commit", "-w", p))
			e.Git(e.Dir, "update-ref", "refs/heads/main", oid)
		},
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "log", "-1"); return out },
		Method: "git.log", Grant: trust.View, Params: view, Want: safe},
	{Name: "gc-recent-objects-hook", Attack: "gc.recentObjectsHook is a shell command the auto gc after a commit runs",
		Since: "2.41",
		Build: func(e *Env) {
			e.GlobalConfig("[gc]\n\tauto = 1\n\tautoDetach = false\n")
			e.Init(nil)
			e.Config("gc.recentObjectsHook", e.Payload)
			files := map[string]string{}
			for i := range 2000 {
				files["loose/"+strconv.Itoa(i)] = "object " + strconv.Itoa(i) + "\n"
			}
			e.Write(files)
			e.Git(e.Dir, "add", "loose")
			e.Git(e.Dir, "reset", "-q", "loose")
			e.Stage()
		},
		Method: "git.commit", Params: commit, Want: refused(runsPrograms)},
}
