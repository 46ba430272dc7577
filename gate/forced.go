package gate

// Option is one -c option (or environment variable) gatehouse passes to
// git, and why. Command-line configuration outranks every config file, and
// git hands it to the git processes it starts (GIT_CONFIG_PARAMETERS), so a
// repository's own config cannot undo it. docs/gate-rules.md tells the
// attack behind each family of options and names the test that proves it.
type Option struct {
	Key, Value, Reason string
}

// everyone is forced on every git call, the desktop's included.
var everyone = []Option{
	{"safe.bareRepository", "explicit", "never treat a folder inside the checkout as a bare repository (git is pinned to one repository anyway)"},
	{"color.ui", "false", "a repository's color.ui=always would put escape codes in front of the diff lines the secret filter reads"},
	{"core.quotePath", "true", "names with unusual bytes are always quoted the one way the diff parser expects"},
	{"diff.noprefix", "false", "diff headers always carry a/ and b/, so the secret filter reads the right names"},
	{"diff.mnemonicPrefix", "false", "the same: no i/, w/, c/ prefixes instead of a/ and b/"},
	{"i18n.logOutputEncoding", "UTF-8", "log and show convert their whole formatted output to this encoding (and to i18n.commitEncoding when it is unset): UTF-16 there puts a NUL after every byte of the history parser's ids and separators, and emptied the history"},
	{"log.follow", "false", "a file's history is the commits that changed that path, as Log says; log.follow=true would turn on --follow and guess renames through the whole history"},
}

// closedAll is forced on every call for a closed gate (a phone with the
// switch off), whatever the operation.
var closedAll = []Option{
	{"core.hooksPath", "/dev/null", "no hook the checkout names runs: pre-commit, post-checkout, reference-transaction, every other"},
	{"core.fsmonitor", "false", "core.fsmonitor can name a program that status runs"},
	{"protocol.allow", "never", "only the transports listed below; GIT_ALLOW_PROTOCOL pins the same list over any protocol.<name>.allow"},
	{"protocol.https.allow", "always", "HTTPS remotes keep working"},
	{"protocol.http.allow", "always", "HTTP remotes keep working"},
	{"protocol.ssh.allow", "always", "SSH remotes keep working (with the user's own ssh)"},
	{"protocol.git.allow", "always", "git:// remotes keep working"},
	{"protocol.file.allow", "never", "a push into a local repository runs that repository's receive hooks, with the phone's -c options cleared"},
	{"protocol.ext.allow", "never", "ext:: runs an arbitrary command as a transport"},
	{"maintenance.auto", "false", "no auto maintenance after a commit: a gc hook in any config would run"},
	{"gc.auto", "0", "the same, for git versions before maintenance"},
	{"rerere.enabled", "false", "rerere replays a resolution from the git folder's rr-cache into the work tree, and git follows a link there: a postimage linked to a file outside the checkout put that file's bytes in a merged file. The phone resolves what git.conflicts shows it"},
	{"diff.ignoreSubmodules", "all", "a submodule carries its own config, which the gate never reads"},
	{"status.submoduleSummary", "false", "the same"},
	{"submodule.recurse", "false", "the same: no command recurses into a submodule"},
	{"push.recurseSubmodules", "no", "the same, for pushes"},
	{"fetch.recurseSubmodules", "false", "the same, for fetches"},
	{"commit.gpgSign", "false", "no signing program runs for a phone"},
	{"tag.gpgSign", "false", "the same, for tags"},
	{"tag.forceSignAnnotated", "false", "git tag -m signs the tag when this is set, whatever --no-sign says"},
	{"push.gpgSign", "false", "the same, for signed pushes"},
	{"log.showSignature", "false", "showing a signature runs gpg.program or gpg.ssh.program"},
	{"log.mailmap", "false", "log would read .mailmap and mailmap.file: a FIFO there hangs it, and mailmap.file names any file"},
	// Rename detection ends in an exhaustive search over every unpaired
	// source and destination, O(N²) in the files: git skips it when N
	// passes the limit, and a limit of 0 means no limit, which a hostile
	// repository sets to spend a diff's whole deadline.
	{"diff.renameLimit", "1000", "git's own default: diff, show and log skip the exhaustive rename search past 1000 files (a repository's 0 would be unlimited)"},
	{"status.renameLimit", "1000", "status and commit read it over diff.renameLimit (which they ignore once it is set), so it gets the same bound"},
	{"merge.renameLimit", "7000", "a merge (pull, a worktree's merge) reads it over diff.renameLimit; 7000 is git's own default when neither is set"},
	// The memory bound (confine.go) holds every closed git child under
	// RLIMIT_AS, 256 MiB at the least; these keep git's own caches well
	// inside the smallest bound, so a big repository still works under it.
	{"core.packedGitWindowSize", "32m", "a pack is mapped in 32 MiB windows, not 1 GiB ones: a multi-GiB pack fits under the memory bound"},
	{"core.packedGitLimit", "128m", "at most 128 MiB of pack windows mapped at once; git unmaps the least used first"},
	{"core.deltaBaseCacheLimit", "32m", "the cache of inflated delta bases stays small"},
	{"core.bigFileThreshold", "32m", "a blob over 32 MiB is streamed where git can (checkout, index-pack), never deltified, and shown as binary by diff, so it is not held whole in memory twice"},
	{"pack.windowMemory", "64m", "a push's delta search holds at most 64 MiB of objects"},
	{"pack.deltaCacheSize", "32m", "and caches at most 32 MiB of deltas (default 256 MiB)"},
	{"pack.threads", "1", "one delta-search thread: window memory is per thread, so the two bounds above are the total"},
}

