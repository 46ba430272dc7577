package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
Exits 1 when no serve runs with this state folder.

With --json it prints one JSON object instead, for scripts (as 'tailscale
status --json' does). Its fields are kept from one version to the next; new
ones may be added:
  running      true when a serve answered
  stateFolder  the state folder asked
  url, kind, started
               the serve's address, its kind (lan, tailscale or loopback) and
               when it started (RFC 3339); only when running
  served       the folders served: [{id, name, path, kind}]
  devices      the paired devices: [{id, name, grant, online, lastSeen}];
               grant is none, view, control or full; lastSeen is left out
               for a device that never asked for anything
  maxDevices   how many devices may pair
  requests     devices waiting to pair or reconnect:
               [{id, code, kind, name, from, at, ends, device}]
  kept         with no serve running, the LAN pairings that come back with
               the next one: [{id, name, grant}]`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			asJSON := fs.Bool("json", false, "print one JSON object (its fields are listed above) instead of text")
			return func(e *env, args []string) int { return runStatus(e, args, *asJSON) }
		},
	})
}

func runStatus(e *env, args []string, asJSON bool) int {
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
		st = nil
	}
	if asJSON {
		return printStatusJSON(e, store, st)
	}
	if st == nil {
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

// statusJSON is what status --json prints: its own type, so that a change
// to the control socket's answer does not change what scripts read.
type statusJSON struct {
	Running     bool                `json:"running"`
	StateFolder string              `json:"stateFolder"`
	URL         string              `json:"url,omitempty"`
	Kind        string              `json:"kind,omitempty"`
	Started     *time.Time          `json:"started,omitempty"`
	Served      []lan.ServedFolder  `json:"served"`
	Devices     []statusDeviceJSON  `json:"devices"`
	MaxDevices  int                 `json:"maxDevices"`
	Requests    []statusRequestJSON `json:"requests"`
	Kept        []statusDeviceJSON  `json:"kept"`
}

type statusDeviceJSON struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Grant    string     `json:"grant"`
	Online   *bool      `json:"online,omitempty"`
	LastSeen *time.Time `json:"lastSeen,omitempty"`
}

type statusRequestJSON struct {
	ID     string    `json:"id"`
	Code   string    `json:"code"`
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	From   string    `json:"from"`
	At     time.Time `json:"at"`
	Ends   time.Time `json:"ends"`
	Device string    `json:"device,omitempty"`
}

// printStatusJSON prints the running serve's status (st), or with st nil
// the kept pairings, and exits as the text does: 1 when none runs.
func printStatusJSON(e *env, store *trust.Store, st *lan.Status) int {
	out := statusJSON{StateFolder: store.Dir(), MaxDevices: lan.MaxDevices,
		Served: []lan.ServedFolder{}, Devices: []statusDeviceJSON{}, Requests: []statusRequestJSON{}, Kept: []statusDeviceJSON{}}
	code := exitFound
	if st != nil {
		code = exitOK
		out.Running, out.URL, out.Kind, out.Started = true, st.URL, string(st.Kind), &st.Started
		out.Served = append(out.Served, st.Served...)
		for _, d := range st.Devices {
			online := slices.Contains(st.Online, d.ID)
			out.Devices = append(out.Devices, statusDeviceJSON{ID: d.ID, Name: d.Name, Grant: d.Grant.String(), Online: &online, LastSeen: timeOrNil(d.LastSeen)})
		}
		for _, r := range st.Requests {
			out.Requests = append(out.Requests, statusRequestJSON{ID: r.ID, Code: r.Code, Kind: r.Kind, Name: r.Name, From: r.From, At: r.At, Ends: r.Ends, Device: r.Device})
		}
	} else {
		for _, d := range store.LAN().Devices {
			out.Kept = append(out.Kept, statusDeviceJSON{ID: d.ID, Name: d.Name, Grant: d.Grant.String(), LastSeen: timeOrNil(d.LastSeen)})
		}
	}
	if err := writeJSON(e.stdout, out); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse status: %v\n", err)
		return exitUsage
	}
	return code
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// writeJSON prints v indented, as the other --format json outputs are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
