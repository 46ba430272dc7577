// Package methodsdoc writes docs/methods.md, the method reference, from
// the method registry (rpc/methods), so the document cannot drift from what
// the host does. It is not part of gatehouse: go generate runs it, and
// TestMethodsDoc fails when the committed file is stale.
package methodsdoc

//go:generate go run ./gen -o ../../docs/methods.md

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
)

// laneText says what each lane means to a caller (the slot counts live in
// rpc/lanes.go alone, so none is repeated here to drift).
var laneText = map[string]string{
	"read":       "read: quick reads, several at once per device; may ride in a batch",
	"slow-read":  "slow read: diffs and searches, fewer at once per device; never in a batch",
	"ordered":    "ordered: one change at a time per device, in arrival order; answered NOT_RUN if it waited too long in the queue",
	"background": "background: long changes (commit, push, worktrees) beside the ordered lane",
}

// Write writes docs/methods.md from the method registry.
func Write(w io.Writer) error {
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		return err
	}
	fmt.Fprint(w, methodsDocIntro)
	fmt.Fprintln(w, "| Method | Grant | Lane | Switch | Once |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, m := range reg.Methods() {
		fmt.Fprintf(w, "| [`%s`](#%s) | %s | %s | %s | %s |\n", m.Name, anchor(m.Name), m.Scope, m.Lane, orDash(m.Switch), yesDash(m.Once))
	}
	for _, m := range reg.Methods() {
		writeMethod(w, m)
	}
	writeLimits(w)
	return nil
}

func writeMethod(w io.Writer, m *rpc.Method) {
	fmt.Fprintf(w, "\n## %s\n\n", m.Name)
	fmt.Fprintf(w, "- Parameters: `%s`", m.Params)
	if m.TakesTarget() {
		fmt.Fprint(w, " (`target` may be left out by `gatehouse do` and `gatehouse call` when one project is served)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- Reply: `%s`\n", m.Reply)
	if m.Note != "" {
		fmt.Fprintf(w, "- Note: %s\n", m.Note)
	}
	fmt.Fprintf(w, "- Grant: %s\n", grantText(m.Scope.String()))
	fmt.Fprintf(w, "- Lane: %s\n", laneText[m.Lane.String()])
	if m.Switch != "" {
		fmt.Fprintf(w, "- Switch: needs Full access for remote devices on (a refusal says: turn it on to %s)\n", m.Switch)
	}
	if m.Once {
		fmt.Fprintln(w, "- Once: takes `sendId`; a repeat under the same id is answered from the host's memory, never run twice")
	}
	if m.Wait > 0 && m.Wait != 30*time.Second {
		fmt.Fprintf(w, "- Caller waits: %s\n", m.Wait)
	}
}

func writeLimits(w io.Writer) {
	fmt.Fprint(w, "\n## Limits\n\nEvery count and size a device controls is bounded; these are the bounds, from the code:\n\n")
	limits := rpc.Limits()
	names := make([]string, 0, len(limits))
	for k := range limits {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "- `%s`: %d\n", k, limits[k])
	}
}

// anchor is the GitHub heading anchor of a method name
// ("git.switchBranch" → "gitswitchbranch").
func anchor(name string) string { return strings.ToLower(strings.ReplaceAll(name, ".", "")) }

// grantText is who may call a method of that scope.
func grantText(scope string) string {
	if scope == "full" {
		return "full"
	}
	return scope + " or more"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesDash(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

const methodsDocIntro = `# Methods

<!-- Generated from the method registry (rpc/methods) by
     go generate ./rpc/methodsdoc
     A test fails when this file is out of date: do not edit it by hand. -->

Every method a device may call, as the host declares it. A request names a
method and its parameters, a JSON object: unknown fields are refused, and a
field marked ` + "`?`" + ` may be left out. What the columns mean:

- **Grant**: the narrowest grant that may call the method (view < control <
  full), given to each device on this computer.
- **Lane**: the queue the request waits in on the host, per device.
- **Switch**: the method also needs *Full access for remote devices* on
  (` + "`gatehouse access on`" + `); with it off, the refusal names the action.
- **Once**: a change that must not run twice; it takes a ` + "`sendId`" + `, and a
  repeat under the same id gets the first answer.

The parameters are written from the Go type each method decodes its request
into, and Once from whether that type embeds ` + "`rpc.SendID`" + ` (rpc/registry.go
Register), so neither can say other than what the host accepts; a value
after a colon (` + "`thumb|full`" + `) is what the parameter takes.

` + "`gatehouse do METHOD [JSON | - | @FILE]`" + ` runs any of them on this computer,
` + "`gatehouse call`" + ` on another; ` + "`gatehouse policy`" + ` prints the same table with the
gate's lists.

`
