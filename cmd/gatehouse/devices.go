package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"net/http"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "devices",
		summary: "list devices and what this computer allows each",
		usage:   "",
		help: `Lists the devices of this computer's relay account (online or not, and each
key's fingerprint) with the grant this computer gave each: none, view, control
or full. A grant is bound to the key the device had when it was granted; a
device whose key changed shows "key changed" and has no access until it is
granted again.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runDevices },
	})
	register(&command{
		name:    "devices grant",
		summary: "allow a device view, control or full access",
		usage:   "ID view|control|full [--fingerprint FP]",
		help: `Gives device ID a grant on this computer, bound to the key the relay shows
for it now. Compare the fingerprint printed here with the one the device showed
when it signed in ('gatehouse login' prints it), or pass it with --fingerprint
to refuse any other key.

  view     read-only methods; secret files hidden
  control  also stage and discard; secret files hidden
  full     every method (commit, push, switch, worktrees, edit files); secret
           files shown

What a grant allows in a repository also depends on the switch (gatehouse
access). A running 'gatehouse serve' sees the change at its next request.`,
		setup: setupDevicesGrant,
	})
	register(&command{
		name:    "devices revoke",
		summary: "take back a device's grant on this computer",
		usage:   "ID",
		help: `Removes this computer's grant for device ID: from its next request on, a
running 'gatehouse serve' answers it "not allowed". The device stays on the
relay account ('gatehouse devices remove' takes it off).`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runDevicesRevoke },
	})
	register(&command{
		name:    "devices remove",
		summary: "remove a device from the relay account",
		usage:   "ID",
		help: `Removes device ID from the relay account: its socket is closed and its tokens
stop working at once; it must sign in again to come back. This computer's grant
for it is removed too.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runDevicesRemove },
	})
}

// relayDevices lists the account's devices, or nil when this computer is
// not signed in to a relay.
func relayDevices(id *relay.Identity) ([]relay.Device, error) {
	if _, err := id.Token(); err != nil {
		return nil, nil
	}
	var out struct {
		Devices []relay.Device `json:"devices"`
	}
	err := id.Call(context.Background(), httpClient, http.MethodGet, "/v1/devices", nil, &out)
	return out.Devices, err
}

func fingerprintOf(d relay.Device) string {
	key, err := base64.StdEncoding.DecodeString(d.PublicKey)
	if err != nil {
		return "?"
	}
	return trust.Fingerprint(key)
}

func runDevices(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, named("devices"), "unexpected argument %q", args[0])
	}
	id, store, code := identity(e)
	if id == nil {
		return code
	}
	devs, err := relayDevices(id)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices: %s\n", trimRelay(err))
		return exitFound
	}
	grants := store.Grants()
	me := id.Profile().DeviceID
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tPLATFORM\tONLINE\tFINGERPRINT\tGRANT")
	seen := map[string]bool{}
	for _, d := range devs {
		seen[d.ID] = true
		fp := fingerprintOf(d)
		grant := "none"
		if g, ok := grants[d.ID]; ok {
			grant = g.Grant.String()
			if g.Fingerprint != fp {
				grant = g.Grant.String() + " (key changed: none until granted again)"
			}
		}
		if d.ID == me {
			grant = "this computer"
		}
		online := "no"
		if d.Online {
			online = "yes"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.Name, d.Platform, online, fp, grant)
	}
	var rest []string
	for gid := range grants {
		if !seen[gid] {
			rest = append(rest, gid)
		}
	}
	sort.Strings(rest)
	for _, gid := range rest {
		g := grants[gid]
		fmt.Fprintf(w, "%s\t%s\t-\tnot on the account\t%s\t%s\n", gid, g.Name, g.Fingerprint, g.Grant)
	}
	_ = w.Flush()
	if devs == nil {
		fmt.Fprintln(e.stderr, "Not signed in to a relay: only the grants are listed. Run 'gatehouse login --relay URL'.")
	}
	return exitOK
}

func setupDevicesGrant(fs *flag.FlagSet) func(*env, []string) int {
	want := fs.String("fingerprint", "", "refuse unless the device's key has this fingerprint")
	return func(e *env, args []string) int {
		c := named("devices grant")
		if len(args) != 2 {
			return usageError(e, c, "name a device id and a grant: view, control or full")
		}
		g, err := trust.ParseGrant(args[1])
		if err != nil || g == trust.None {
			return usageError(e, c, "the grant is view, control or full, not %q", args[1])
		}
		id, store, code := identity(e)
		if id == nil {
			return code
		}
		devs, err := relayDevices(id)
		if err != nil || devs == nil {
			fmt.Fprintln(e.stderr, "gatehouse devices grant: this computer is not signed in to a relay (gatehouse login --relay URL)")
			return exitFound
		}
		for _, d := range devs {
			if d.ID != args[0] {
				continue
			}
			fp := fingerprintOf(d)
			if *want != "" && *want != fp {
				fmt.Fprintf(e.stderr, "gatehouse devices grant: %s's key has fingerprint %s, not %s; not granted\n", d.ID, fp, *want)
				return exitFound
			}
			if err := store.SetGrant(d.ID, trust.DeviceGrant{Grant: g, Fingerprint: fp, Name: d.Name, GrantedAt: time.Now().UTC()}); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse devices grant: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(e.stdout, "Granted %s (%q) %s access, bound to key %s.\n", d.ID, d.Name, g, fp)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "gatehouse devices grant: no device %q on this relay account ('gatehouse devices' lists them)\n", args[0])
		return exitFound
	}
}

func runDevicesRevoke(e *env, args []string) int {
	if len(args) != 1 {
		return usageError(e, named("devices revoke"), "name one device id")
	}
	store, code := openState(e)
	if store == nil {
		return code
	}
	if err := store.Revoke(args[0]); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices revoke: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "%s has no access to this computer now.\n", args[0])
	return exitOK
}

func runDevicesRemove(e *env, args []string) int {
	if len(args) != 1 {
		return usageError(e, named("devices remove"), "name one device id")
	}
	id, store, code := identity(e)
	if id == nil {
		return code
	}
	if err := id.Call(context.Background(), httpClient, http.MethodDelete, "/v1/devices/"+args[0], nil, nil); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices remove: %s\n", trimRelay(err))
		return exitFound
	}
	_ = store.Revoke(args[0])
	fmt.Fprintf(e.stdout, "Removed %s from the relay account; its tokens no longer work.\n", args[0])
	return exitOK
}
