package gate

// programKey is a config key family that git's documentation (git help
// config, githooks, gitattributes, git) says runs a program, reaches the
// network, names a file to read or write, or points at another repository,
// and how the closed gate keeps a repository from using it.
//
// The forced options and the allowlist were first written one attack at a
// time (docs/gate-rules.md); this table is the floor gone through from the
// documentation. Every row must be handled one of these ways, which
// TestEveryProgramKeyIsHandled checks:
//
//   - handledRead: the Read gate refuses the key, so no call (read or
//     change) runs in a checkout that sets it;
//   - handledForced: a forced -c option or environment variable overrides
//     it on every closed call that could reach it;
//   - handledFlag: a command-line flag gatehouse always passes disables it
//     (--no-pager, --no-ext-diff, --no-textconv);
//   - handledChange: only commands the Change gate runs could reach it, and
//     the allowlist refuses it there;
//   - handledProtected: git reads it only from the user's own config, never
//     a repository's.
//
// Every row is also refused by the Change gate's allowlist, except the keys
// the allowlist takes on purpose because they are forced off anyway.
type programKey struct {
	Pattern string
	Handled handling
	// By names what handles it: the forced option or environment variable,
	// or the flag, that a test finds in the forced tables or on the command
	// line. Empty for the other kinds.
	By     string
	Reason string
}

type handling string

const (
	handledRead      handling = "read gate refuses it"
	handledForced    handling = "forced off on every closed call"
	handledFlag      handling = "disabled by a flag on every call that reads it"
	handledChange    handling = "reached only by changes; the allowlist refuses it"
	handledProtected handling = "git reads it only from the user's own config"
)

