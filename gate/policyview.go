package gate

import "slices"

// PolicySub is one git subcommand gatehouse runs, as its row in runner.go
// declares it, for `gatehouse policy`: the flags every call of it carries
// right after its name, and those a closed call adds.
type PolicySub struct {
	Name string `json:"name"`
	// Flags go on every call, the desktop's included.
	Flags []string `json:"flags,omitempty"`
	// ClosedFlags go on every call for a phone with the switch off.
	ClosedFlags []string `json:"closedFlags,omitempty"`
	// EndOfOptions: its positional arguments follow --end-of-options.
	EndOfOptions bool `json:"endOfOptions,omitempty"`
	// Network: it may reach a remote, and keeps the SSH agent
	// (networkEnv) and, on a closed call, the options that need no
	// network are left off.
	Network bool `json:"network,omitempty"`
	// ReadOnly: it changes nothing, and runs with GIT_OPTIONAL_LOCKS=0.
	ReadOnly bool `json:"readOnly,omitempty"`
	// OwnPathspecs: it runs without GIT_LITERAL_PATHSPECS, since its own
	// child gits name pathspecs with magic; it takes no device path.
	OwnPathspecs bool `json:"ownPathspecs,omitempty"`
}

// PolicySubs lists every git subcommand gatehouse runs, by name. It reads
// the rows of runner.go, filtered.go, blob.go, stash.go, rewrite.go and blame.go; cmd/gatehouse's TestPolicyListsEverySubcommand fails
// when a row declared there is missing here.
func PolicySubs() []PolicySub {
	subs := []sub{subConfig, subStatus, subDiff, subLog, subShow, subDiffFiles, subLsTree, subDiffIndex, subLsFiles,
		subForEachRef, subRevParse, subRevList, subUpdateIndex, subReset, subRm, subRestore, subCommit, subRemote,
		subPush, subFetch, subMerge, subMergeTree, subSwitch, subBranch, subWorktree, subApply, subCheckAttr, subCatFile,
		subMergeFile, subCheckout, subHashObject, subRebase, subCherryPick, subRevert,
		subStash, subMergeBase, subTag, subBlame}
	out := make([]PolicySub, 0, len(subs))
	for _, s := range subs {
		out = append(out, PolicySub{Name: s.name, Flags: slices.Clone(s.flags), ClosedFlags: slices.Clone(s.closedFlags),
			EndOfOptions: s.endOfOptions, Network: s.network, ReadOnly: s.readOnly, OwnPathspecs: s.ownPathspecs})
	}
	slices.SortFunc(out, func(a, b PolicySub) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// PolicyGH is the environment gatehouse starts gh with (gh.go ghEnv), for
// `gatehouse policy`.
type PolicyGH struct {
	// Kept are the variables gh inherits from gatehouse's environment,
	// when set: git's allowlist (keepEnv, LC_* but LC_ALL), the SSH agent
	// (networkEnv: gh's git may push), and what gh itself needs
	// (ghKeepEnv). Nothing else reaches it.
	Kept []string `json:"kept"`
	// KeptOwnConfig are kept as well for a call in a checkout when
	// gatehouse runs in the person's own environment (no HOME of its
	// own), as for git's calls: where their git config is
	// (userConfigEnv).
	KeptOwnConfig []string `json:"keptOwnConfig"`
	// Pinned says how the checkout is pinned when the call has one.
	Pinned string `json:"pinned"`
	// Forced are set on every gh call: gh's own (ghForcedEnv) and those
	// of every git call (everyoneEnv).
	Forced []string `json:"forced"`
	// ClosedForced are added for a phone with the switch off: the closed
	// gate's environment (closedEnv).
	ClosedForced []string `json:"closedForced"`
	// GitConfig says how the git gh starts gets the forced options.
	GitConfig string `json:"gitConfig"`
}

// PolicyGHEnv reads the tables ghEnv builds gh's environment from.
func PolicyGHEnv() PolicyGH {
	g := PolicyGH{KeptOwnConfig: slices.Clone(userConfigEnv),
		Pinned:    "GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE and GIT_CEILING_DIRECTORIES name the checkout, as for its git calls; a search names the pinned repository's host in GH_HOST",
		GitConfig: "for a call in a checkout or for a phone with the switch off: every option forced on every git call, and for that phone the closed gate's and the decision's overrides, as GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, which git reads like -c"}
	for _, list := range [][]string{keepEnv, {"LC_* (not LC_ALL)"}, networkEnv, ghKeepEnv} {
		for _, name := range list {
			if !slices.Contains(g.Kept, name) {
				g.Kept = append(g.Kept, name)
			}
		}
	}
	g.Forced = slices.Clone(ghForcedEnv)
	for _, o := range everyoneEnv {
		g.Forced = append(g.Forced, o.Key+"="+o.Value)
	}
	for _, o := range closedEnv {
		g.ClosedForced = append(g.ClosedForced, o.Key+"="+o.Value)
	}
	return g
}
