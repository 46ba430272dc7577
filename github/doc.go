// Package github is GitHub as gatehouse offers it to a device: the
// repository a checkout's remotes name (as gh resolves it), its issues,
// pull requests and CI runs in pages, search, comments, reviews, merges, a
// pull request's creation, the account's repositories, and clones into
// folders claimed for them. Each is one gh command of a fixed shape:
// gatehouse picks the subcommand, the --json fields and the repository; a
// device gives only a number, a state word, a branch name (validated as
// git's), and text that goes on stdin or after "--".
//
// This package starts no process. gh is started by gate, through the
// launcher that starts git (gate/gh.go): the gate's decision for the
// checkout first (Repo.GH), then gh inside the same walls, environment
// allowlist, memory bound and output bound as a git, stopped by its process
// group. What the answer means on GitHub is this package's; what may run,
// and what a device may see of a patch, stays gate's. docs/github.md tells
// the whole story.
package github
