package regress

import (
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// hunkCases attack git.stageHunks. Before it compares the device's hash,
// the host runs the file's diff again, and a diff of the work tree runs the
// clean filter the checkout's config names; the desktop's call fires it
// whatever hash it sends (the reply is then CONFLICT), so the case needs no
// real hash. The closed gate refuses before any git runs.
var hunkCases = []Case{
	{Name: "filter-clean-on-stage-hunks", Attack: "a clean filter runs when a phone stages one hunk of a file",
		Build: func(e *Env) {
			attributed(e, "filter")
			e.Config("filter.evil.clean", e.Payload)
			e.Touch("a.txt", "b\n")
		},
		Method: "git.stageHunks", Grant: trust.Control,
		Params: func(e *Env) map[string]any {
			return map[string]any{"target": "$target", "path": "a.txt", "hunks": []int{0}, "diffHash": strings.Repeat("0", 64)}
		},
		Want: refused(runsPrograms)},
}
