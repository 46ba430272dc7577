package main

import (
	"flag"
	"fmt"

	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "access",
		summary: "show or set Full access for remote devices",
		usage:   "[on|off]",
		help: `Shows or sets the switch "Full access for remote devices" (off by default).

With it off, a phone gets the closed gate: git runs with the repository's
hooks, filters, drivers, fsmonitor and transports switched off, and changes
are refused in a checkout whose git config names anything the allowlist does
not know. Editing files needs it on. With it on, a phone is treated like you
at this computer for git: the repository's own hooks and config run as you
chose. Grants (view, control, full) still decide which methods a device may
call; set them with 'gatehouse devices'.

A running 'gatehouse serve' sees the change at its next request.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			return runAccess
		},
	})
}

func runAccess(e *env, args []string) int {
	c := named("access")
	if len(args) > 1 {
		return usageError(e, c, "want at most one of on, off")
	}
	store, code := openState(e)
	if store == nil {
		return code
	}
	if len(args) == 1 {
		var on bool
		switch args[0] {
		case "on":
			on = true
		case "off":
		default:
			return usageError(e, c, "want on or off, not %q", args[0])
		}
		if err := store.SetFullAccess(on); err != nil {
			fmt.Fprintf(e.stderr, "gatehouse access: %v\n", err)
			return exitUsage
		}
	}
	state := "off"
	if store.FullAccess() {
		state = "on"
	}
	fmt.Fprintf(e.stdout, "Full access for remote devices: %s\n", state)
	return exitOK
}

// openState opens the state folder, or says why not and returns the exit
// code.
func openState(e *env) (*trust.Store, int) {
	dir, err := trust.DefaultDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse: %v\n", err)
		return nil, exitUsage
	}
	configDir, err := trust.DefaultConfigDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse: %v\n", err)
		return nil, exitUsage
	}
	store, err := trust.OpenStoreWithConfig(dir, configDir)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse: %v (set GATEHOUSE_HOME to use another folder)\n", err)
		return nil, exitUsage
	}
	moveSettings(e, store)
	return store, exitOK
}
