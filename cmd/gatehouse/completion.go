package main

import (
	"flag"
	"fmt"
	"io"
)

func init() {
	register(&command{
		name:    "completion",
		summary: "print a script that completes gatehouse's commands and flags in your shell",
		usage:   "bash|zsh|fish|powershell [--no-descriptions]",
		help: `Prints a script that teaches your shell to complete gatehouse's commands,
their subcommands and their flags when you press Tab. The script asks this
gatehouse what to offer each time ("gatehouse __complete ..."), so it stays
right after an upgrade. The scripts are cobra's, as gh and kubectl use.

Install it once:

  bash   (needs the bash-completion package)
         gatehouse completion bash > ~/.local/share/bash-completion/completions/gatehouse
         or, for the shell you are in: source <(gatehouse completion bash)
  zsh    gatehouse completion zsh > "${fpath[1]}/_gatehouse"
         (completion must be on in ~/.zshrc: autoload -U compinit; compinit)
         or, for the shell you are in: source <(gatehouse completion zsh)
  fish   gatehouse completion fish > ~/.config/fish/completions/gatehouse.fish
  powershell
         gatehouse completion powershell | Out-String | Invoke-Expression
         (add that line to your $PROFILE to keep it)

Then open a new shell.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			noDesc := fs.Bool("no-descriptions", false, "complete the names only, without each one's summary")
			return func(e *env, args []string) int {
				c := named("completion")
				if len(args) != 1 {
					return usageError(e, c, "name one shell: bash, zsh, fish or powershell")
				}
				write, ok := completionScripts[args[0]]
				if !ok {
					return usageError(e, c, "no completion for the shell %q (want bash, zsh, fish or powershell)", args[0])
				}
				if err := write(e, e.stdout, !*noDesc); err != nil {
					fmt.Fprintf(e.stderr, "gatehouse completion: %v\n", err)
					return exitFound
				}
				return exitOK
			}
		},
	})
}

// completionScripts writes each shell's script, cobra's generators over
// the command tree the command runs in.
var completionScripts = map[string]func(e *env, w io.Writer, desc bool) error{
	"bash": func(e *env, w io.Writer, desc bool) error { return e.tree.GenBashCompletionV2(w, desc) },
	"zsh": func(e *env, w io.Writer, desc bool) error {
		if desc {
			return e.tree.GenZshCompletion(w)
		}
		return e.tree.GenZshCompletionNoDesc(w)
	},
	"fish": func(e *env, w io.Writer, desc bool) error { return e.tree.GenFishCompletion(w, desc) },
	"powershell": func(e *env, w io.Writer, desc bool) error {
		if desc {
			return e.tree.GenPowerShellCompletionWithDesc(w)
		}
		return e.tree.GenPowerShellCompletion(w)
	},
}
