// Command gatehouse is a security-hardened git and filesystem gateway: it
// lets a phone look at and change a developer's checkouts while the
// repository's own content can never run a program, reach the network
// through a transport it chose, or hand out a secret file.
//
// Run "gatehouse help" for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes, as git, gh and go use them.
const (
	exitOK    = 0 // success
	exitFound = 1 // found something, or refused
	exitUsage = 2 // usage or setup error
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string // the arguments, after "gatehouse NAME"
	help    string // what it does, a short paragraph
	// setup declares the command's flags on fs and returns the function
	// that runs it with the arguments left after the flags. It returns the
	// exit code.
	setup func(fs *flag.FlagSet) func(e *env, args []string) int
}

// env is what a command reads and writes: the process's streams and
// environment, so tests can run commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

// find returns the command named by the first one or two words of args
// ("version", "secrets check") and the arguments after its name.
func find(args []string) (*command, []string) {
	if len(args) >= 2 {
		if c := named(args[0] + " " + args[1]); c != nil {
			return c, args[2:]
		}
	}
	if len(args) >= 1 {
		if c := named(args[0]); c != nil {
			return c, args[1:]
		}
	}
	return nil, nil
}

// startingWith lists the two-word commands whose first word is word.
func startingWith(word string) []string {
	var out []string
	for _, c := range commands {
		if strings.HasPrefix(c.name, word+" ") {
			out = append(out, c.name)
		}
	}
	sort.Strings(out)
	return out
}

func named(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

func run(e *env, args []string) int {
	if len(args) == 0 {
		printOverview(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "--version", "-version", "-v":
		// gh's and git's habit; "gatehouse version" is go's.
		return run(e, []string{"version"})
	case "help", "-h", "--help":
		if len(args) == 1 {
			printOverview(e.stdout)
			return exitOK
		}
		c, _ := find(args[1:])
		if c == nil {
			fmt.Fprintf(e.stderr, "gatehouse: unknown command %q; run 'gatehouse help' for the list\n", strings.Join(args[1:], " "))
			return exitUsage
		}
		printHelp(e.stdout, c)
		return exitOK
	}
	c, rest := find(args)
	if c == nil {
		if subs := startingWith(args[0]); len(subs) > 0 {
			fmt.Fprintf(e.stderr, "gatehouse: want one of: gatehouse %s\n", strings.Join(subs, ", gatehouse "))
			return exitUsage
		}
		fmt.Fprintf(e.stderr, "gatehouse: unknown command %q; run 'gatehouse help' for the list\n", args[0])
		return exitUsage
	}
	fs := newFlagSet(c)
	runIt := c.setup(fs)
	positional, err := parseInterspersed(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(e.stdout, c)
			return exitOK
		}
		return usageError(e, c, "%v", err)
	}
	return runIt(e, positional)
}

func printOverview(w io.Writer) {
	fmt.Fprint(w, `gatehouse serves your git checkouts to your phone without letting a
repository run a program, pick a network transport or hand out a secret file.

Usage: gatehouse COMMAND [arguments]

Commands:
`)
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'gatehouse help COMMAND' or 'gatehouse COMMAND -h' for more.\n")
}

// printHelp prints a command's usage, its paragraph, its subcommands (for
// "devices": "devices link", ...) and every flag it declares.
func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: gatehouse %s %s\n\n%s\n", c.name, c.usage, strings.TrimSpace(c.help))
	if subs := startingWith(c.name); len(subs) > 0 {
		fmt.Fprint(w, "\nCommands:\n")
		for _, name := range subs {
			fmt.Fprintf(w, "  gatehouse %-16s %s\n", name, named(name).summary)
		}
	}
	fs := newFlagSet(c)
	c.setup(fs)
	printFlags(w, fs)
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

// parseInterspersed parses flags wherever they stand among the arguments
// ("check .env --format json"), up to a "--" after which everything is an
// argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if len(args) > 0 && args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// usageError reports a wrong use of a command in one line and returns 2.
func usageError(e *env, c *command, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "gatehouse %s: %s; run 'gatehouse %s -h' for usage\n", c.name, fmt.Sprintf(format, args...), c.name)
	return exitUsage
}

// formatFlag adds --format with the given choices, the first the default.
func formatFlag(fs *flag.FlagSet, choices ...string) *string {
	return fs.String("format", choices[0], "output format: "+strings.Join(choices, ", "))
}

func checkFormat(e *env, c *command, got string, choices ...string) bool {
	for _, ch := range choices {
		if got == ch {
			return true
		}
	}
	usageError(e, c, "unknown format %q (want %s)", got, strings.Join(choices, " or "))
	return false
}
