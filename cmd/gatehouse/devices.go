package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "devices",
		summary: "list devices and what this computer allows each",
		usage:   "[--json]",
		help: `Lists what may reach this computer. First the devices paired with the
'gatehouse serve' running on a local address with this state folder (and a
device waiting to pair); then the devices of this computer's relay account
(online or not, and each key's fingerprint) with the grant this computer gave
each: none, view, control or full. A relay grant is bound to the key the device
had when it was granted; a device whose key changed shows "key changed" and has
no access until it is granted again. With no serve running, no relay sign-in
and no grant, it says so and exits 1.

--json prints one object instead, with the same exit code: serving (true
when a serve runs with this state folder), url, lan [{id, name, grant,
online, lastSeen, fingerprint, kept (true: a pairing kept while no serve
runs)}], waiting [{id, code, name, from, kind ("pair" or "reconnect"),
device, grant}], relaySignedIn, and relay [{id, name, platform, online,
fingerprint, grant ("none", "view", "control" or "full"), keyChanged,
onAccount, thisComputer}]. Lists are empty, never null.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			asJSON := fs.Bool("json", false, "print one JSON object (fields above)")
			return func(e *env, args []string) int {
				if *asJSON {
					return runDevicesJSON(e, args)
				}
				return runDevices(e, args)
			}
		},
	})
	register(&command{
		name:    "devices link",
		summary: "print the pairing link of the running serve",
		usage:   "[--qr] [--new]",
		help: `Prints the pairing link of the 'gatehouse serve' running with this state folder
(it talks to it over control.sock, the owner-only socket in the state folder),
for a serve without a terminal. Open it on the phone, then allow the request
whose code the phone shows with 'gatehouse devices allow CODE'. --qr draws its
QR code too. --new makes a new link first: the old one pairs nothing more, and
requests that came through it end (do this when requests you did not make keep
arriving: someone else holds the link). The link holds the key that lets a
device ask to pair: do not paste it where others read.`,
		setup: setupDevicesLink,
	})
	register(&command{
		name:    "devices allow",
		summary: "allow the device whose pair code you name",
		usage:   "CODE|REQUEST [view|control|full | --grant view|control|full] [--wait DURATION]",
		help: `Allows the device waiting to pair with the running 'gatehouse serve' whose pair
code (six digits, as the device shows them: "482 051" or 482051) or request id
you name, with the grant given (view: read-only, secret files hidden; control:
also stage and discard; full: everything, secret files shown). Name the code
the device in your hand shows: the allow reaches that request and no other,
so a request that arrived in its place is never allowed by mistake. Nothing
is allowed without a name. A paired device reconnecting after a restart keeps
its grant unless you give another. The grant is a word after the code or
--grant, as in 'devices grant': 'devices allow 482051 control' and 'devices
allow 482051 --grant control' are the same. 'gatehouse devices' lists the
waiting requests with their codes and ids; an id that starts with '-' goes
after '--' (gatehouse devices allow --grant view -- -x1Y2).`,
		setup: setupDevicesAllow,
	})
	register(&command{
		name:    "devices deny",
		summary: "deny a device waiting to pair with the running serve",
		usage:   "[CODE|REQUEST] [--wait DURATION]",
		help: `Refuses the waiting request whose pair code or request id you name, or with
