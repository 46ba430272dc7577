package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// groups says what each command group is for where no command of that
// name does ("secrets check" has no "secrets"): its summary for the
// completion scripts, and its paragraph for "gatehouse secrets -h".
var groups = map[string]struct{ summary, help string }{
	"secrets": {"the secret-file rules",
		"Commands about the secret-file rules: the files gatehouse never hands to a\ndevice below the full grant (a device with full access sees them)."},
	"service": {"run serve as your always-on service",
		"Commands that run 'gatehouse serve' as your always-on service (launchd on\nmacOS, a systemd user unit on Linux), so the phone reaches your checkouts\nafter a restart."},
}

func printOverview(w io.Writer) {
	fmt.Fprint(w, `gatehouse serves your git checkouts to your phone without letting a
repository run a program, pick a network transport or hand out a secret file.

Usage: gatehouse [-v|--debug] COMMAND [arguments]

Commands:
`)
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	width := 0 // the longest name's, so every summary starts in one column
	for _, c := range sorted {
		width = max(width, len(c.name))
	}
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	printGlobalFlags(w, nil)
	fmt.Fprint(w, "\nRun 'gatehouse help COMMAND' or 'gatehouse COMMAND -h' for more.\n")
}

// printHelp prints a command's usage, its paragraph, its subcommands (for
// "devices": "devices link", ...), every flag it declares and the global
// ones.
func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: gatehouse %s %s\n\n%s\n", c.name, c.usage, strings.TrimSpace(c.help))
	printSubcommands(w, c.name)
	fs := newFlagSet(c)
	c.setup(fs)
	printFlags(w, fs)
	printGlobalFlags(w, fs)
}

// printGroupHelp prints what a group is for and its commands.
func printGroupHelp(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: gatehouse %s COMMAND [arguments]\n\n%s\n", group, groups[group].help)
	printSubcommands(w, group)
	printGlobalFlags(w, nil)
	fmt.Fprintf(w, "\nRun 'gatehouse help %s COMMAND' or 'gatehouse %s COMMAND -h' for more.\n", group, group)
}

func printSubcommands(w io.Writer, name string) {
	subs := startingWith(name)
	if len(subs) == 0 {
		return
	}
	width := 0
	for _, sub := range subs {
		width = max(width, len(sub))
	}
	fmt.Fprint(w, "\nCommands:\n")
	for _, sub := range subs {
		fmt.Fprintf(w, "  gatehouse %-*s  %s\n", width, sub, named(sub).summary)
	}
}

// printFlags lists fs's flags as the usage lines spell them (--name VALUE),
// with each one's default when it has one.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags:\n")
			first = false
		}
		value, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if value != "" {
			name += " " + strings.ToUpper(value)
		}
		switch f.DefValue {
		case "", "false", "0", "0s", "[]":
		default:
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(w, "  %s\n      %s\n", name, usage)
	})
}

// printGlobalFlags lists the flags every command takes, but not one the
// command declares in fs itself.
func printGlobalFlags(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "\nGlobal flags:\n")
	for _, g := range globalFlags {
		if g.name == "v" || fs != nil && fs.Lookup(g.name) != nil {
			continue
		}
		name := "--" + g.name
		if g.name == "verbose" {
			name = "-v, --verbose"
		}
		fmt.Fprintf(w, "  %s\n      %s\n", name, g.usage)
	}
}