var programKeys = []programKey{
	// Programs.
	{"core.sshcommand", handledRead, "", "names the ssh program git runs"},
	{"core.askpass", handledRead, "", "names a program that asks for a password"},
	{"credential.**", handledRead, "", "credential helpers are programs"},
	{"core.gitproxy", handledChange, "", "names a program used as a proxy for git:// remotes"},
	{"core.editor", handledForced, "GIT_EDITOR", "names an editor; GIT_EDITOR=: outranks it"},
	{"sequence.editor", handledForced, "GIT_SEQUENCE_EDITOR", "names an editor; GIT_SEQUENCE_EDITOR=: outranks it"},
	{"core.pager", handledFlag, "--no-pager", "names a pager; --no-pager"},
	{"pager.**", handledFlag, "--no-pager", "names a pager per command; --no-pager"},
	{"core.fsmonitor", handledForced, "core.fsmonitor", "names a program status runs; core.fsmonitor=false"},
	{"core.hookspath", handledForced, "core.hooksPath", "points at hooks; core.hooksPath=/dev/null"},
	{"core.alternaterefscommand", handledChange, "", "a shell command run when advertising refs to a remote"},
	{"diff.external", handledFlag, "--no-ext-diff", "an external diff program; --no-ext-diff"},
	{"diff.*.command", handledFlag, "--no-ext-diff", "an external diff driver; --no-ext-diff"},
	{"diff.*.textconv", handledFlag, "--no-textconv", "a conversion program; --no-textconv"},
	{"filter.**", handledForced, "filter.<driver>.clean", "clean, smudge and process programs; every driver the config defines is switched off"},
	{"merge.*.driver", handledChange, "", "a merge driver program"},
	{"gpg.program", handledForced, "commit.gpgSign", "the signing program; signing and signature display are forced off"},
	{"gpg.*.program", handledForced, "commit.gpgSign", "the same, per format"},
	{"gpg.ssh.defaultkeycommand", handledForced, "commit.gpgSign", "a program that picks the signing key; signing is forced off"},
	{"gpg.ssh.allowedsignersfile", handledForced, "log.showSignature", "a file read to check signatures; their display is forced off"},
	{"gpg.ssh.revocationfile", handledForced, "log.showSignature", "the same"},
	{"trailer.*.command", handledChange, "", "a program run for trailers (gatehouse passes none)"},
	{"trailer.*.cmd", handledChange, "", "the same"},
	{"difftool.**", handledChange, "", "diff tools (never started by gatehouse)"},
	{"mergetool.**", handledChange, "", "merge tools (never started by gatehouse)"},
	{"web.browser", handledChange, "", "a browser (never started by gatehouse)"},
	{"browser.**", handledChange, "", "browsers"},
	{"man.**", handledChange, "", "man page viewers"},
	{"instaweb.**", handledChange, "", "a web server"},
	{"sendemail.**", handledChange, "", "sendmail programs and SMTP servers"},
	{"imap.**", handledChange, "", "imap.tunnel is a program"},
	{"gui.**", handledChange, "", "git gui"},
	{"guitool.**", handledChange, "", "commands git gui runs"},
	{"tar.**", handledChange, "", "git archive filters are programs"},
	{"alias.**", handledChange, "", "! aliases are shell commands (gatehouse runs no alias)"},
	{"submodule.**", handledForced, "submodule.recurse", "submodule.<name>.update can be !command; submodules are skipped and refused for changes"},
	{"gc.recentobjectshook", handledForced, "maintenance.auto", "a shell command gc runs; maintenance is forced off"},
	{"maintenance.**", handledForced, "maintenance.auto", "maintenance tasks; maintenance is forced off"},
	{"uploadpack.packobjectshook", handledProtected, "", "git ignores it in repository config"},
	{"safe.**", handledProtected, "", "git ignores it in repository config"},
	// The network.
	{"remote.*.uploadpack", handledChange, "", "the program run on the remote side of a fetch, or locally for a local remote"},
	{"remote.*.receivepack", handledChange, "", "the same, for pushes"},
	{"remote.*.vcs", handledChange, "", "a remote helper program"},
	{"remote.*.proxy", handledChange, "", "a proxy for this remote"},
	{"remote.*.proxyauthmethod", handledChange, "", "the same"},
	{"remote.pushdefault", handledChange, "", "which remote pushes go to"},
	{"url.**", handledChange, "", "insteadOf rewrites a remote, to ext:: or another host"},
	{"protocol.**", handledForced, "GIT_ALLOW_PROTOCOL", "transports; protocol.* and GIT_ALLOW_PROTOCOL are forced"},
	{"http.**", handledChange, "", "proxies, cookie files (written), certificates and keys"},
	{"ssh.variant", handledChange, "", "how the ssh program is called"},
	{"fetch.bundleuri", handledChange, "", "fetches bundles from a URL"},
	{"bundle.**", handledChange, "", "bundle URIs"},
	{"transfer.**", handledChange, "", "transfer settings"},
	{"receive.**", handledChange, "", "settings of the receiving side"},
	{"extensions.partialclone", handledRead, "", "a partial clone fetches missing objects, even during reads"},
	// Files and other repositories.
	{"include.**", handledRead, "", "includes another config file"},
	{"includeif.**", handledRead, "", "the same, conditionally"},
	{"core.worktree", handledRead, "", "points the work tree elsewhere"},
	{"core.excludesfile", handledRead, "", "status reads the file it names"},
	{"core.attributesfile", handledRead, "", "every command reads the file it names"},
	{"diff.orderfile", handledRead, "", "diff reads the file it names"},
	{"mailmap.file", handledForced, "log.mailmap", "log reads the file it names; log.mailmap=false (blame ignores that: a closed blame empties mailmap.file, blame.go's blameMailmap)"},
	{"mailmap.blob", handledForced, "log.mailmap", "the same"},
	{"blame.ignorerevsfile", handledFlag, "--no-ignore-revs-file", "blame reads the file it names; --no-ignore-revs-file empties the list after the config is read"},
	{"commit.template", handledChange, "", "commit reads the file it names (gatehouse gives the message)"},
	{"init.templatedir", handledChange, "", "init and clone copy the folder it names (gatehouse runs neither)"},
	{"core.sharedrepository", handledChange, "", "file permissions of the repository"},
	{"color.**", handledFlag, "--no-color", "always-on colour (color.ui, color.diff) puts escape codes into the diff headers the filter reads; --no-color on every diff, log and show"},
	{"diff.noprefix", handledForced, "diff.noprefix", "moves the names the secret filter reads"},
	{"diff.mnemonicprefix", handledForced, "diff.mnemonicPrefix", "the same"},
	{"diff.srcprefix", handledFlag, "--src-prefix=a/", "the same; --src-prefix=a/"},
	{"diff.dstprefix", handledFlag, "--dst-prefix=b/", "the same; --dst-prefix=b/"},
	{"log.showsignature", handledForced, "log.showSignature", "runs the signature program on every log"},
	{"core.quotepath", handledForced, "core.quotePath", "how names are quoted in the diff headers the filter reads"},
}
