package gate

import (
	"strings"
)

// A config rule matches a family of keys and, optionally, checks the value.
//
// Patterns name a key as git lists it (section and variable lower-cased,
// the subsection as written): "core.filemode" has no subsection,
// "remote.*.url" needs one (any), "submodule.?.active" may have one, and
// "credential.**" is every key of a section.
type configRule struct {
	Pattern string
	Value   valueKind
	Reason  string
}

type valueKind int

const (
	anyValue   valueKind = iota
	boolValue            // true/false/yes/no/on/off/1/0, or a key with no value
	networkURL           // https, http, ssh, git, git+ssh, ssh+git, or scp-like host:path
	remoteRef            // a plain remote name, or a networkURL
	notFalse             // refused unless the value is a false boolean
	notEmpty             // refused unless the value is empty
)

// allowlist is the Change gate: with the switch off, a phone may change a
// checkout (stage, discard, switch, commit, push, fetch, pull, worktrees)
// only when every local and worktree config entry matches a rule here.
// Anything else refuses, including keys git adds later: a list of the keys
// that run programs missed some (docs/gate-rules.md, "A repository's config
// is allowlisted, never denylisted").
var allowlist = []configRule{
	// core: how git reads the working tree and stores files.
	{"core.repositoryformatversion", anyValue, "repository format number"},
	{"core.filemode", boolValue, "whether the executable bit is tracked"},
	{"core.bare", boolValue, "written by init; git is pinned to the checkout anyway"},
	{"core.logallrefupdates", anyValue, "whether reflogs are kept"},
	{"core.ignorecase", boolValue, "file-system case folding"},
	{"core.precomposeunicode", boolValue, "macOS Unicode normalisation of names"},
	{"core.symlinks", boolValue, "whether symlinks are checked out as links"},
	{"core.autocrlf", anyValue, "line-ending conversion (built in, no program)"},
	{"core.eol", anyValue, "line-ending conversion (built in)"},
	{"core.safecrlf", anyValue, "line-ending checks (built in)"},
	{"core.sparsecheckout", boolValue, "sparse checkout (built in)"},
	{"core.sparsecheckoutcone", boolValue, "sparse checkout cone mode"},
	{"core.untrackedcache", anyValue, "index cache of untracked files"},
	{"core.checkstat", anyValue, "which stat fields are compared"},
	{"core.trustctime", boolValue, "whether ctime is compared"},
	{"core.quotepath", boolValue, "how names are quoted in output (forced on for parsing anyway)"},
	{"core.abbrev", anyValue, "how object ids are shortened"},
	{"core.hookspath", anyValue, "allowed only because every closed call forces core.hooksPath=/dev/null"},
	{"core.fsmonitor", boolValue, "a boolean names no program, and every closed call forces it off"},
	// remotes and branches: where pushes and fetches go, over pinned transports.
	{"remote.*.url", networkURL, "a network URL; never a local path, file://, ext:: or another helper"},
	{"remote.*.pushurl", networkURL, "the same, for pushes"},
	{"remote.*.fetch", anyValue, "refspec"},
	{"remote.*.push", anyValue, "refspec"},
	{"remote.*.tagopt", anyValue, "tag following"},
	{"remote.*.prune", boolValue, "pruning on fetch"},
	{"remote.*.prunetags", boolValue, "pruning tags on fetch"},
	{"remote.*.mirror", boolValue, "mirror push"},
	{"remote.*.promisor", anyValue, "a partial clone is refused by the read rules below whatever this says"},
	{"remote.*.partialclonefilter", anyValue, "the same"},
	{"remote.*.skipdefaultupdate", boolValue, "remote update groups"},
	{"remote.*.skipfetchall", boolValue, "remote update groups"},
	{"branch.*.remote", remoteRef, "a remote name or a network URL, nothing path-like"},
	{"branch.*.pushremote", remoteRef, "the same"},
	{"branch.*.merge", anyValue, "upstream branch name"},
	{"branch.*.rebase", anyValue, "pull strategy"},
	{"branch.*.description", anyValue, "text"},
	{"submodule.*.url", networkURL, "a network URL (submodules are refused by the Change gate anyway)"},
	{"submodule.?.active", anyValue, "which submodules are active (the same)"},
	// identity and defaults.
	{"user.name", anyValue, "commit author"},
	{"user.email", anyValue, "commit author"},
	{"pull.rebase", anyValue, "pull strategy"},
	{"pull.ff", anyValue, "pull strategy"},
	{"push.default", anyValue, "which branch a push updates"},
	{"push.autosetupremote", boolValue, "setting the upstream on first push"},
	{"init.defaultbranch", anyValue, "name of the first branch"},
	{"extensions.worktreeconfig", boolValue, "per-worktree config, which the gate reads as well"},
	{"extensions.objectformat", anyValue, "SHA-1 or SHA-256"},
	{"extensions.refstorage", anyValue, "ref backend"},
	{"extensions.partialclone", anyValue, "a non-empty value is refused by the read rules below"},
	{"fetch.prune", boolValue, "pruning on fetch"},
	{"fetch.prunetags", boolValue, "pruning tags on fetch"},
	{"commit.gpgsign", boolValue, "a boolean only, and every closed call forces signing off"},
	{"rerere.enabled", boolValue, "reuse recorded conflict resolutions (built in)"},
	{"rerere.autoupdate", boolValue, "the same"},
	{"merge.conflictstyle", anyValue, "how conflicts are written (built in)"},
	{"diff.algorithm", anyValue, "built-in diff algorithm"},
	{"diff.renames", anyValue, "built-in rename detection"},
	{"diff.renamelimit", anyValue, "rename detection bound"},
	{"status.showuntrackedfiles", anyValue, "gatehouse asks for every untracked file anyway"},
	{"advice.**", boolValue, "hints git prints"},
	// gc: only the keys that name no program (gc.recentObjectsHook does:
	// regress case gc-recent-objects-hook).
	{"gc.auto", anyValue, "auto maintenance is forced off for closed calls"},
	{"gc.autopacklimit", anyValue, "gc threshold"},
	{"gc.autodetach", boolValue, "gc in the background"},
	{"gc.reflogexpire", anyValue, "expiry"},
	{"gc.reflogexpireunreachable", anyValue, "expiry"},
	{"gc.pruneexpire", anyValue, "expiry"},
	{"gc.worktreepruneexpire", anyValue, "expiry"},
	{"gc.packrefs", anyValue, "packing refs"},
	{"gc.aggressivewindow", anyValue, "packing"},
	{"gc.aggressivedepth", anyValue, "packing"},
	{"gc.bigpackthreshold", anyValue, "packing"},
	{"gc.logexpiry", anyValue, "expiry"},
	{"gc.*.reflogexpire", anyValue, "expiry per ref pattern"},
	{"gc.*.reflogexpireunreachable", anyValue, "expiry per ref pattern"},
	// git lfs install writes these; the filters it needs live in the user's
	// own global config.
	{"lfs.repositoryformatversion", anyValue, "written by git lfs install"},
	{"lfs.*.access", anyValue, "written by git lfs install"},
}

