package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"

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
		usage:   "",
		help: `Reports what protects this computer right now: how files are opened
(openat2 or the fallback walk), the kernel's walls around a phone's git
(Landlock's ABI or "missing", the memory bound, the git folder's shape
check), the state folder and its permissions (and whether another user
could replace it through a folder on its path, which serve refuses), whether
any state file is unreadable (and so treated as empty), the Full access
switch, the devices with a grant, what the running serve serves (as
'gatehouse status' says), and the relay sign-ins (this computer as a
host, with the key fingerprint a calling device compares, and the device
'gatehouse call' uses). Exits 1 when something needs attention.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runDoctor },
	})
}

func runDoctor(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, named("doctor"), "takes no arguments")
	}
	code := exitOK
	warn := func(format string, a ...any) {
		fmt.Fprintf(e.stdout, "  ! "+format+"\n", a...)
		code = exitFound
	}
	fmt.Fprintf(e.stdout, "gatehouse %s on %s/%s\n", version, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(e.stdout, "file opens: %s\n", fsguard.Mechanism())
	if v, path, err := gate.Version(context.Background(), ""); err != nil {
		warn("git: not found or not runnable (%v); gatehouse needs git on PATH", err)
	} else {
		fmt.Fprintf(e.stdout, "git: %s (%s)\n", v, path)
		if !gate.LazyFetchSwitch(v) {
			fmt.Fprintln(e.stdout, "  this git has no GIT_NO_LAZY_FETCH (2.44+): partial clones are refused for phones instead")
		}
	}

	store, c := openState(e)
	if store == nil {
		return c
	}
	fmt.Fprintf(e.stdout, "state folder: %s\n", store.Dir())
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
	for _, p := range store.Problems() {
		warn("unreadable state file, treated as empty: %v", p)
	}
	set := store.Settings()
	walls := gate.Walls("", gate.Options{MemoryLimitMiB: set.GitMemoryLimitMiB})
	fmt.Fprintf(e.stdout, "kernel wall (Landlock): %s\n", walls.Landlock)
	if walls.Broken {
		warn("the kernel claims Landlock but did not enforce it in gatehouse's self-test: every git call of a phone with Full access off is refused")
	} else if !walls.Enforced {
		fmt.Fprintln(e.stdout, "  closed git children run without the kernel wall here; the gates and the git folder's shape check still apply")
	}
	fmt.Fprintf(e.stdout, "memory bound: %s\n", walls.Memory)
	budget := gate.NewMemoryBudget(set.GitMemoryTotalMiB, set.GitMemoryLimitMiB)
	fmt.Fprintf(e.stdout, "memory of all closed children at once: at most %d MiB (gitMemoryTotalMiB in settings.json; default half of this computer's memory)\n", budget.Total()>>20)
	fmt.Fprintln(e.stdout, "git folder shape check: before every closed call")
	fmt.Fprintln(e.stdout, "processes gatehouse starts, and their walls:")
	for _, p := range gate.Processes(walls, budget) {
		fmt.Fprintf(e.stdout, "  %s: %s\n", p.What, p.Walls)
	}
	if store.FullAccess() {
		fmt.Fprintln(e.stdout, "Full access for remote devices: on (phones run git as you do, hooks included)")
	} else {
		fmt.Fprintln(e.stdout, "Full access for remote devices: off (phones get the closed gate)")
	}
	grants := store.Grants()
	ids := make([]string, 0, len(grants))
	for id := range grants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintf(e.stdout, "devices with a grant: %d\n", len(ids))
	for _, id := range ids {
		g := grants[id]
		fmt.Fprintf(e.stdout, "  %s  %-7s key %s  %s\n", display.Text(id), g.Grant, g.Fingerprint, display.Text(g.Name))
	}
	switch st, err := serveStatus(store); {
	case err == nil:
		printServeStatus(e, st)
	case errors.Is(err, lan.ErrServeSilent):
		warn("serve: %v", err)
	default:
		fmt.Fprintln(e.stdout, "serve: not running with this state folder")
		printKeptLAN(e, store)
	}
	for _, r := range []struct{ role, label, login string }{
		{relay.HostRole, "relay", "gatehouse login"},
		{relay.ClientRole, "relay for calls", "gatehouse login --for call"},
	} {
		id, err := relay.OpenRole(store.Dir(), r.role)
		if err != nil {
			warn("%s: %v", r.label, err)
			continue
		}
		p := id.Profile()
		if p.URL == "" {
			fmt.Fprintf(e.stdout, "%s: not signed in\n", r.label)
		} else if _, err := id.Token(); err != nil {
			fmt.Fprintf(e.stdout, "%s: signed out of %s (%s --relay %s)\n", r.label, p.URL, r.login, p.URL)
		} else if key, err := id.Key(); err == nil {
			// The relay chose the account name: shown disarmed.
			fmt.Fprintf(e.stdout, "%s: %s as %s, device %s, key %s\n", r.label, p.URL, display.Text(p.Account.Login), p.DeviceID, trust.Fingerprint(key.PublicKey().Bytes()))
		}
	}
	if code == exitOK {
		fmt.Fprintln(e.stdout, "ok")
	}
	return code
}
