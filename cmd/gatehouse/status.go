package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "status",
		summary: "what the running serve is doing",
		usage:   "",
		help: `Asks the running 'gatehouse serve' (through its owner-only control.sock
in the state folder) what it is doing: its address and kind, the folders it
serves, the paired devices with their grant, whether each has the page open
now and when it last asked for something, and a waiting pair request.
Exits 1 when no serve runs with this state folder.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runStatus },
	})
}

func runStatus(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, named("status"), "takes no arguments")
	}
	store, code := openState(e)
	if store == nil {
		return code
	}
	st, err := serveStatus(store)
	if errors.Is(err, lan.ErrServeSilent) {
		fmt.Fprintf(e.stderr, "gatehouse status: %v\n", err)
		return exitFound
	}
	if err != nil {
		fmt.Fprintf(e.stdout, "No 'gatehouse serve' is running with the state folder %s.\n", store.Dir())
		printKeptLAN(e, store)
		return exitFound
	}
	printServeStatus(e, st)
	return exitOK
}

// serveStatus asks the running serve for its status.
func serveStatus(store *trust.Store) (*lan.Status, error) {
	ans, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "status"})
	if err != nil {
		return nil, err
	}
	return ans.Status, nil
}

func printServeStatus(e *env, st *lan.Status) {
	fmt.Fprintf(e.stdout, "serving at %s (%s) since %s\n", st.URL, st.Kind, st.Started.Local().Format(time.DateTime))
	fmt.Fprintf(e.stdout, "served folders: %d\n", len(st.Served))
	for _, f := range st.Served {
		fmt.Fprintf(e.stdout, "  %s  %-8s %s\n", f.ID, f.Kind, display.Text(f.Path))
	}
	fmt.Fprintf(e.stdout, "paired devices: %d of %d\n", len(st.Devices), lan.MaxDevices)
	for _, d := range st.Devices {
		online := "offline"
		if slices.Contains(st.Online, d.ID) {
			online = "online"
		}
		fmt.Fprintf(e.stdout, "  %s  %-7s %-7s last request %s  %s\n", d.ID, d.Grant, online, ago(d.LastSeen), display.Text(d.Name))
	}
	for _, r := range st.Requests {
		fmt.Fprintf(e.stdout, "waiting: %s\n", requestLine(r))
	}
}

// printKeptLAN lists the LAN pairings kept for the next serve, when none
// runs: they come back with it until revoked.
func printKeptLAN(e *env, store *trust.Store) {
	kept := store.LAN().Devices
	if len(kept) == 0 {
		return
	}
	fmt.Fprintf(e.stdout, "kept LAN pairings (back when serve runs; 'gatehouse devices revoke ID' ends one): %d\n", len(kept))
	for _, d := range kept {
		fmt.Fprintf(e.stdout, "  %s  %-7s %s\n", d.ID, d.Grant, display.Text(d.Name))
	}
}

// ago says how long ago t was, to the second.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return time.Since(t).Round(time.Second).String() + " ago"
}
