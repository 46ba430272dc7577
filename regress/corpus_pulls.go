package regress

// onGitHub is a checkout whose origin is a GitHub repository and whose
// config names a clean filter for its .txt files, with a.txt changed: the
// git that gh starts in the checkout (for a merge or a pull request's
// creation) would run the filter as soon as it looks at the work tree.
func onGitHub(e *Env) {
	attributed(e, "filter")
	e.Git(e.Dir, "remote", "add", "origin", "https://github.com/octo/hello.git")
	e.Config("filter.evil.clean", e.Payload)
	e.Touch("a.txt", "b\n")
}

// plainStatus is what gh's own git does first in a checkout: look at it.
func plainStatus(e *Env) string { out, _ := e.Run(e.Dir, "status", "--porcelain"); return out }

var pullCases = []Case{
	{Name: "filter-clean-on-squash-merge", Attack: "a clean filter runs when gh's git looks at the checkout for a squash merge chosen on the page",
		Build: onGitHub, Plain: plainStatus, Method: "pull.merge",
		Params: func(e *Env) map[string]any {
			return map[string]any{"target": "$target", "number": 3, "method": "squash", "subject": "Add f (#3)"}
		},
		Want: refused(runsPrograms)},
	{Name: "filter-clean-on-draft-pull-create", Attack: "a clean filter runs when a draft pull request is opened (the branch pushed first)",
		Build: onGitHub, Plain: plainStatus, Method: "pull.create",
		Params: func(e *Env) map[string]any {
			return map[string]any{"target": "$target", "title": "Add f", "base": "main", "draft": true}
		},
		Want: refused(runsPrograms)},
}
