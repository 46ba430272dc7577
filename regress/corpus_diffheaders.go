package regress

import (
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// Diff headers other than "diff --git": git writes "diff --cc NAME" for a
// merge that differs from every parent and for an unmerged path in a
// conflicted checkout. A splitter that starts a file's section only at
// "diff --git" lets a secret ride in the section before it, or in the
// unfiltered text before the first file, to a view phone.

// conflictOnSecret leaves Dir in the middle of a merge of "side" into main
// that conflicts on .env, both sides holding the secret.
func conflictOnSecret(e *Env) {
	e.Init(map[string]string{".env": "A=1\n", "a.txt": "a\n"})
	e.Git(e.Dir, "switch", "-q", "-c", "side")
	e.Write(map[string]string{".env": "A=side-" + secretMarker + "\n", "a.txt": "side\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "side")
	e.Git(e.Dir, "switch", "-q", "main")
	e.Write(map[string]string{".env": "A=main-" + secretMarker + "\n", "a.txt": "main\n"})
	e.Git(e.Dir, "commit", "-q", "-am", "main")
	if _, err := e.Run(e.Dir, "merge", "-q", "side"); err == nil {
		e.fail(errors.New("the merge did not conflict on .env"))
	}
}

// mergedSecret commits the merge with a .env that differs from both
// parents, so git show of the merge prints "diff --cc .env".
func mergedSecret(e *Env) {
	conflictOnSecret(e)
	e.Write(map[string]string{".env": "A=merged-" + secretMarker + "\n", "a.txt": "merged\n"})
	e.Git(e.Dir, "add", "-A")
	e.Git(e.Dir, "commit", "-q", "-m", "merge")
}

// renamedSecret commits a merge that renames .env to notes.txt and drops
// its secret line: the combined diff of notes.txt shows the parents' lines,
// the secret among them, and only git's --combined-all-paths names .env.
func renamedSecret(e *Env) {
	var lines []string
	for i := range 20 {
		lines = append(lines, strings.Repeat("x", i+1))
	}
	body := strings.Join(lines, "\n") + "\nA=" + secretMarker + "\n"
	e.Init(map[string]string{".env": body})
	e.Git(e.Dir, "switch", "-q", "-c", "side")
	e.Write(map[string]string{".env": strings.Replace(body, "x\nxx\n", "x\nside\n", 1)})
	e.Git(e.Dir, "commit", "-q", "-am", "side")
	e.Git(e.Dir, "switch", "-q", "main")
	e.Write(map[string]string{".env": strings.Replace(body, "x\nxx\n", "x\nmain\n", 1)})
	e.Git(e.Dir, "commit", "-q", "-am", "main")
	e.Run(e.Dir, "merge", "-q", "side")
	e.Write(map[string]string{".env": strings.Replace(strings.Replace(body, "A="+secretMarker+"\n", "", 1), "x\nxx\n", "x\nmerged\n", 1)})
	e.Git(e.Dir, "add", ".env")
	e.Git(e.Dir, "mv", ".env", "notes.txt")
	e.Git(e.Dir, "commit", "-q", "-m", "merge")
}

func showHead(e *Env) map[string]any { return map[string]any{"target": "$target", "oid": e.Head()} }

var diffHeaderCases = []Case{
	{Name: "merge-combined-diff-secret", Attack: "git show of a merge prints diff --cc .env, a header the secret filter did not split on",
		Build: mergedSecret, Method: "git.show", Grant: trust.View, Params: showHead,
		Fired: leaks(secretMarker), Want: safe},
	{Name: "unmerged-diff-secret", Attack: "git diff in a checkout with a conflict on .env prints both sides under diff --cc .env",
		Build: conflictOnSecret, Method: "git.diff", Grant: trust.View, Params: view,
		Fired: leaks(secretMarker), Want: safe},
	{Name: "merge-rename-secret", Attack: "a merge renames .env: its combined diff shows the parents' secret line under the new name",
		Build: renamedSecret, Method: "git.show", Grant: trust.View, Params: showHead,
		Fired: leaks(secretMarker), Want: safe},
}
