package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "doctor",
		summary: "say what protects this computer right now",
		usage:   "[--json]",
		help: `Reports what protects this computer right now: how files are opened
(openat2 or the fallback walk), the kernel's walls around a phone's git
(Landlock's ABI or "missing", the memory bound, the git folder's shape
check), the state folder and its permissions (and whether another user
could replace it through a folder on its path, which serve refuses), whether
any state file is unreadable (and so treated as empty), the Full access
switch, the devices with a grant, what the running serve serves (as
'gatehouse status' says), and the relay sign-ins (this computer as a
host, with the key fingerprint a calling device compares, and the device
'gatehouse call' uses). Exits 1 when something needs attention.

The devices with a grant are every device that may reach this computer: the
LAN devices paired with serve (the running one's, else the pairings kept for
the next) and the relay devices granted here.

--json prints one object instead, with the same exit code: version, os,
arch, fileOpens, git {version, path, lazyFetchSwitch} (null when git is not
found), stateFolder, landlock, landlockEnforced, memoryBound,
memoryTotalMiB, processes [{what, walls}], fullAccess, devices [{id, name,
grant, transport ("lan" or "relay"), fingerprint}], serve {url, kind,
started, served [{id, name, path, kind}], online [ids], waiting} (null when
none runs; never the pairing link), relay [{role ("host" or
"call"), url, signedIn, account, deviceId, fingerprint}], problems (the
sentences marked "!" in the text) and ok.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			asJSON := fs.Bool("json", false, "print one JSON object (fields above)")
			return func(e *env, args []string) int { return runDoctor(e, args, *asJSON) }
		},
	})
}

// doctorReport is what doctor found, as --json prints it.
type doctorReport struct {
	Version          string          `json:"version"`
	OS               string          `json:"os"`
	Arch             string          `json:"arch"`
	FileOpens        string          `json:"fileOpens"`
	Git              *doctorGit      `json:"git"`
	StateFolder      string          `json:"stateFolder"`
	SettingsFile     string          `json:"settingsFile"`
	Landlock         string          `json:"landlock"`
	LandlockEnforced bool            `json:"landlockEnforced"`
	MemoryBound      string          `json:"memoryBound"`
	MemoryTotalMiB   int64           `json:"memoryTotalMiB"`
	Processes        []doctorProcess `json:"processes"`
	FullAccess       bool            `json:"fullAccess"`
	Devices          []doctorDevice  `json:"devices"`
	Serve            *doctorServe    `json:"serve"`
	Relay            []doctorRelay   `json:"relay"`
	Problems         []string        `json:"problems"`
	OK               bool            `json:"ok"`
}

// doctorServe is what the running serve does; never its pairing link,
// whose key lets a device ask to pair (doctor's output is pasted into bug
// reports).
type doctorServe struct {
	URL     string             `json:"url"`
	Kind    lan.Kind           `json:"kind"`
	Started time.Time          `json:"started"`
	Served  []lan.ServedFolder `json:"served"`
	Online  []string           `json:"online"`
	Waiting int                `json:"waiting"` // pair requests waiting
}

func newDoctorServe(st *lan.Status) *doctorServe {
	if st == nil {
		return nil
	}
	return &doctorServe{URL: st.URL, Kind: st.Kind, Started: st.Started, Served: append([]lan.ServedFolder{}, st.Served...),
		Online: append([]string{}, st.Online...), Waiting: len(st.Requests)}
}

type doctorGit struct {
	Version         string `json:"version"`
	Path            string `json:"path"`
	LazyFetchSwitch bool   `json:"lazyFetchSwitch"`
}

type doctorProcess struct {
	What  string `json:"what"`
	Walls string `json:"walls"`
}

// doctorDevice is a device that may reach this computer.
type doctorDevice struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Grant       string `json:"grant"`
	Transport   string `json:"transport"` // lan or relay
	Fingerprint string `json:"fingerprint"`
}

type doctorRelay struct {
	Role        string `json:"role"` // host or call
	URL         string `json:"url"`
	SignedIn    bool   `json:"signedIn"`
	Account     string `json:"account,omitempty"`
	DeviceID    string `json:"deviceId,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// grantedDevices lists every device with a grant here: the LAN pairings
