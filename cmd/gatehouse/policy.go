package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
)

func init() {
	register(&command{
		name:    "policy",
		summary: "print the method table and the gate's lists",
		usage:   "[--format text|json]",
		help: `Prints what gatehouse enforces, from the declarations themselves: every method
with its scope, lane, read-only flag, once (sendId) and switch (and, in JSON,
its parameters and reply); the options and environment the gate forces on
every git call and on every call for a phone with the switch off; the flags
each git subcommand gatehouse runs always carries, and those a closed call
adds; the environment gh is started with; the Change gate's allowlist and the
Read gate's refusals, each with its reason; and how each config key git
documents as running a program, reaching the network or naming a file is
handled.

A golden copy is kept in testdata and compared by a test, so any change to
the policy shows in review.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			format := formatFlag(fs, "text", "json")
			return func(e *env, args []string) int {
				c := named("policy")
				if len(args) > 0 {
					return usageError(e, c, "takes no arguments")
				}
				if !checkFormat(e, c, *format, "text", "json") {
					return exitUsage
				}
				p, err := policy()
				if err != nil {
					fmt.Fprintf(e.stderr, "gatehouse policy: %v\n", err)
					return exitUsage
				}
				if *format == "json" {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					_ = enc.Encode(p)
					return exitOK
				}
				printPolicy(e.stdout, p)
				return exitOK
			}
		},
	})
}

type methodRow struct {
	Name     string `json:"name"`
	Scope    string `json:"scope"`
	Lane     string `json:"lane"`
	ReadOnly bool   `json:"readOnly"`
	Once     bool   `json:"once"`
	Switch   string `json:"switch,omitempty"`
	Params   string `json:"params"`
}

type policyDoc struct {
	Methods     []methodRow       `json:"methods"`
	Limits      map[string]int    `json:"limits"`
	Gate        gate.PolicyTables `json:"gate"`
	Subcommands []gate.PolicySub  `json:"subcommands"`
	GH          gate.PolicyGH     `json:"gh"`
}

func policy() (policyDoc, error) {
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		return policyDoc{}, err
	}
	var d policyDoc
	for _, m := range reg.Methods() {
		d.Methods = append(d.Methods, methodRow{m.Name, m.Scope.String(), m.Lane.String(), m.ReadOnly, m.Once, m.Switch, m.Description()})
	}
	d.Limits = rpc.Limits()
	d.Gate = gate.Policy()
	d.Subcommands = gate.PolicySubs()
	d.GH = gate.PolicyGHEnv()
	return d, nil
}

func printPolicy(w io.Writer, d policyDoc) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METHOD\tSCOPE\tLANE\tREAD-ONLY\tONCE\tSWITCH")
	for _, m := range d.Methods {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%s\n", m.Name, m.Scope, m.Lane, m.ReadOnly, m.Once, m.Switch)
	}
	tw.Flush()
	section := func(title string, opts []gate.Option) {
		fmt.Fprintf(w, "\n%s\n", title)
		for _, o := range opts {
			fmt.Fprintf(w, "  %s=%s\n      %s\n", o.Key, o.Value, o.Reason)
		}
	}
	section("Forced on every git call:", d.Gate.Everyone)
	section("Environment of every git call:", d.Gate.Env)
	fmt.Fprintf(w, "  kept from the caller: %s\n", strings.Join(d.Gate.KeptEnv, ", "))
	section("Forced for a phone with the switch off:", d.Gate.Closed)
	section("  ... and on calls that need no network:", d.Gate.ClosedOffline)
	section("  ... and in the environment:", d.Gate.ClosedEnv)
	printGitFlags(w, d.Subcommands)
	printGH(w, d.GH)
	rules := func(title string, rs []gate.PolicyRule) {
		fmt.Fprintf(w, "\n%s\n", title)
		for _, r := range rs {
			v := ""
			if r.Value != "" {
				v = " (" + r.Value + ")"
			}
			fmt.Fprintf(w, "  %s%s: %s\n", r.Pattern, v, r.Reason)
		}
	}
	rules("Read gate: refused even for status and diff:", d.Gate.ReadRefusals)
	rules("Change gate allowlist: every other key refuses a change:", d.Gate.Allowlist)
	fmt.Fprintf(w, "\nKeys git documents as running a program, reaching the network or naming a file:\n")
	for _, k := range d.Gate.ProgramKeys {
		by := ""
		if k.By != "" {
			by = " [" + k.By + "]"
		}
		fmt.Fprintf(w, "  %s: %s%s; %s\n", k.Pattern, k.Handled, by, k.Reason)
	}
}

// printGitFlags prints each git subcommand with the flags it always
// carries and those a closed call adds.
func printGitFlags(w io.Writer, subs []gate.PolicySub) {
	fmt.Fprintf(w, "\nFlags of each git subcommand (right after its name; closed: added for a phone with the switch off):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range subs {
		var parts []string
		if len(s.Flags) > 0 {
			parts = append(parts, strings.Join(s.Flags, " "))
		}
		if len(s.ClosedFlags) > 0 {
			parts = append(parts, "closed: "+strings.Join(s.ClosedFlags, " "))
		}
		if len(parts) == 0 {
			parts = append(parts, "-")
		}
		var marks []string
		if s.ReadOnly {
			marks = append(marks, "read-only")
		}
		if s.Network {
			marks = append(marks, "network")
		}
		if s.EndOfOptions {
			marks = append(marks, "--end-of-options")
		}
		if s.OwnPathspecs {
			marks = append(marks, "own pathspecs")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, strings.Join(marks, ", "), strings.Join(parts, "; "))
	}
	tw.Flush()
}

// printGH prints the environment gh is started with.
func printGH(w io.Writer, g gate.PolicyGH) {
	fmt.Fprintf(w, "\nEnvironment of every gh call:\n")
	fmt.Fprintf(w, "  kept from the caller: %s\n", strings.Join(g.Kept, ", "))
	fmt.Fprintf(w, "  ... and in a checkout, when gatehouse runs in the person's own environment: %s\n", strings.Join(g.KeptOwnConfig, ", "))
	fmt.Fprintf(w, "  set: %s\n", strings.Join(g.Forced, ", "))
	fmt.Fprintf(w, "  ... and for a phone with the switch off: %s\n", strings.Join(g.ClosedForced, ", "))
	fmt.Fprintf(w, "  the checkout: %s\n", g.Pinned)
	fmt.Fprintf(w, "  git's options: %s\n", g.GitConfig)
}
