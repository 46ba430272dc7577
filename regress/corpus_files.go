package regress

import (
	"path/filepath"
	"strings"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

const (
	keyMarker    = "PRIVATE-KEY-MARKER"
	secretMarker = "SECRET-ENV-MARKER"
)

// leaks says the output holds the given marker.
func leaks(marker string) func(e *Env, out string) bool {
	return func(e *Env, out string) bool { return strings.Contains(out, marker) }
}

// outsideKey writes a private key beside the checkout.
func outsideKey(e *Env) string { return e.Outside("id_rsa", keyMarker+"\n") }

func readPath(path string) func(e *Env) map[string]any {
	return func(e *Env) map[string]any { return map[string]any{"target": "$target", "path": path} }
}

// secretChange is a tracked .env changed to hold a secret, with a config
// option that moves the names the secret filter reads.
func secretChange(kv ...string) func(e *Env) {
	return func(e *Env) {
		e.Init(map[string]string{".env": "A=1\n"})
		e.Config(kv...)
		e.Write(map[string]string{".env": "A=" + secretMarker + "\n"})
	}
}

// plainDiffHidesTheName proves the option moved the name: plain git's diff
// shows the secret, under a header a filter keyed on
// "diff --git a/<name>" would not recognise.
func plainDiffHidesTheName(e *Env, out string) bool {
	return strings.Contains(out, secretMarker) && !strings.HasPrefix(out, "diff --git a/.env b/.env\n")
}

var fileCases = []Case{
	{Name: "diff-noprefix-hides-a-secret", Attack: "diff.noprefix drops the a/ b/ the secret filter reads, so a .env diff reaches a view phone",
		Build: secretChange("diff.noprefix", "true"), Method: "git.diff", Grant: trust.View, Params: view,
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "diff"); return out }, Fired: func(e *Env, out string) bool {
			if strings.HasPrefix(out, "{") {
				return strings.Contains(out, secretMarker)
			}
			return plainDiffHidesTheName(e, out)
		}, Want: safe},
	{Name: "diff-mnemonic-prefix-hides-a-secret", Attack: "diff.mnemonicPrefix swaps a/ b/ for i/ w/",
		Build: secretChange("diff.mnemonicPrefix", "true"), Method: "git.diff", Grant: trust.View, Params: view,
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "diff"); return out }, Fired: func(e *Env, out string) bool {
			if strings.HasPrefix(out, "{") {
				return strings.Contains(out, secretMarker)
			}
			return plainDiffHidesTheName(e, out)
		}, Want: safe},
	{Name: "colour-always-hides-a-secret", Attack: "color.diff=always puts escape codes before the diff headers the filter reads",
		Build: secretChange("color.diff", "always"), Method: "git.diff", Grant: trust.View, Params: view,
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "diff"); return out }, Fired: func(e *Env, out string) bool {
			if strings.HasPrefix(out, "{") {
				return strings.Contains(out, secretMarker)
			}
			return plainDiffHidesTheName(e, out)
		}, Want: safe},
	{Name: "hard-link-to-a-key-read", Attack: "a hard link named notes.txt carries ~/.ssh/id_rsa's bytes with no secret name and no symlink",
		Build: func(e *Env) { e.Init(nil); e.Link(outsideKey(e), "notes.txt") },
		Plain: func(e *Env) string { return e.ReadPlain("notes.txt") }, Fired: leaks(keyMarker),
		Method: "files.read", Grant: trust.View, Params: readPath("notes.txt"), Want: refused(hardLinked)},
	{Name: "hard-link-to-a-key-stage", Attack: "staging a hard link puts the key's bytes in the index, for a later diff or push",
		Build: func(e *Env) { e.Init(nil); e.Link(outsideKey(e), "notes.txt") },
		Plain: func(e *Env) string {
			e.Run(e.Dir, "add", "notes.txt")
			out, _ := e.Run(e.Dir, "diff", "--cached")
			return out
		},
		Fired: leaks(keyMarker), Method: "git.stage", Grant: trust.Control,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "all": true} },
		Want:   refused(hardLinked)},
	{Name: "hard-link-to-a-key-diff", Attack: "the untracked preview of a hard link shows the key",
		Build: func(e *Env) { e.Init(nil); e.Link(outsideKey(e), "notes.txt") },
		Plain: func(e *Env) string {
			e.Run(e.Dir, "add", "-N", "notes.txt")
			out, _ := e.Run(e.Dir, "diff")
			return out
		},
		Fired: leaks(keyMarker), Method: "git.diff", Grant: trust.Full, Params: view, Want: safe},
	{Name: "hard-link-to-a-key-commit", Attack: "a hard link staged on the computer is committed (and later pushed) from the phone",
		Build: func(e *Env) { e.Init(nil); e.Link(outsideKey(e), "notes.txt"); e.Git(e.Dir, "add", "notes.txt") },
		Fired: func(e *Env, out string) bool {
			log, _ := e.Run(e.Dir, "log", "-p", "-1")
			return strings.Contains(log, keyMarker) && strings.Contains(log, "from the phone")
		},
		Method: "git.commit", Params: commit, Want: refused("won't commit it from your phone")},
	{Name: "symlink-to-a-key-read", Attack: "readme.txt is a symlink to a private key outside the checkout",
		Build: func(e *Env) { e.Init(nil); e.Symlink(outsideKey(e), "readme.txt") },
		Plain: func(e *Env) string { return e.ReadPlain("readme.txt") }, Fired: leaks(keyMarker),
		Method: "files.read", Grant: trust.View, Params: readPath("readme.txt"), Want: refused(secretFile)},
	{Name: "symlink-to-a-key-image", Attack: "logo.png is a symlink to a private key; the image reader sends raw bytes",
		Build: func(e *Env) { e.Init(nil); e.Symlink(outsideKey(e), "logo.png") },
		Plain: func(e *Env) string { return e.ReadPlain("logo.png") }, Fired: leaks(keyMarker),
		Method: "files.image", Grant: trust.View,
		Params: func(e *Env) map[string]any {
			return map[string]any{"target": "$target", "path": "logo.png", "variant": "full"}
		},
		Want: refused(secretFile)},
	{Name: "symlink-to-a-secret-grep", Attack: "grep follows notes.txt, a symlink to the checkout's .env",
		Build: func(e *Env) {
			e.Init(map[string]string{".env": "TOKEN=" + secretMarker + "\n"})
			e.Symlink(".env", "notes.txt")
		},
		Plain: func(e *Env) string { return e.ReadPlain("notes.txt") }, Fired: leaks(secretMarker),
		Method: "files.grep", Grant: trust.View,
		Params: func(e *Env) map[string]any { return map[string]any{"target": "$target", "query": "TOKEN"} }, Want: safe},
	{Name: "symlink-to-dot-git", Attack: "g is a symlink to .git, so g/config reads the repository's config",
		Build: func(e *Env) { e.Init(nil); e.Symlink(".git", "g") },
		Plain: func(e *Env) string { return e.ReadPlain("g/config") }, Fired: leaks("[core]"),
		Method: "files.read", Grant: trust.Full, Params: readPath("g/config"), Want: refused("inside .git")},
	{Name: "dot-git-read", Attack: "a path into .git reads the repository's config and hooks",
		Build: func(e *Env) { e.Init(nil) },
		Plain: func(e *Env) string { return e.ReadPlain(".git/config") }, Fired: leaks("[core]"),
		Method: "files.read", Grant: trust.Full, Params: readPath(".git/config"), Want: refused("inside .git")},
	{Name: "dot-git-other-spelling", Attack: ".GIT is .git on a file system that folds case (simulated here with a link)",
		Build: func(e *Env) { e.Init(nil); e.Symlink(".git", ".GIT") },
		Plain: func(e *Env) string { return e.ReadPlain(".GIT/config") }, Fired: leaks("[core]"),
		Method: "files.read", Grant: trust.Full, Params: readPath(".GIT/config"), Want: refused("inside .git")},
	{Name: "fifo-named-like-source", Attack: "main.go is a FIFO: reading it blocks forever",
		Build: func(e *Env) {
			e.Init(nil)
			if err := unix.Mkfifo(filepath.Join(e.Dir, "main.go"), 0o644); err != nil {
				e.fail(err)
			}
		},
		Plain: func(e *Env) string { return e.ReadPlain("main.go") }, Fired: func(e *Env, out string) bool { return out == "blocked" },
		Method: "files.read", Grant: trust.Full, Params: readPath("main.go"), Want: refused("not a regular file")},
	{Name: "fifo-named-gitignore", Attack: ".gitignore is a FIFO: every status blocks on it",
		Build: func(e *Env) {
			e.Init(nil)
			if err := unix.Mkfifo(filepath.Join(e.Dir, ".gitignore"), 0o644); err != nil {
				e.fail(err)
			}
		},
		Plain: func(e *Env) string {
			if e.RunFor(2e9, e.Dir, "status", "--porcelain") {
				return "blocked"
			}
			return ""
		},
		Fired:  func(e *Env, out string) bool { return out == "blocked" },
		Method: "git.status", Grant: trust.View, Params: view,
		Want: Want{Code: rpc.CodeNotRun, Sentence: "took too long"}},
}