// closedOffline is forced for a closed gate on calls that need no network:
// no credential program or askpass program runs.
var closedOffline = []Option{
	{"credential.helper", "", "an empty helper clears the list: no credential program runs"},
	{"core.askPass", "", "no askpass program runs"},
}

// closedEnv is added to the environment for a closed gate.
var closedEnv = []Option{
	{"GIT_ALLOW_PROTOCOL", "https:http:ssh:git", "pins the transports over any protocol.<name>.allow a config names"},
	{"MALLOC_ARENA_MAX", "2", "glibc reserves 64 MiB of address space per malloc arena, one per thread up to 8 per core; git's threaded index preload would spend the memory bound on reservations"},
	{"GIT_NO_LAZY_FETCH", "1", "a partial clone never fetches a missing object behind the phone's back (git 2.44 and later; older gits rely on the partial-clone refusal)"},
}

// everyoneEnv is added to the environment of every call.
var everyoneEnv = []Option{
	{"GIT_LITERAL_PATHSPECS", "1", "a path from a device is a path, never :(magic)"},
	{"GIT_TERMINAL_PROMPT", "0", "nothing waits for a password on a terminal nobody sees"},
	{"GIT_EDITOR", ":", "no editor runs (':' is the shell's no-op)"},
	{"GIT_SEQUENCE_EDITOR", ":", "the same, for rebase todo lists"},
	{"LC_ALL", "C", "messages and formats do not change with the user's locale"},
}

// keepEnv is the allowlist of variables a git process inherits; everything
// else is dropped before gatehouse adds its own, so no inherited GIT_* and no
// variable naming a program (GIT_SSH, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF,
// GIT_PAGER, PAGER, EDITOR, VISUAL, GIT_ASKPASS, SSH_ASKPASS...) survives.
var keepEnv = []string{"HOME", "PATH", "USER", "LANG", "TZ", "TMPDIR"}

// networkEnv is kept only for pushes, fetches and pulls: they use the
// user's own SSH agent.
var networkEnv = []string{"SSH_AUTH_SOCK"}

// userConfigEnv moves where git reads the user's own config, and through
// XDG_CONFIG_HOME its global attributes and ignore files. gatehouse's git
// keeps them when gatehouse runs in the user's own environment, so that it
// reads the config the user's own git reads: a filter defined in
// $XDG_CONFIG_HOME/git/config (Git LFS's, say) was unknown to the gate's
// git, so a phone staged an LFS file's content where its pointer belongs and
// the desktop's diff ran no filter. With a home of its own (the regression
// runner) gatehouse keeps none of them, so the user's config stays out.
var userConfigEnv = []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"}