// readRefusals is the Read gate: with the switch off, even status, diff,
// branches and log refuse a checkout whose local or worktree config has any
// of these, because a read could reach them (docs/gate-rules.md, "Programs
// that run for the network" and "Config that moves or reads files
// elsewhere"; git's documentation for the file keys).
var readRefusals = []configRule{
	{"core.sshcommand", anyValue, "names the ssh program a lazy fetch in a partial clone would run"},
	{"core.askpass", anyValue, "names a program git runs to ask for a password"},
	{"credential.**", anyValue, "credential helpers are programs"},
	{"extensions.partialclone", notEmpty, "a partial clone fetches missing objects during reads"},
	{"remote.*.promisor", notFalse, "the same"},
	{"include.**", anyValue, "an included file defines keys the listing does not show, so they could not be switched off"},
	{"includeif.**", anyValue, "the same"},
	{"core.worktree", anyValue, "points status and diff at a folder outside the checkout"},
	{"core.excludesfile", anyValue, "status reads the file it names, anywhere: a FIFO there hangs it"},
	{"core.attributesfile", anyValue, "every command reads the file it names, anywhere"},
	{"diff.orderfile", anyValue, "diff reads the file it names, anywhere"},
}

// matchRule reports whether key (as git lists it) is in the rule's family.
func matchRule(pattern, key string) bool {
	psec, prest, _ := strings.Cut(pattern, ".")
	sec, rest, ok := strings.Cut(key, ".")
	if !ok || psec != sec {
		return false
	}
	if prest == "**" {
		return true
	}
	name := rest[strings.LastIndexByte(rest, '.')+1:]
	hasSub := strings.Contains(rest, ".")
	switch {
	case strings.HasPrefix(prest, "*."):
		return hasSub && name == prest[2:]
	case strings.HasPrefix(prest, "?."):
		return name == prest[2:]
	}
	return !hasSub && name == prest
}

// valueOK checks an entry's value against the rule's kind. Booleans are
// read as git reads them (bools, from gitsyntax.go).
func valueOK(kind valueKind, e entry, bools gitBools) bool {
	switch kind {
	case boolValue:
		_, ok := bools.read(e)
		return ok
	case networkURL:
		return isNetworkURL(e.value)
	case remoteRef:
		return isRemoteName(e.value) || isNetworkURL(e.value)
	}
	return true
}

// refuses reports whether a read rule refuses this entry.
func refuses(r configRule, e entry, bools gitBools) bool {
	switch r.Value {
	case notFalse:
		b, ok := bools.read(e)
		return !ok || b
	case notEmpty:
		return e.hasValue && e.value != ""
	}
	return true
}

// isNetworkURL accepts a plain network URL or an scp-like host:path, and
// nothing that would start a remote helper, reach a local path, or put an
// option where ssh reads a host.
func isNetworkURL(u string) bool {
	if u == "" || strings.HasPrefix(u, "-") || strings.Contains(u, "::") ||
		strings.ContainsAny(u, "\x00\n\r\t ") {
		return false
	}
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		switch strings.ToLower(scheme) {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		default:
			return false
		}
		host := rest
		if i := strings.IndexAny(host, "/"); i >= 0 {
			host = host[:i]
		}
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		return host != "" && !strings.HasPrefix(host, "-") && !strings.HasPrefix(host, "[-")
	}
	// scp-like: [user@]host:path, with no slash before the colon. A one-
	// letter host is a Windows drive (C:path), which is a local path.
	colon := strings.IndexByte(u, ':')
	if colon < 0 || strings.Contains(u[:colon], "/") {
		return false
	}
	host := u[:colon]
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	return len(host) >= 2 && !strings.HasPrefix(host, "-") && !strings.HasPrefix(host, "[-")
}

// isRemoteName accepts a plain remote name: not ".", nothing path-like.
func isRemoteName(s string) bool {
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, "-") || strings.HasPrefix(s, ".") {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
