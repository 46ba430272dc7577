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

	"github.com/spf13/cobra"

	"github.com/gatehouse/gatehouse/gate"
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

	// verbosity is what -v/--verbose and --debug asked for (verbosity.go).
	verbosity verbosity
	// tree is the command tree the command runs in (cli.go); completion
	// writes its scripts from it.
	tree *cobra.Command
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

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
	if gate.IsMonitorHook(os.Args[1:], os.Getenv) {
		// git runs this binary as the status monitor's hook
		// (gate/fsmonitor.go): it prints the answer the serve wrote.
		os.Exit(gate.MonitorHook(os.Args[1:], os.Getenv, os.Stdout))
	}
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

// run parses the global flags before the command's name, then hands the
// rest to the command tree (cli.go), which finds the command, parses its
// flags and runs it.
func run(e *env, args []string) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "-v") {
		// gh's and git's habit ("git -v" is "git --version" alone);
		// "gatehouse version" is go's. Before a command, -v is --verbose.
		args = []string{"version"}
	}
	args, u := e.verbosity.parseLeading(args)
	if u != nil {
		fmt.Fprintf(e.stderr, "gatehouse: %v; run 'gatehouse help' for the flags every command takes\n", u)
		printSuggestions(e.stderr, u.suggestions)
		return exitUsage
	}
	return runTree(e, args)
}

// runCommand parses c's flags among args, as the standard library's flag
// package does, and runs it. Its own flags, the global ones and -h are
// known wherever they stand among the arguments.
func runCommand(e *env, c *command, args []string) int {
	fs := newFlagSet(c)
	runIt := c.setup(fs)
	e.verbosity.declare(fs)
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(e.stdout, c)
			return exitOK
		}
		return flagError(e, c, fs, err)
	}
	restore := e.verbosity.setDefaultLogger(e.stderr, c)
	defer restore()
	return runIt(e, positional)
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
