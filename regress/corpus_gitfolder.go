package regress

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// The git folder's own shape (docs/policy.md, "Git (`gate`)"): entries where
// git keeps its state that lead out of the checkout or stall git, objects
// borrowed from another repository in every spelling git reads, and values
// spelled the way git reads them but a home-made parser does not.

// gitFolder is part of the closed gate's refusal of the git folder.
const (
	gitFolder = "git folder holds"
	borrows   = "borrows objects"
)

// replaceWithLink swaps an entry of the checkout's git folder for a symlink.
func replaceWithLink(e *Env, target, name string) {
	if err := os.RemoveAll(filepath.Join(e.Dir, name)); err != nil {
		e.fail(err)
	}
	e.Symlink(target, name)
}

// outsideHolds says the file beside the checkout now holds marker: git
// wrote through a link.
func outsideHolds(name, marker string) func(e *Env, out string) bool {
	return func(e *Env, _ string) bool {
		data, _ := os.ReadFile(filepath.Join(e.Work, name))
		return strings.Contains(string(data), marker)
	}
}

func showTheirs(e *Env) map[string]any {
	return map[string]any{"target": "$target", "oid": e.Get("theirs")}
}

// borrowFrom builds the checkout and remembers the other repository's HEAD.
func borrowFrom(e *Env, files func(other string) map[string]string) {
	other := otherRepo(e)
	e.Var("theirs", strings.TrimSpace(e.Git(other, "rev-parse", "HEAD")))
	e.Init(nil)
	e.Write(files(other))
}

var gitFolderCases = []Case{
	{Name: "worktree-config-spelled-2", Attack: "extensions.worktreeConfig=2 (true to git) hides a filter in config.worktree from a parser that knows only true/yes/on/1",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=x\n"})
			e.Config("extensions.worktreeConfig", "2")
			e.Write(map[string]string{".git/config.worktree": "[filter \"x\"]\n\tclean = " + e.Payload + "\n"})
			e.Touch("a.txt", "b\n")
		},
		Method: "git.status", Grant: trust.View, Params: view, Want: safe},
	{Name: "commit-message-file-links-out", Attack: ".git/COMMIT_EDITMSG is a symlink, so a commit writes its message into a file outside the checkout",
		Build: func(e *Env) {
			e.Init(nil)
			e.Stage()
			e.Outside("bashrc", "# mine\n")
			replaceWithLink(e, filepath.Join(e.Work, "bashrc"), ".git/COMMIT_EDITMSG")
		},
		Method: "git.commit",
		Params: func(e *Env) map[string]any {
			return map[string]any{"target": "$target", "message": "echo WRITTEN-OUTSIDE"}
		},
		Fired: outsideHolds("bashrc", "WRITTEN-OUTSIDE"), Want: refused(gitFolder)},
	{Name: "reflog-links-out", Attack: ".git/logs/HEAD is a symlink, so switching branches appends a line with the allowlisted user.name to a file outside",
		Build: func(e *Env) {
			e.Init(nil)
			e.Config("user.name", "$(touch PWNED)")
			e.Git(e.Dir, "branch", "other")
			e.Outside("bashrc", "# mine\n")
			replaceWithLink(e, filepath.Join(e.Work, "bashrc"), ".git/logs/HEAD")
		},
		Method: "git.switchBranch",
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "branch": "other"} },
		Fired:  outsideHolds("bashrc", "$(touch PWNED)"), Want: refused(gitFolder)},
	{Name: "packs-borrowed-through-a-link", Attack: ".git/objects/pack is a symlink to another repository's packs, whose commits a view device reads by id",
		Build: func(e *Env) {
			borrowFrom(e, func(string) map[string]string { return nil })
			other := filepath.Join(e.Work, "other")
			e.Git(other, "gc", "-q")
			replaceWithLink(e, filepath.Join(other, ".git", "objects", "pack"), ".git/objects/pack")
		},
		Method: "git.show", Grant: trust.View, Params: showTheirs,
		Fired: leaks("THEIR-SECRET-MARKER"), Want: refused(gitFolder)},
	{Name: "alternates-c-quoted", Attack: "an alternates line in C quotes, which git unquotes and a trimming parser does not",
		Build: func(e *Env) {
			borrowFrom(e, func(other string) map[string]string {
				q := strings.ReplaceAll(filepath.Join(other, ".git", "objects"), "/", `\057`)
				return map[string]string{".git/objects/info/alternates": "\"" + q + "\"\n"}
			})
		},
		Method: "git.show", Grant: trust.View, Params: showTheirs,
		Fired: leaks("THEIR-SECRET-MARKER"), Want: refused(borrows)},
	{Name: "alternates-recursive", Attack: "alternates name a folder inside .git whose own alternates lead out: git follows them recursively",
		Build: func(e *Env) {
			borrowFrom(e, func(other string) map[string]string {
				return map[string]string{
					".git/objects/info/alternates":     filepath.Join(e.Dir, ".git", "hop", "objects") + "\n",
					".git/hop/objects/info/alternates": filepath.Join(other, ".git", "objects") + "\n",
				}
			})
		},
		Method: "git.show", Grant: trust.View, Params: showTheirs,
		Fired: leaks("THEIR-SECRET-MARKER"), Want: refused(borrows)},
	{Name: "info-exclude-fifo", Attack: ".git/info/exclude is a FIFO: every status blocks on it until the deadline",
		Build: func(e *Env) {
			e.Init(nil)
			p := filepath.Join(e.Dir, ".git", "info", "exclude")
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				e.fail(err)
			}
		},
		Plain: func(e *Env) string {
			if e.RunFor(time.Second, e.Dir, "status", "--porcelain") {
				return "blocked"
			}
			return ""
		},
		Fired: leaks("blocked"), Method: "git.status", Grant: trust.View, Params: view, Want: refused(gitFolder)},
	{Name: "info-attributes-dev-zero", Attack: ".git/info/attributes is a symlink to /dev/zero: git reads it forever, growing by hundreds of MB a second",
		Build: func(e *Env) {
			e.Init(nil)
			replaceWithLink(e, "/dev/zero", ".git/info/attributes")
		},
		Plain: func(e *Env) string {
			if e.RunFor(time.Second, e.Dir, "status", "--porcelain") {
				return "blocked"
			}
			return ""
		},
		Fired: leaks("blocked"), Method: "git.status", Grant: trust.View, Params: view, Want: refused(gitFolder)},
	{Name: "config-linked-to-a-tracked-file", Attack: ".git/config is a symlink to a tracked file, so a branch switch changes the config git reads behind a cached decision",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=x\n"})
			cfg, err := os.ReadFile(filepath.Join(e.Dir, ".git", "config"))
			if err != nil {
				e.fail(err)
			}
			e.Write(map[string]string{"cfg": string(cfg) + "[filter \"x\"]\n\tclean = " + e.Payload + "\n"})
			replaceWithLink(e, "../cfg", ".git/config")
			e.Touch("a.txt", "b\n")
		},
		Method: "git.status", Grant: trust.View, Params: view, Want: refused(gitFolder)},
}
