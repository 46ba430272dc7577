// Package gate is the only place gatehouse starts git, and the programs that
// run git: it starts git (run, runner.go) and GitHub's gh (runGH, gh.go),
// both through one function (spawn, spawn.go: the process group, the
// deadline and SIGTERM before SIGKILL, the output bounds, the memory
// budget, the start inside the walls), and, once (at the first closed call,
// or for doctor), git init in a temporary folder and git --version as the
// kernel wall's self-test (probe, ptraceWorks in confine_linux.go), on no
// repository's content. Nothing else in gatehouse starts either
// (internal/invariants checks both).
//
// GitHub's meaning (repositories, lists, pull requests, clones) is package
// github's; it reaches gh only through Repo.GH and RunGH (gh.go).
//
// Open a served folder's Repo once (Open validates where its git folder is:
// a real .git inside it, or a linked worktree of a served checkout; a
// symlinked .git, a commondir or alternates leading elsewhere are refused).
// Every operation then takes a trust.Trust, decides its gate once before its
// first git call, and runs git only through run, which:
//
//   - pins the repository (GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR, the
//     ceiling), so git never discovers another;
//   - rebuilds the child's environment from an allowlist, so no inherited
//     GIT_* and no variable naming a program survives;
//   - puts every argument in a fixed place: ref names and object ids are
//     validated and follow --end-of-options, paths follow "--" with
//     GIT_LITERAL_PATHSPECS set;
//   - bounds output and time, killing the whole process group on expiry;
//   - for a closed trust (a phone with the switch off) adds the forced
//     options of forced.go, each with its reason.
//
// The gates, for a closed trust: the Read gate (status, diff, log, show,
// branches) refuses a config with any key of readRefusals and switches off
// every filter the config defines; the Change gate (stage, discard, commit,
// push, fetch, pull, switch, worktrees) also refuses unless every local and
// worktree entry is on the allowlist, and refuses submodules. Decisions come
// from git's own config listing, cached by the config files' identity.
// programKeys records, from git's documentation, how each key that runs a
// program, reaches the network or names a file is kept from a phone.
//
// Diffs for a device leave out secret files (below the full grant) and
// hard-linked files by every name a section carries; untracked files are
// previewed from fsguard reads, never through git.
//
// The user's own config (global, system, included files) is read too, with
// its scopes (decide.go, addUserDrivers): a driver it defines is switched
// off like the repository's own, since the repository's attributes select
// it by name; files that go through a switched-off filter (Git LFS) are
// left out of work-tree diffs and refused for stage and discard by name
// (filtered.go). The user's SSH and credential helper still serve push and
// fetch.
//
// Known limits: a closed switch, pull or worktree writes a filtered file
// as its clean bytes (an LFS pointer), since the smudge is off. git before
// 2.44 has no GIT_NO_LAZY_FETCH; a partial clone is refused instead. git
// opens a work tree's .gitignore and .gitattributes itself: a FIFO there
// stalls it until the runner sees the wait (within a second where /proc
// names it, at the deadline elsewhere), a device there is read until the
// deadline or the memory bound; the refusal names the file (failures.go).
package gate