// (the running serve's when st is not nil, else the kept ones), then the
// relay grants, each sorted by id.
func grantedDevices(store *trust.Store, st *lan.Status) []doctorDevice {
	out := []doctorDevice{}
	if st != nil {
		for _, d := range st.Devices {
			out = append(out, doctorDevice{ID: d.ID, Name: d.Name, Grant: d.Grant.String(), Transport: "lan", Fingerprint: d.Fingerprint})
		}
	} else {
		for _, d := range store.LAN().Devices {
			out = append(out, doctorDevice{ID: d.ID, Name: d.Name, Grant: d.Grant.String(), Transport: "lan", Fingerprint: d.Fingerprint})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	grants := store.Grants()
	ids := make([]string, 0, len(grants))
	for id := range grants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := grants[id]
		out = append(out, doctorDevice{ID: id, Name: g.Name, Grant: g.Grant.String(), Transport: "relay", Fingerprint: g.Fingerprint})
	}
	return out
}

func runDoctor(e *env, args []string, asJSON bool) int {
	if len(args) > 0 {
		return usageError(e, named("doctor"), "takes no arguments")
	}
	out := e.stdout
	if asJSON {
		out = io.Discard
	}
	rep := &doctorReport{Version: version, OS: runtime.GOOS, Arch: runtime.GOARCH, FileOpens: fsguard.Mechanism(),
		Processes: []doctorProcess{}, Devices: []doctorDevice{}, Relay: []doctorRelay{}, Problems: []string{}}
	code := doctorChecks(e, out, rep)
	if code == exitUsage {
		return code
	}
	rep.OK = code == exitOK
	if asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	}
	return code
}

