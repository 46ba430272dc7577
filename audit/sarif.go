package audit

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RuleInfo describes one rule id, for SARIF and the docs.
type RuleInfo struct {
	ID    string
	Group string // the text report's heading
	Level Level
	Short string
	Help  string
}

// Rules is every rule the audit reports, by stable id, in the text report's
// order: grouped, the worst first.
var Rules = []RuleInfo{
	{"config-read-refused", gitConfig, Error, "The repository's git config makes the Read gate refuse it",
		"A key such as core.sshCommand, core.askPass or credential.* could run a program even during a status or diff, so a phone with Full access off cannot read this checkout at all. Remove the key from .git/config, or keep it in your own global config."},
	{"config-change-refused", gitConfig, Warning, "The repository's git config makes the Change gate refuse it",
		"A key that is not on gatehouse's allowlist of inert keys (a filter, a driver, url.*, core.editor, or a key git added later) means a phone with Full access off cannot stage, commit or push here."},
	{"config-include", gitConfig, Error, "The git config includes another file",
		"include.path and includeIf pull in keys the config listing does not show, so they could not be switched off."},
	{"config-too-large", gitConfig, Error, "The git config is too large to check", "The gate refuses a config over 1 MiB."},
	{"partial-clone", gitConfig, Error, "The repository is a partial clone",
		"A partial clone fetches missing objects, through programs its config names, even during reads."},
	{"core-worktree", gitConfig, Error, "core.worktree points the work tree elsewhere", "Status and diff would read a folder outside the checkout."},
	{"submodules", gitConfig, Warning, "The repository has submodules",
		"A submodule carries its own config, which the gate never reads; changes from a phone with Full access off are refused."},
	{"git-dir-redirected", gitConfig, Error, "The .git folder is a link or leads elsewhere",
		"A symlinked .git, a planted commondir, or a worktree of a repository nobody chose to serve: gatehouse will not serve the folder."},
	{"git-dir-shape", gitConfig, Error, "The git folder holds a link, a special file or borrowed objects",
		"A symlink, FIFO, device or hard-linked file where git keeps its state would move git's reads or writes outside the checkout or stall it, and objects/info/alternates makes git read another folder's objects: a phone with Full access off cannot use git here."},
	{"secret-tracked", secretFiles, Error, "A secret file is tracked",
		"The file's name matches a secret rule (credentials, keys, tokens, histories) and it is in the index or in HEAD: everyone who clones the repository has it. Remove it from history and rotate what it holds."},
	{"secret-file", secretFiles, Warning, "A secret file is in the folder", "A phone below the full grant sees its name, never its content."},
	{"attributes-driver", attributes, Warning, ".gitattributes makes files use a driver the repository's config defines",
		"The repository chooses the filter, diff or merge program git runs; gatehouse switches it off or refuses for a phone with Full access off."},
	{"attributes-user-driver", attributes, Warning, ".gitattributes makes files use a driver your own config defines",
		"The repository's attributes select by name a filter, diff or merge driver that the system or global git config, or a file it includes (under an includeIf condition too), defines (Git LFS's, for one): the repository chooses the files git runs that program on. The finding names each entry with its scope and file, as git config --show-scope --show-origin does; gatehouse switches the driver off or refuses for a phone with Full access off."},
	{"attributes-undefined-driver", attributes, Note, ".gitattributes names a driver no config defines",
		"git runs no program for it (a name git knows itself, such as merge=union or diff=python, picks a built-in behaviour). A driver of that name added to any config later, your own included, would run on these files."},
	{"hard-link", tree, Warning, "A file is hard-linked", "A hard link carries another file's bytes under an innocent name; gatehouse never opens, stages or commits it from a phone."},
	{"special-file", tree, Warning, "A FIFO, socket or device is in the tree", "Reading one can block or run a driver; gatehouse never opens them."},
	{"symlink-outside", tree, Warning, "A symlink leads out of the tree", "gatehouse never follows it from a phone."},
	{"symlink-secret", tree, Error, "A symlink leads to a secret file", "A harmless-looking name that resolves to a secret; gatehouse treats it as the secret."},
	{"symlink-git", tree, Error, "A symlink leads into .git", "Reading through it would expose the repository's config and hooks."},
	{"symlink-loop", tree, Note, "A symlink chain is too long to follow", "gatehouse stops after 40 links."},
	{"git-lookalike", tree, Error, "A name is .git on another file system", ".GIT, .git. and git~1 are .git on macOS or Windows, where checking them out can overwrite the repository's config or hooks."},
	{"nested-git", tree, Note, "A repository is nested inside this one", "gatehouse serves only the top one."},
	{"control-char", tree, Warning, "A name holds a control character", "It can fool a terminal or a tool that prints it."},
	{"leading-dash", tree, Note, "A name starts with a dash", "A tool that puts it where an option goes reads it as one."},
	{"secret-name-public-content", secretFiles, Note, "A secret-named file holds only public material",
		"The name matches a secret rule, but the blob git holds is a certificate, a public key or a JSON with no private key; or, for a rule that matches a word anywhere in a name (secrets, api_key, password), the file is empty or is a git ref or reflog kept where git keeps them (a test repository's refs/heads/remove-secrets): nothing to rotate. Only the audit reads it; a phone below the full grant still sees its name, never its content."},
	{"config-credential", gitConfig, Error, "The git config stores a credential",
		"An http.<url>.extraheader with an Authorization header, or a remote URL with a password in it, keeps a token in .git/config: anything that reads the git folder, and every copy of it, has it. The audit shows it masked. Remove it and rotate it; keep it in a credential helper (actions/checkout: persist-credentials: false)."},
}

