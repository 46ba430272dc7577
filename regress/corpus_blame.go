package regress

import (
	"path/filepath"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

// blameA is the params of a blame of a.txt at HEAD.
func blameA(e *Env) map[string]any { return map[string]any{"target": "$target", "path": "a.txt"} }

// plainBlame is git blame of a.txt without gatehouse, given up after two
// seconds ("blocked": it waited on a FIFO).
func plainBlame(e *Env) string {
	if e.RunFor(2e9, e.Dir, "blame", "--porcelain", "HEAD", "--", "a.txt") {
		return "blocked"
	}
	out, _ := e.Run(e.Dir, "blame", "--porcelain", "HEAD", "--", "a.txt")
	return out
}

// fifoBeside makes a FIFO in Work and returns its path.
func fifoBeside(e *Env, name string) string {
	p := filepath.Join(e.Work, name)
	if err := unix.Mkfifo(p, 0o644); err != nil {
		e.fail(err)
	}
	return p
}

// A name the mailmap gives the case's author, which appears in blame's
// author field only if git read the file holding it.
const mappedName = "MAILMAP-MARKER Name"

var blameCases = []Case{
	{Name: "blame-ignore-revs-fifo", Attack: "blame.ignoreRevsFile names a FIFO: git blame waits on it forever",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Config("blame.ignoreRevsFile", fifoBeside(e, "revs"))
		},
		Plain: plainBlame, Fired: leaks("blocked"),
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: safe},
	{Name: "blame-ignore-revs-passwd", Attack: "blame.ignoreRevsFile names /etc/passwd: git blame reads a file outside the checkout and prints its first line",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Config("blame.ignoreRevsFile", "/etc/passwd")
		},
		Plain: plainBlame, Fired: leaks("root:"),
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: safe},
	{Name: "blame-textconv-local", Attack: "a textconv driver the checkout's config names, selected by .gitattributes, runs during a blame",
		Build: func(e *Env) {
			attributed(e, "diff")
			e.Config("diff.evil.textconv", e.Payload)
		},
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: safe},
	{Name: "blame-textconv-global", Attack: "a textconv driver of the user's own config, selected by the checkout's .gitattributes, runs during a blame",
		Build: func(e *Env) {
			e.GlobalConfig("[diff \"evil\"]\n\ttextconv = " + e.Payload + "\n")
			attributed(e, "diff")
		},
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: safe},
	{Name: "blame-mailmap-fifo", Attack: "the work tree's .mailmap is a FIFO: git blame reads it whatever log.mailmap says, and waits forever",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			if err := unix.Mkfifo(filepath.Join(e.Dir, ".mailmap"), 0o644); err != nil {
				e.fail(err)
			}
		},
		Plain: plainBlame, Fired: leaks("blocked"),
		Method: "git.blame", Grant: trust.View, Params: blameA,
		Want: Want{Code: rpc.CodeNotRun, Sentence: "FIFO"}},
	{Name: "blame-mailmap-file-fifo", Attack: "mailmap.file names a FIFO: git blame, which has no --no-mailmap, waits on it forever",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Config("mailmap.file", fifoBeside(e, "names"))
		},
		Plain: plainBlame, Fired: leaks("blocked"),
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: safe},
	{Name: "blame-mailmap-file-outside", Attack: "mailmap.file names a file outside the checkout: its names replace the authors blame shows",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Config("mailmap.file", e.Outside("names", mappedName+" <regress@example.com>\n"))
		},
		Plain: plainBlame, Fired: leaks(mappedName),
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: safe},
	{Name: "blame-mailmap-hard-link", Attack: "the work tree's .mailmap is hard-linked to a file outside: blame reads that file's bytes",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Link(e.Outside("names", mappedName+" <regress@example.com>\n"), ".mailmap")
		},
		Plain: plainBlame, Fired: leaks(mappedName),
		Method: "git.blame", Grant: trust.View, Params: blameA, Want: refused(hardLinked)},
	{Name: "diff-page-textconv", Attack: "a textconv driver the checkout's config names runs during the whole diff read a page at a time",
		Build: func(e *Env) {
			attributed(e, "diff")
			e.Config("diff.evil.textconv", e.Payload)
			e.Write(map[string]string{"a.txt": "b\n"})
		},
		Method: "git.diffPage", Grant: trust.View, Params: view, Want: safe},
	{Name: "diff-page-secret", Attack: "a changed .env is in the whole diff: its line reaches a phone below full",
		Build: func(e *Env) {
			e.Init(map[string]string{".env": "A=1\n"})
			e.Write(map[string]string{".env": secretMarker + "\n", "b.txt": "b\n"})
		},
		Plain: func(e *Env) string { out, _ := e.Run(e.Dir, "diff"); return out }, Fired: leaks(secretMarker),
		Method: "git.diffPage", Grant: trust.View, Params: view, Want: safe},
}