// doctorChecks writes the text report to out while it fills rep; it
// returns the exit code.
func doctorChecks(e *env, out io.Writer, rep *doctorReport) int {
	code := exitOK
	warn := func(format string, a ...any) {
		fmt.Fprintf(out, "  ! "+format+"\n", a...)
		rep.Problems = append(rep.Problems, fmt.Sprintf(format, a...))
		code = exitFound
	}
	fmt.Fprintf(out, "gatehouse %s on %s/%s\n", version, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(out, "file opens: %s\n", fsguard.Mechanism())
	if v, path, err := gate.Version(context.Background(), ""); err != nil {
		warn("git: not found or not runnable (%v); gatehouse needs git on PATH", err)
	} else {
		rep.Git = &doctorGit{Version: v, Path: path, LazyFetchSwitch: gate.LazyFetchSwitch(v)}
		fmt.Fprintf(out, "git: %s (%s)\n", v, path)
		if !gate.LazyFetchSwitch(v) {
			fmt.Fprintln(out, "  this git has no GIT_NO_LAZY_FETCH (2.44+): partial clones are refused for phones instead")
		}
	}

	store, c := openState(e)
	if store == nil {
		return c
	}
	rep.StateFolder = store.Dir()
	fmt.Fprintf(out, "state folder: %s\n", store.Dir())
	if err := trust.CheckFolder(store.Dir()); err != nil {
		warn("%v ('gatehouse serve' refuses to run on it)", err)
	}
	if fi, err := os.Stat(store.Dir()); err == nil && fi.Mode().Perm()&0o077 != 0 {
		warn("the state folder is readable by others (%v); gatehouse narrows it to 0700 when it opens it", fi.Mode().Perm())
	}
	for _, name := range []string{"settings.json", "grants.json", "targets.json", "lan.json"} {
		if fi, err := os.Lstat(store.Dir() + "/" + name); err == nil && fi.Mode().Perm()&0o077 != 0 {
			warn("%s is readable by others (%v)", name, fi.Mode().Perm())
		}
	}
	rep.SettingsFile = store.SettingsFile()
	fmt.Fprintf(out, "settings file: %s (gitMemoryLimitMiB, gitMemoryTotalMiB, clonesDir)\n", store.SettingsFile())
	if store.ConfigDir() != store.Dir() {
		if err := trust.CheckConfigFolder(store.ConfigDir()); err != nil {
			warn("%v ('gatehouse serve' refuses to run on it)", err)
		}
	}
	if stale := store.StaleSettings(); len(stale) > 0 {
		warn("%s in %s/settings.json are not read: %s is; move them there", strings.Join(stale, ", "), store.Dir(), store.SettingsFile())
	}
	for _, p := range store.Problems() {
		warn("unreadable state file, treated as empty: %v", p)
	}
	set := store.Settings()
	walls := gate.Walls("", gate.Options{MemoryLimitMiB: set.GitMemoryLimitMiB})
	rep.Landlock, rep.LandlockEnforced, rep.MemoryBound = walls.Landlock, walls.Enforced && !walls.Broken, walls.Memory
	fmt.Fprintf(out, "kernel wall (Landlock): %s\n", walls.Landlock)
	if walls.Broken {
		warn("the kernel claims Landlock but did not enforce it in gatehouse's self-test: every git call of a phone with Full access off is refused")
	} else if !walls.Enforced {
		fmt.Fprintln(out, "  closed git children run without the kernel wall here; the gates and the git folder's shape check still apply")
	}
	fmt.Fprintf(out, "memory bound: %s\n", walls.Memory)
	budget := gate.NewMemoryBudget(set.GitMemoryTotalMiB, set.GitMemoryLimitMiB)
	rep.MemoryTotalMiB = budget.Total() >> 20
	fmt.Fprintf(out, "memory of all closed children at once: at most %d MiB (gitMemoryTotalMiB in the settings file; default half of this computer's memory)\n", budget.Total()>>20)
	fmt.Fprintln(out, "git folder shape check: before every closed call")
	fmt.Fprintln(out, "processes gatehouse starts, and their walls:")
	for _, p := range gate.Processes(walls, budget) {
		rep.Processes = append(rep.Processes, doctorProcess{What: p.What, Walls: p.Walls})
		fmt.Fprintf(out, "  %s: %s\n", p.What, p.Walls)
	}
	rep.FullAccess = store.FullAccess()
	if rep.FullAccess {
		fmt.Fprintln(out, "Full access for remote devices: on (phones run git as you do, hooks included)")
	} else {
		fmt.Fprintln(out, "Full access for remote devices: off (phones get the closed gate)")
	}
	st, serr := serveStatus(store)
	if serr != nil {
		st = nil
	}
	rep.Serve = newDoctorServe(st)
	rep.Devices = grantedDevices(store, st)
	fmt.Fprintf(out, "devices with a grant: %d\n", len(rep.Devices))
	for _, d := range rep.Devices {
		fmt.Fprintf(out, "  %s  %-5s %-7s key %s  %s\n", display.Text(d.ID), d.Transport, d.Grant, d.Fingerprint, display.Text(d.Name))
	}
	quiet := *e
	quiet.stdout = out
	switch {
	case serr == nil:
		printServeStatus(&quiet, st)
	case errors.Is(serr, lan.ErrServeSilent):
		warn("serve: %v", serr)
	default:
		fmt.Fprintln(out, "serve: not running with this state folder")
		printKeptLAN(&quiet, store)
	}
	for _, r := range []struct{ role, name, label, login string }{
		{relay.HostRole, "host", "relay", "gatehouse login"},
		{relay.ClientRole, "call", "relay for calls", "gatehouse login --for call"},
	} {
		id, err := relay.OpenRole(store.Dir(), r.role)
		if err != nil {
			warn("%s: %v", r.label, err)
			continue
		}
		p := id.Profile()
		rr := doctorRelay{Role: r.name, URL: p.URL}
		if p.URL == "" {
			fmt.Fprintf(out, "%s: not signed in\n", r.label)
		} else if _, err := id.Token(); err != nil {
			fmt.Fprintf(out, "%s: signed out of %s (%s --relay %s)\n", r.label, p.URL, r.login, p.URL)
		} else if key, err := id.Key(); err == nil {
			// The relay chose the account name: shown disarmed.
			rr.SignedIn, rr.Account, rr.DeviceID, rr.Fingerprint = true, p.Account.Login, p.DeviceID, trust.Fingerprint(key.PublicKey().Bytes())
			fmt.Fprintf(out, "%s: %s as %s, device %s, key %s\n", r.label, p.URL, display.Text(p.Account.Login), p.DeviceID, trust.Fingerprint(key.PublicKey().Bytes()))
		}
		rep.Relay = append(rep.Relay, rr)
	}
	if code == exitOK {
		fmt.Fprintln(out, "ok")
	}
	return code
}