// The text report's groups.
const (
	gitConfig   = "git config"
	secretFiles = "secret files"
	attributes  = ".gitattributes"
	tree        = "tree"
)

// ruleIndex finds a rule's place in Rules.
var ruleIndex = func() map[string]int {
	m := map[string]int{}
	for i, r := range Rules {
		m[r.ID] = i
	}
	return m
}()

// SARIF renders a report as SARIF 2.1.0 for code-scanning dashboards: each
// finding a result with its rule id, level, message and file location, and a
// partial fingerprint so a dashboard tracks it across runs.
func SARIF(r *Report, version string) ([]byte, error) {
	type text struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID                   string            `json:"id"`
		ShortDescription     text              `json:"shortDescription"`
		FullDescription      text              `json:"fullDescription"`
		Help                 text              `json:"help"`
		DefaultConfiguration map[string]string `json:"defaultConfiguration"`
	}
	type region struct {
		StartLine int `json:"startLine"`
	}
	type physical struct {
		ArtifactLocation map[string]string `json:"artifactLocation"`
		Region           *region           `json:"region,omitempty"`
	}
	type location struct {
		PhysicalLocation physical `json:"physicalLocation"`
	}
	type result struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               Level             `json:"level"`
		Message             text              `json:"message"`
		Locations           []location        `json:"locations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
	}
	rules := make([]rule, len(Rules))
	for i, ri := range Rules {
		rules[i] = rule{ri.ID, text{ri.Short}, text{ri.Help}, text{ri.Help}, map[string]string{"level": string(ri.Level)}}
	}
	results := []result{}
	for _, f := range r.Findings {
		res := result{RuleID: f.Rule, RuleIndex: ruleIndex[f.Rule], Level: f.Level, Message: text{f.Summary()},
			PartialFingerprints: map[string]string{"gatehouse/v1": f.Fingerprint}}
		if f.Path != "" {
			loc := location{physical{ArtifactLocation: map[string]string{"uri": uriOf(f.Path)}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &region{f.Line}
			}
			res.Locations = []location{loc}
		}
		results = append(results, res)
	}
	log := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{
				"name": "gatehouse", "version": version, "informationUri": "https://github.com/gatehouse/gatehouse",
				"rules": rules,
			}},
			"results": results,
		}},
	}
	return json.MarshalIndent(log, "", "  ")
}

// Summary is the finding as a whole sentence that says what it is about,
// for a dashboard that shows the message apart from the location (the
// audit's report, read on the computer; not a refusal a device is sent):
// "`certs/server.key` is tracked and matches …". A message that starts
// with a verb follows the path; any other follows it after a colon.
func (f Finding) Summary() string {
	if f.Path == "" {
		return f.Message
	}
	about := "`" + f.Path + "`"
	if f.Line > 0 {
		about = fmt.Sprintf("`%s` line %d", f.Path, f.Line)
	}
	verb, _, _ := strings.Cut(f.Message, " ")
	switch verb {
	case "is", "makes", "declares", "leads", "matches":
		return about + " " + f.Message
	}
	return about + ": " + f.Message
}

// uriOf writes a relative path as a URI reference: bytes outside the safe
// set are percent-encoded.
func uriOf(path string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '.' || c == '-' || c == '_' || c == '~' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// Fails reports whether the report fails at threshold (error, warning or
// never).
func (r *Report) Fails(threshold Level) bool {
	for _, f := range r.Findings {
		if f.Level == Error && (threshold == Error || threshold == Warning) || f.Level == Warning && threshold == Warning {
			return true
		}
	}
	return false
}
