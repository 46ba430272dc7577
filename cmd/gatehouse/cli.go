package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// The command tree is cobra's (github.com/spf13/cobra, which gh and
// kubectl use): it finds the command the words name, suggests one for a
// typo, and answers the shell completion scripts' questions
// ("gatehouse __complete serve --l"). Each registered command keeps its
// own setup and runner: cobra leaves its arguments alone
// (DisableFlagParsing) and runCommand parses them with the standard
// library's flag package as before, so no flag changes meaning; its flags
// are copied into cobra's flag set only so that completion knows them.

// runTree runs the command args name.
func runTree(e *env, args []string) int {
	code := exitOK
	root := newTree(e, &code)
	e.tree = root
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	if err := root.Execute(); err != nil {
		// Every node handles its own errors; cobra's own would be a bug.
		fmt.Fprintf(e.stderr, "gatehouse: %v\n", err)
		return exitUsage
	}
	return code
}

// newTree makes a cobra command for every registered command, and one
// for each group of two-word commands ("secrets" for "secrets check")
// that has no command of its own. Each node's runner sets *code.
func newTree(e *env, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:                        "gatehouse",
		Short:                      "serve your git checkouts to your phone, safely",
		SilenceErrors:              true,
		SilenceUsage:               true,
		DisableFlagParsing:         true,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: suggestDistance,
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true}, // ours is a registered command (completion.go)
		RunE: func(cmd *cobra.Command, args []string) error {
			*code = runRoot(e, cmd, args)
			return nil
		},
	}
	for _, g := range globalFlags {
		if len(g.name) > 1 {
			root.Flags().Bool(g.name, false, g.usage)
		}
	}
	root.SetHelpCommand(helpCommand(e, code))
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { printNodeHelp(e, cmd) })

	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	nodes := map[string]*cobra.Command{}
	for _, c := range sorted {
		parent := root
		first, last, two := strings.Cut(c.name, " ")
		if two {
			parent = nodes[first]
			if parent == nil {
				parent = groupNode(e, first, code)
				nodes[first] = parent
				root.AddCommand(parent)
			}
		} else {
			last = first
		}
		node := commandNode(e, c, last, code)
		nodes[c.name] = node
		parent.AddCommand(node)
	}
	return root
}

// commandNode is a registered command. Its arguments are its own to
// parse; a word its subcommands suggest ("devices alow") is a typo.
func commandNode(e *env, c *command, word string, code *int) *cobra.Command {
	node := &cobra.Command{
		Use:                word,
		Short:              c.summary,
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		// cobra's own default, which it sets only when it prints them.
		SuggestionsMinimumDistance: suggestDistance,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.HasSubCommands() && !strings.HasPrefix(args[0], "-") {
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					*code = unknownCommand(e, cmd, args[0])
					return nil
				}
			}
			*code = runCommand(e, c, args)
			return nil
		},
	}
	fs := newFlagSet(c)
	c.setup(fs)
	e.verbosity.declare(fs)
	node.Flags().AddGoFlagSet(fs)
	if f := node.Flags().Lookup("v"); f != nil && f.Usage == "short for --verbose" {
		f.Hidden = true // completion offers --verbose
	}
	return node
}

// groupNode is a group with no command of its own: it lists its commands
// on -h, and says which it wants without one.
func groupNode(e *env, group string, code *int) *cobra.Command {
	return &cobra.Command{
		Use:                        group,
		Short:                      groups[group].summary,
		DisableFlagParsing:         true,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: suggestDistance,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				fmt.Fprintf(e.stderr, "gatehouse %s: want one of: gatehouse %s; run 'gatehouse help %s' for what each does\n",
					group, strings.Join(startingWith(group), ", gatehouse "), group)
				*code = exitUsage
			case isHelpFlag(args[0]):
				printGroupHelp(e.stdout, group)
				*code = exitOK
			case strings.HasPrefix(args[0], "-"):
				*code = unknownFlagUsage(e, group, unknownFlagError(strings.TrimLeft(args[0], "-"), []string{"help"}))
			default:
				*code = unknownCommand(e, cmd, args[0])
			}
			return nil
		},
	}
}

// runRoot is "gatehouse" with no command, or with a word that names none.
func runRoot(e *env, root *cobra.Command, args []string) int {
	if len(args) == 0 {
		printOverview(e.stderr)
		return exitUsage
	}
	return unknownCommand(e, root, args[0])
}

// unknownCommand says a word names no command under parent, with the
// ones it may have been meant as (cobra's SuggestionsFor: two edits, or a
// prefix), and returns 2.
func unknownCommand(e *env, parent *cobra.Command, word string) int {
	where, list := "gatehouse", "'gatehouse help' for the list"
	if parent.HasParent() {
		path := strings.TrimPrefix(parent.CommandPath(), "gatehouse ")
		where, list = "gatehouse "+path, "'gatehouse help "+path+"' for its commands"
	}
	fmt.Fprintf(e.stderr, "%s: unknown command %q; run %s\n", where, word, list)
	printSuggestions(e.stderr, parent.SuggestionsFor(word))
	return exitUsage
}

// helpCommand is "gatehouse help [COMMAND]": the overview, or one command's
// or group's help, on stdout; an unknown name is a usage error.
func helpCommand(e *env, code *int) *cobra.Command {
	return &cobra.Command{
		Use:                "help [COMMAND]",
		Short:              "print the help of gatehouse or of a command",
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			node, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range node.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			*code = runHelp(e, cmd.Root(), args)
			return nil
		},
	}
}

func runHelp(e *env, root *cobra.Command, args []string) int {
	args = slices.DeleteFunc(slices.Clone(args), isHelpFlag)
	if len(args) == 0 {
		printOverview(e.stdout)
		return exitOK
	}
	node, rest, err := root.Find(args)
	if err != nil || node == root || len(rest) > 0 {
		// root.Find leaves the words it did not find in rest.
		parent, word := root, args[0]
		if node != nil && node != root {
			parent, word = node, rest[0]
		}
		return unknownCommand(e, parent, word)
	}
	printNodeHelp(e, node)
	return exitOK
}

// printNodeHelp prints the help of a node of the tree.
func printNodeHelp(e *env, node *cobra.Command) {
	name := strings.TrimPrefix(node.CommandPath(), "gatehouse")
	name = strings.TrimSpace(name)
	if c := named(name); c != nil {
		printHelp(e.stdout, c)
		return
	}
	if _, ok := groups[name]; ok {
		printGroupHelp(e.stdout, name)
		return
	}
	printOverview(e.stdout)
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}
