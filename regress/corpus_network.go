package regress

import (
	"path/filepath"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// partialClone makes Dir a blob-less clone whose origin then points at url:
// any read of a file's content fetches it lazily, through whatever the
// config names (docs/gate-rules.md, "Programs that run for the network").
func partialClone(e *Env, url string) {
	src := filepath.Join(e.Work, "src")
	e.InitAt(src, map[string]string{"big.txt": "content fetched lazily\n"})
	e.Git(src, "config", "uploadpack.allowFilter", "true")
	e.Git(e.Work, "clone", "-q", "--filter=blob:none", "--no-checkout", "file://"+src, e.Dir)
	e.Config("remote.origin.url", url)
	e.Var("head", e.Head())
}

// pushRemote is an empty bare repository in Work whose pre-receive hook is
// the payload: a push into it runs the hook on this computer.
func pushRemote(e *Env) string {
	b := e.Bare("remote.git")
	e.Hook(b, "pre-receive")
	return b
}

// fetchRemote is a bare copy of a repository, for fetches.
func fetchRemote(e *Env) string {
	src := filepath.Join(e.Work, "src")
	e.InitAt(src, nil)
	b := filepath.Join(e.Work, "remote.git")
	e.Git(e.Work, "clone", "-q", "--bare", src, b)
	return b
}

var networkCases = []Case{
	{Name: "ssh-command-lazy-fetch", Attack: "in a partial clone, showing a commit fetches a missing blob through core.sshCommand",
		Build: func(e *Env) {
			partialClone(e, "ssh://example.invalid/repo.git")
			e.Config("core.sshCommand", e.Payload)
		},
		Method: "git.show", Grant: trust.View,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "oid": e.Get("head")} },
		Want:   refused(runsPrograms)},
	{Name: "askpass-on-fetch", Attack: "a remote asks for a password and core.askPass names the program that answers",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", e.Unauthorized()+"/repo.git", "core.askPass", e.Payload)
		},
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
	{Name: "credential-helper-on-fetch", Attack: "a remote asks for a password and the checkout's credential helper runs",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", e.Unauthorized()+"/repo.git", "credential.helper", e.Payload)
		},
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
	{Name: "git-proxy-on-fetch", Attack: "core.gitProxy names a program that git:// fetches connect through",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", "git://example.invalid/repo.git", "core.gitProxy", e.Payload)
		},
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
	{Name: "insteadof-to-ext", Attack: "url.<base>.insteadOf rewrites the remote to ext::, which runs a command",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", "https://example.invalid/repo.git",
				"url.ext::"+e.Payload+" %S.insteadOf", "https://example.invalid/", "protocol.ext.allow", "always")
		},
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
	{Name: "insteadof-to-another-host", Attack: "url.<base>.insteadOf sends a GitHub remote to another host",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", "https://github.com/me/app.git", "url.https://evil.example/.insteadOf", "https://github.com/")
		},
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "ls-remote", "--get-url", "origin"); return out },
		Fired:  func(e *Env, out string) bool { return strings.Contains(out, "evil.example") },
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
	{Name: "protocol-file-allowed-by-the-checkout", Attack: "the checkout allows the file transport, and a push into a local repository runs its hooks",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", pushRemote(e), "protocol.file.allow", "always")
		},
		Method: "git.push", Params: target, Want: refused(runsPrograms)},
	{Name: "local-path-remote-receive-hook", Attack: "a push into a local-path remote runs that repository's pre-receive hook",
		Build:  func(e *Env) { e.Init(nil); e.Config("remote.origin.url", pushRemote(e)) },
		Method: "git.push", Params: target, Want: refused(runsPrograms)},
	{Name: "file-url-remote-receive-hook", Attack: "a push into a file:// remote runs that repository's pre-receive hook",
		Build:  func(e *Env) { e.Init(nil); e.Config("remote.origin.url", "file://"+pushRemote(e)) },
		Method: "git.push", Params: target, Want: refused(runsPrograms)},
	{Name: "uploadpack-program", Attack: "remote.<name>.uploadpack names the program a fetch runs",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", fetchRemote(e), "remote.origin.uploadpack", e.Payload)
		},
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
	{Name: "receivepack-program", Attack: "remote.<name>.receivepack names the program a push runs",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("remote.origin.url", e.Bare("remote.git"), "remote.origin.receivepack", e.Payload)
		},
		Method: "git.push", Params: target, Want: refused(runsPrograms)},
	{Name: "submodule-recursion-on-fetch", Attack: "a fetch recurses into a submodule whose own hook runs",
		Build: func(e *Env) {
			e.GlobalConfig("[protocol \"file\"]\n\tallow = always\n") // the user's own, so recursion may reach the local submodule
			sub := filepath.Join(e.Work, "sub")
			e.InitAt(sub, nil)
			e.Init(nil)
			e.Git(e.Dir, "submodule", "add", "-q", sub, "sub")
			e.Git(e.Dir, "commit", "-q", "-m", "sub")
			origin := filepath.Join(e.Work, "origin.git")
			e.Git(e.Work, "clone", "-q", "--bare", e.Dir, origin)
			e.Config("remote.origin.url", origin, "fetch.recurseSubmodules", "true", "protocol.file.allow", "always")
			e.WriteAt(sub, map[string]string{"new.txt": "new\n"})
			e.Git(sub, "add", "new.txt")
			e.Git(sub, "commit", "-q", "-m", "new in the submodule")
			e.Hook(filepath.Join(e.Dir, ".git", "modules", "sub"), "reference-transaction")
		},
		// gatehouse never recurses into submodules on a fetch, even for the
		// desktop, so plain git shows the recursion.
		Plain:  func(e *Env) string { out, _ := e.Run(e.Dir, "fetch", "-q", "origin"); return out },
		Method: "git.fetch", Params: target, Want: refused(runsPrograms)},
}