none named every waiting request. Each is told "The computer did not allow
this device." and the link stays as it was.`,
		setup: setupDevicesDeny,
	})
	register(&command{
		name:    "devices grant",
		summary: "allow a device view, control or full access",
		usage:   "ID (view|control|full | --grant view|control|full) [--fingerprint FP]",
		help: `Gives device ID a grant on this computer, or changes the one it has: a LAN
device paired with 'gatehouse serve' (lan-…; its pairing is kept, and so are
its secrets: no new pair code) or a device of the relay account. The grant is
a word after the id or --grant, as in 'devices allow': 'devices grant ID
full' and 'devices grant ID --grant full' are the same.

A relay grant is bound to the key the relay shows for the device now. Compare
the fingerprint printed here with the one the device showed when it signed
in ('gatehouse login' prints it), or pass it with --fingerprint to refuse any
other key. A LAN device's grant stays bound to the secrets its pairing
agreed (--fingerprint, if given, must name them as 'gatehouse devices --json'
shows them).

  view     read-only methods; secret files hidden
  control  also stage and discard; secret files hidden
  full     every method (commit, push, switch, worktrees, edit files); secret
           files shown

What a grant allows in a repository also depends on the switch (gatehouse
access). A running 'gatehouse serve' sees the change at the device's next
request; with none running, the kept pairing is changed for the next one.`,
		setup: setupDevicesGrant,
	})
	register(&command{
		name:    "devices revoke",
		summary: "take back a device's grant on this computer",
		usage:   "ID",
		help: `Unpairs device ID from the running 'gatehouse serve' (a LAN pairing: its page
is told at once), or removes this computer's grant for a relay device: from its
next request on, serve answers it "not allowed". A relay device stays on the
account ('gatehouse devices remove' takes it off).`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runDevicesRevoke },
	})
	register(&command{
		name:    "devices name",
		summary: "give a paired device a name you choose",
		usage:   "ID NAME",
		help: `Names device ID so the devices can be told apart ("Ann's phone"): a LAN device
paired with 'gatehouse serve' (the running one's, or the pairing kept for the
next), the name kept with the pairing; or a relay device with a grant here,
the name kept with the grant (the relay's own name for it is unchanged). A
device that pairs again under the name of a paired one replaces it (the
pair request says so), so re-pairing never fills the device limit; two
paired devices never share a name.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runDevicesName },
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

// shown makes text a relay or device sent safe to print (display.Text:
// the one sanitizer for every name a relay or device supplies).
var shown = display.Text

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
	ans, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "status"})
	serving := err == nil
	switch {
	case serving:
		printLANStatus(e, ans.Status)
	case errors.Is(err, lan.ErrServeSilent):
		fmt.Fprintf(e.stderr, "gatehouse devices: %v\n", err)
		return exitFound
	case len(store.LAN().Devices) > 0:
		printKeptLAN(e, store)
		serving = true // something was listed
	}
	devs, err := relayDevices(id)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices: %s\n", trimRelay(err))
		return exitFound
	}
	if devs == nil && len(store.Grants()) == 0 {
		if !serving {
			fmt.Fprintln(e.stderr, "gatehouse devices: nothing to list: no 'gatehouse serve' is running with this state folder, this computer is not signed in to a relay, and no device has a grant here")
			return exitFound
		}
		return exitOK
	}
	fmt.Fprintln(e.stdout, "Relay devices:")
	grants := store.Grants()
	me := id.Profile().DeviceID
	caller := ""
	if cid, err := relay.OpenRole(store.Dir(), relay.ClientRole); err == nil {
		caller = cid.Profile().DeviceID
	}
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
		} else if d.ID == caller && caller != "" && grant == "none" {
			grant = "none (this computer's gatehouse call)"
		}
		online := "no"
		if d.Online {
			online = "yes"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", shown(d.ID), shown(d.Name), shown(d.Platform), online, fp, grant)
	}
	for _, gid := range notOnAccount(grants, seen) {
		g := grants[gid]
		fmt.Fprintf(w, "%s\t%s\t-\tnot on the account\t%s\t%s\n", shown(gid), shown(g.Name), g.Fingerprint, g.Grant)
	}
	_ = w.Flush()
	if devs == nil {
		fmt.Fprintln(e.stderr, "Not signed in to a relay: only the grants are listed. Run 'gatehouse login --relay URL'.")
	}
	return exitOK
}

func printLANStatus(e *env, st *lan.Status) {
	fmt.Fprintf(e.stdout, "Serving here (%s), %s\n", st.Kind, deviceList(st.Devices))
	if len(st.Devices) > 0 {
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "LAN DEVICE\tNAME\tONLINE\tLAST REQUEST\tGRANT")
		for _, d := range st.Devices {
			online := "no"
			if slices.Contains(st.Online, d.ID) {
				online = "yes"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", shown(d.ID), deviceName(d), online, ago(d.LastSeen), d.Grant)
		}
		w.Flush()
	}
	if st.Warning != "" {
		fmt.Fprintf(e.stdout, "! %s\n", st.Warning)
	}
	for _, r := range st.Requests {
		fmt.Fprintf(e.stdout, "Waiting: %s\n", requestLine(r))
	}
}

// requestLine says what a waiting request is and how to answer it.
func requestLine(r *lan.Request) string {
	code := strings.ReplaceAll(r.Code, " ", "")
	self := selfCommand()
	if r.Kind == lan.KindReconnect {
		return fmt.Sprintf("%s (%s, paired with %s access) asks to reconnect after a restart, from %s with code %s (request %s). If the device shows the same code: '%s devices allow %s'; else '%s devices deny %s'.",
			shown(r.Name), shown(r.Device), r.Grant, fromLine(r), r.Code, shown(r.ID), self, code, self, code)
	}
	return fmt.Sprintf("%s asks to pair from %s with code %s (request %s)%s. If the device shows the same code: '%s devices allow %s --grant view|control|full'; else '%s devices deny %s'.",
		shown(r.Name), fromLine(r), r.Code, shown(r.ID), replacing(r), self, code, self, code)
}

// control sends a command to the running serve, saying so when there is none.
func control(e *env, name string, req lan.ControlRequest) (*lan.Status, int) {
	store, code := openState(e)
	if store == nil {
		return nil, code
	}
	ans, err := lan.Control(store.Dir(), req)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse %s: %v\n", name, err)
		return nil, exitFound
	}
	return ans.Status, exitOK
}

func setupDevicesLink(fs *flag.FlagSet) func(*env, []string) int {
	withQR := fs.Bool("qr", false, "draw the QR code too")
	fresh := fs.Bool("new", false, "make a new link first; the old one pairs nothing more")
	return func(e *env, args []string) int {
		if len(args) > 0 {
			return usageError(e, named("devices link"), "unexpected argument %q", args[0])
		}
		op := "status"
		if *fresh {
			op = "rotate"
		}
		st, code := control(e, "devices link", lan.ControlRequest{Op: op})
		if st == nil {
			return code
		}
		fmt.Fprintln(e.stdout, st.Link)
		if *withQR {
			if q, err := qrText(st.Link); err == nil {
				fmt.Fprint(e.stdout, q)
			}
		}
		return exitOK
	}
}

// requestRef is the request named on the command line: an id, or a pair
// code typed as the device shows it ("482 051", one argument or two).
func requestRef(args []string) string { return strings.Join(args, "") }

func setupDevicesAllow(fs *flag.FlagSet) func(*env, []string) int {
	grant := fs.String("grant", "", "view, control or full (a reconnecting device keeps its grant when left out)")
	wait := fs.Duration("wait", 0, "wait this long for a request with that code to arrive (for scripts)")
	return func(e *env, args []string) int {
		c := named("devices allow")
		if len(args) >= 2 && isGrantWord(args[len(args)-1]) {
			if *grant != "" && *grant != args[len(args)-1] {
				return usageError(e, c, "two grants named: %q and --grant %q", args[len(args)-1], *grant)
			}
			*grant, args = args[len(args)-1], args[:len(args)-1]
		}
		if len(args) == 0 {
			return usageError(e, c, "name the request to allow: the pair code the device shows (or the request id that 'gatehouse devices' lists)")
		}
		if *grant != "" {
			if g, err := trust.ParseGrant(*grant); err != nil || g == trust.None {
				return usageError(e, c, "the grant is view, control or full, not %q", *grant)
			}
		}
		ref := requestRef(args)
		waitForRequest(e, ref, *wait)
		st, code := control(e, "devices allow", lan.ControlRequest{Op: "allow", Grant: *grant, Request: ref})
		if st == nil {
			return code
		}
		if *grant != "" {
			fmt.Fprintf(e.stdout, "Allowed with %s access.\n", *grant)
		} else {
			fmt.Fprintln(e.stdout, "Allowed.")
		}
		return exitOK
	}
}

func setupDevicesDeny(fs *flag.FlagSet) func(*env, []string) int {
	wait := fs.Duration("wait", 0, "wait this long for a request to arrive (for scripts)")
	return func(e *env, args []string) int {
		waitForRequest(e, requestRef(args), *wait)
		return runDevicesDeny(e, args)
	}
}

// waitForRequest polls the running serve until a request named ref (any
// request, for "") waits, or the time is up.
func waitForRequest(e *env, ref string, d time.Duration) {
	store, _ := openState(e)
	if store == nil || d <= 0 {
		return
	}
	digits := strings.ReplaceAll(ref, " ", "")
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ans, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "status"})
		if err != nil {
			continue
		}
		for _, r := range ans.Status.Requests {
			if ref == "" || r.ID == ref || strings.ReplaceAll(r.Code, " ", "") == digits {
				return
			}
		}
	}
}

func runDevicesDeny(e *env, args []string) int {
	st, code := openState(e)
	if st == nil {
		return code
	}
	ans, err := lan.Control(st.Dir(), lan.ControlRequest{Op: "deny", Request: requestRef(args)})
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices deny: %v\n", err)
		return exitFound
	}
	switch {
	case len(args) > 0:
		fmt.Fprintln(e.stdout, "Denied.")
	case ans.Denied == 0:
		fmt.Fprintln(e.stderr, "gatehouse devices deny: no device is waiting to be allowed")
		return exitFound
	default:
		fmt.Fprintf(e.stdout, "Denied %s.\n", count(ans.Denied, "waiting request"))
	}
	return exitOK
}

// grantLAN gives the LAN device id grant g: through the running serve, or
// in the pairing kept for the next one when none runs. done is false when
// id is not a LAN device here (it may be a relay device).
func grantLAN(e *env, id string, g trust.Grant, wantFP string) (code int, done bool) {
	store, code := openState(e)
	if store == nil {
		return code, true
	}
	fp, known := lanFingerprint(store, id)
	if !known {
		return 0, false
	}
	if wantFP != "" && wantFP != fp {
		fmt.Fprintf(e.stderr, "gatehouse devices grant: %s's pairing has fingerprint %s, not %s; not granted\n", shown(id), fp, wantFP)
		return exitFound, true
	}
	_, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "grant", Device: id, Grant: g.String()})
	switch {
	case err == nil:
		fmt.Fprintf(e.stdout, "Granted %s %s access; its next request runs with it.\n", shown(id), g)
		return exitOK, true
	case errors.Is(err, lan.ErrNoServe):
		if err := updateKept(store, id, func(d *trust.LANDevice) { d.Grant = g }); err != nil {
			fmt.Fprintf(e.stderr, "gatehouse devices grant: %v\n", err)
			return exitUsage, true
		}
		fmt.Fprintf(e.stdout, "Granted %s %s access, kept for when serve runs.\n", shown(id), g)
		return exitOK, true
	}
	fmt.Fprintf(e.stderr, "gatehouse devices grant: %s\n", personal(err))
	return exitFound, true
}

// lanFingerprint is the fingerprint of LAN device id's pairing: the
// running serve's, else the kept one's. known is false when neither has it.
func lanFingerprint(store *trust.Store, id string) (fp string, known bool) {
	ans, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "status"})
	if err == nil {
		for _, d := range ans.Status.Devices {
			if d.ID == id {
				return d.Fingerprint, true
			}
		}
		return "", false
	}
	if errors.Is(err, lan.ErrServeSilent) {
		return "", true // it may hold the device: the grant op says so
	}
	for _, d := range store.LAN().Devices {
		if d.ID == id {
			return d.Fingerprint, true
		}
	}
	return "", false
}

// updateKept changes LAN device id in the pairings kept for the next serve,
// while none runs.
func updateKept(store *trust.Store, id string, change func(*trust.LANDevice)) error {
	return store.UpdateLAN(func(st *trust.LANState) error {
		for i := range st.Devices {
			if st.Devices[i].ID == id {
				change(&st.Devices[i])
				return nil
			}
		}
		return fmt.Errorf("no kept pairing %q", id)
	})
}

// renameKept names a kept LAN pairing while no serve runs. done is false
// when id is not one; msg says why a name was refused.
func renameKept(store *trust.Store, id, name string) (done bool, msg string) {
	st := store.LAN()
	found := false
	for _, d := range st.Devices {
		// One name, one device, as the pairing judges names.
		if d.ID != id && strings.EqualFold(strings.TrimSpace(d.Name), name) {
			return true, fmt.Sprintf("another paired device, %s, is called %q", shown(d.ID), display.Text(d.Name))
		}
		found = found || d.ID == id
	}
	if !found {
		return false, ""
	}
	if err := updateKept(store, id, func(d *trust.LANDevice) { d.Name = name }); err != nil {
		return true, err.Error()
	}
	return true, ""
}

// isGrantWord reports whether arg names a grant a device may be given.
func isGrantWord(arg string) bool {
	g, err := trust.ParseGrant(arg)
	return err == nil && g != trust.None
}

func setupDevicesGrant(fs *flag.FlagSet) func(*env, []string) int {
	want := fs.String("fingerprint", "", "refuse unless the device's key has this fingerprint")
	flagGrant := fs.String("grant", "", "view, control or full (or as a word after the id)")
	return func(e *env, args []string) int {
		c := named("devices grant")
		word := *flagGrant
		switch {
		case len(args) == 2 && word != "" && word != args[1]:
			return usageError(e, c, "two grants named: %q and --grant %q", args[1], word)
		case len(args) == 2:
			word = args[1]
		case len(args) != 1 || word == "":
			return usageError(e, c, "name a device id and a grant: view, control or full")
		}
		g, err := trust.ParseGrant(word)
		if err != nil || g == trust.None {
			return usageError(e, c, "the grant is view, control or full, not %q", word)
		}
		if code, done := grantLAN(e, args[0], g, *want); done {
			return code
		}
		id, store, code := identity(e)
		if id == nil {
			return code
		}
		devs, err := relayDevices(id)
		if err != nil || devs == nil {
			fmt.Fprintf(e.stderr, "gatehouse devices grant: no device %q is paired here, and this computer is not signed in to a relay (gatehouse login --relay URL); %s\n", shown(args[0]), knownDeviceList(knownDeviceNames(store)))
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
			if !relay.ValidDeviceID(d.ID) { // the list is the relay's word
				fmt.Fprintf(e.stderr, "gatehouse devices grant: invalid device id %q\n", d.ID)
				return exitUsage
			}
			if err := store.SetGrant(d.ID, trust.DeviceGrant{Grant: g, Fingerprint: fp, Name: d.Name, GrantedAt: time.Now().UTC()}); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse devices grant: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(e.stdout, "Granted %s (%s) %s access, bound to key %s.\n", shown(d.ID), shown(d.Name), g, fp)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "gatehouse devices grant: no device %q is paired here or on this relay account ('gatehouse devices' lists them)\n", shown(args[0]))
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
	_, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "revoke", Device: args[0]})
	switch {
	case err == nil:
		fmt.Fprintf(e.stdout, "Unpaired %s.\n", shown(args[0]))
		return exitOK
	case errors.Is(err, lan.ErrServeSilent):
		// It may hold the device; saying "not paired" would be a guess.
		fmt.Fprintf(e.stderr, "gatehouse devices revoke: %v\n", err)
		return exitFound
	case errors.Is(err, lan.ErrNoServe):
		if forgotKept(store, args[0]) {
			fmt.Fprintf(e.stdout, "Unpaired %s: its kept pairing is gone, so it will not come back when serve runs.\n", shown(args[0]))
			return exitOK
		}
	}
	if _, granted := store.Grants()[args[0]]; !granted {
		// A typo must not look like a revocation that worked.
		fmt.Fprintf(e.stderr, "gatehouse devices revoke: no device %q is paired with a running serve or granted on this computer ('gatehouse devices' lists them)\n", shown(args[0]))
		return exitFound
	}
	if err := store.Revoke(args[0]); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices revoke: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "%s has no access to this computer now.\n", shown(args[0]))
	return exitOK
}

// forgotKept removes a LAN pairing kept for the next serve, while none runs.
func forgotKept(store *trust.Store, id string) bool {
	err := store.UpdateLAN(func(st *trust.LANState) error {
		kept := st.Devices[:0]
		for _, d := range st.Devices {
			if d.ID != id {
				kept = append(kept, d)
			}
		}
		if len(kept) == len(st.Devices) {
			return errNoKept
		}
		st.Devices = kept
		return nil
	})
	return err == nil
}

var errNoKept = errors.New("no such kept pairing")

func runDevicesName(e *env, args []string) int {
	c := named("devices name")
	if len(args) != 2 {
		return usageError(e, c, "give a device id and its new name")
	}
	name := strings.TrimSpace(args[1])
	if n := utf8.RuneCountInString(name); n == 0 || n > 64 || lan.CleanName(name) != name {
		return usageError(e, c, "a name has 1 to 64 characters, none of them a control character")
	}
	store, code := openState(e)
	if store == nil {
		return code
	}
	if other := deviceWithID(store, name); other != "" && other != args[0] {
		return usageError(e, c, "%s is another device's id; a name that reads as one would be taken for that device in every list", shown(other))
	}
	_, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "rename", Device: args[0], Name: name})
	switch {
	case err == nil:
		fmt.Fprintf(e.stdout, "%s is now %q.\n", shown(args[0]), display.Text(name))
		return exitOK
	case errors.Is(err, lan.ErrServeSilent):
		fmt.Fprintf(e.stderr, "gatehouse devices name: %v\n", err)
		return exitFound
	case errors.Is(err, lan.ErrNoServe):
		if done, msg := renameKept(store, args[0], name); done {
			if msg != "" {
				fmt.Fprintf(e.stderr, "gatehouse devices name: %s\n", msg)
				return exitFound
			}
			fmt.Fprintf(e.stdout, "%s is now %q (kept for when serve runs).\n", shown(args[0]), display.Text(name))
			return exitOK
		}
	case !lan.IsNotPaired(err):
		fmt.Fprintf(e.stderr, "gatehouse devices name: %s\n", personal(err))
		return exitFound
	}
	g, granted := store.Grants()[args[0]]
	if !granted {
		fmt.Fprintf(e.stderr, "gatehouse devices name: no device %q is paired or granted here; %s\n", shown(args[0]), knownDeviceList(knownDeviceNames(store)))
		return exitFound
	}
	g.Name = name
	if err := store.SetGrant(args[0], g); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices name: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "%s is now %q on this computer.\n", shown(args[0]), display.Text(name))
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

// devicesReport is 'gatehouse devices --json'.
type devicesReport struct {
	Serving       bool               `json:"serving"`
	URL           string             `json:"url,omitempty"`
	LAN           []devicesLAN       `json:"lan"`
	Waiting       []devicesWaiting   `json:"waiting"`
	RelaySignedIn bool               `json:"relaySignedIn"`
	Relay         []devicesRelayItem `json:"relay"`
}

type devicesLAN struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Grant       string    `json:"grant"`
	Online      bool      `json:"online"`
	LastSeen    time.Time `json:"lastSeen"`
	Fingerprint string    `json:"fingerprint"`
	Kept        bool      `json:"kept"`
}

type devicesWaiting struct {
	ID     string `json:"id"`
	Code   string `json:"code"`
	Name   string `json:"name"`
	From   string `json:"from"`
	Kind   string `json:"kind"`
	Device string `json:"device,omitempty"`
	Grant  string `json:"grant,omitempty"`
}

type devicesRelayItem struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Platform     string `json:"platform"`
	Online       bool   `json:"online"`
	Fingerprint  string `json:"fingerprint"`
	Grant        string `json:"grant"`
	KeyChanged   bool   `json:"keyChanged"`
	OnAccount    bool   `json:"onAccount"`
	ThisComputer bool   `json:"thisComputer"`
}

// runDevicesJSON is runDevices as one JSON object, with its exit codes.
func runDevicesJSON(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, named("devices"), "unexpected argument %q", args[0])
	}
	id, store, code := identity(e)
	if id == nil {
		return code
	}
	rep := devicesReport{LAN: []devicesLAN{}, Waiting: []devicesWaiting{}, Relay: []devicesRelayItem{}}
	ans, err := lan.Control(store.Dir(), lan.ControlRequest{Op: "status"})
	switch {
	case err == nil:
		st := ans.Status
		rep.Serving, rep.URL = true, st.URL
		for _, d := range st.Devices {
			rep.LAN = append(rep.LAN, devicesLAN{ID: d.ID, Name: d.Name, Grant: d.Grant.String(), Online: slices.Contains(st.Online, d.ID),
				LastSeen: d.LastSeen, Fingerprint: d.Fingerprint})
		}
		for _, r := range st.Requests {
			w := devicesWaiting{ID: r.ID, Code: r.Code, Name: r.Name, From: r.From, Kind: "pair"}
			if r.Kind == lan.KindReconnect {
				w.Kind, w.Device, w.Grant = "reconnect", r.Device, r.Grant.String()
			}
			rep.Waiting = append(rep.Waiting, w)
		}
	case errors.Is(err, lan.ErrServeSilent):
		fmt.Fprintf(e.stderr, "gatehouse devices: %v\n", err)
		return exitFound
	default:
		for _, d := range store.LAN().Devices {
			rep.LAN = append(rep.LAN, devicesLAN{ID: d.ID, Name: d.Name, Grant: d.Grant.String(), LastSeen: d.LastSeen, Fingerprint: d.Fingerprint, Kept: true})
		}
	}
	devs, err := relayDevices(id)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse devices: %s\n", trimRelay(err))
		return exitFound
	}
	rep.RelaySignedIn = devs != nil
	rep.Relay = relayItems(id, store, devs)
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintln(e.stdout, string(b))
	if !rep.Serving && len(rep.LAN) == 0 && len(rep.Relay) == 0 && !rep.RelaySignedIn {
		return exitFound // nothing to list, as the text says on standard error
	}
	return exitOK
}

// relayItems lists the account's devices with this computer's grant for
// each, then the grants of devices no longer on the account.
func relayItems(id *relay.Identity, store *trust.Store, devs []relay.Device) []devicesRelayItem {
	out := []devicesRelayItem{}
	grants := store.Grants()
	me := id.Profile().DeviceID
	seen := map[string]bool{}
	for _, d := range devs {
		seen[d.ID] = true
		it := devicesRelayItem{ID: d.ID, Name: d.Name, Platform: d.Platform, Online: d.Online, Fingerprint: fingerprintOf(d),
			Grant: "none", OnAccount: true, ThisComputer: d.ID == me}
		if g, ok := grants[d.ID]; ok {
			it.Grant, it.KeyChanged = g.Grant.String(), g.Fingerprint != it.Fingerprint
		}
		out = append(out, it)
	}
	for _, gid := range notOnAccount(grants, seen) {
		g := grants[gid]
		out = append(out, devicesRelayItem{ID: gid, Name: g.Name, Fingerprint: g.Fingerprint, Grant: g.Grant.String()})
	}
	return out
}

// notOnAccount lists, sorted, the devices with a grant here that the relay
// account's list did not name (seen), for both of devices' outputs.
func notOnAccount[G any](grants map[string]G, seen map[string]bool) []string {
	var rest []string
	for gid := range grants {
		if !seen[gid] {
			rest = append(rest, gid)
		}
	}
	sort.Strings(rest)
	return rest
}

// deviceWithID is the id of a device, LAN or relay, that name spells
// (letter case aside), or "". The red team named one device by another's
// id: accepted, and 'devices' then listed "lan-A (lan-B)".
func deviceWithID(store *trust.Store, name string) string {
	for _, d := range store.LAN().Devices {
		if strings.EqualFold(d.ID, name) {
			return d.ID
		}
	}
	for id := range store.Grants() {
		if strings.EqualFold(id, name) {
			return id
		}
	}
	return ""
}
