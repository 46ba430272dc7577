package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/link"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "serve checkouts to your phone and other devices",
		usage:   "[--listen auto|tailscale|lan|loopback|none|ADDR|ADDR:PORT] [--port N] [--tls-cert FILE --tls-key FILE] [--no-tui] [--relay URL] [PATH...]",
		help: `Serves the checkouts named (default: the current folder) to your devices.

On a LAN or Tailscale address (the default): gatehouse listens on one
Tailscale address, or else one private LAN address, never a public one or all
interfaces (--listen names one, with its port if you like: 127.0.0.1:28999),
and shows a pairing link and its QR code. Open it on the phone; the page
and this terminal show a pair code: allow the request here only if the codes
match, with a grant (view, control, full), or deny it. Keys are agreed, never
sent. A link pairs one device and is then replaced; at most 3 devices pair.
Pairings survive a restart: each device's secrets and grant are kept in the
state folder (lan.json, 0600) and the port chosen the first time is used
again, so a page left open reconnects by itself, and a page opened after the
restart asks once more by a code (it keeps its grant); 'devices revoke ID'
ends a pairing for good. serve refuses to start when another program holds
that port, which could be posing as it to the phones.

The page is plain HTTP, every body sealed: that defeats a listener and
replays, not someone who can change traffic on the network, so prefer
Tailscale on networks you do not trust. With --tls-cert and --tls-key (a
certificate for this machine's Tailscale name, from 'tailscale cert') the page
is served over HTTPS at that name: no other program can pose as it, and a page
opened after a restart needs no new code.

In the terminal: answer the pair request on screen with one key, v, c or f
(the grant) or d (deny), no Enter needed; a reconnecting device with a (its
grant). q hides or shows the QR code, n makes a new link, l lists devices, r
then an id and Enter unpairs one. (Should the terminal refuse to hand over
single keys, each is followed by Enter, and the prompts say so.)
Without a terminal (--no-tui, or a service), use 'gatehouse devices' from
another shell: 'devices link', 'devices allow CODE --grant view', 'devices
deny CODE', 'devices revoke ID'.

With --relay URL, this computer also answers the devices of its relay
account (and still serves the LAN address, quietly: pair with 'gatehouse
devices'; --listen none for the relay only) ('gatehouse login --relay URL' first), sealed end to end; a device gets
an answer only with a grant this computer gave it for the key it shows now
('gatehouse devices grant').

Either way, what a device may do is decided here, for every request: its grant,
and the switch 'Full access for remote devices' (gatehouse access; off by
default: git runs with the repository's hooks, filters, drivers and transports
switched off, and editing files is refused). Every request is written to the
request log ('gatehouse log'). Stop with Ctrl-C.

The state folder holds the grants and the switch, so serve refuses one that
another user could replace: every folder on its path must belong to root or
you and be writable by nobody else, except a sticky folder like /tmp
('gatehouse doctor' says which folder is at fault). It checks again while it
runs and stops if that changes. It also refuses to start where a serve with
the LAN address already runs in the same state folder, and says where that
one answers.`,
		setup: setupServe,
	})
}

// hostOptions builds what every transport's host shares: the methods, the
// served checkouts, the switch from the state folder, the request log, and
// worktrees made through gatehouse remembered there. Grants and events are
// each transport's: LAN pairings, or relay grants from the state folder.
func hostOptions(store *trust.Store, paths []string, logger *slog.Logger) (rpc.HostOptions, func(), error) {
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		return rpc.HostOptions{}, nil, err
	}
	home, _ := os.UserHomeDir()
	set := store.Settings()
	targets := rpc.NewTargets(fsguard.Options{Home: home, StateDir: store.Dir(), ConfigDir: store.ConfigDir()}, gate.Options{MemoryLimitMiB: set.GitMemoryLimitMiB,
		Budget:  gate.NewMemoryBudget(set.GitMemoryTotalMiB, set.GitMemoryLimitMiB), // one for every checkout served
		Monitor: monitorProgram()})
	served := map[string]bool{}
	for _, p := range paths {
		t, err := targets.Add(p, trust.Served, "")
		if err != nil {
			targets.Close()
			return rpc.HostOptions{}, nil, fmt.Errorf("%s: %w", p, err)
		}
		served[t.ID] = true
	}
	for _, t := range store.Targets() { // repositories cloned for a device earlier
		if t.Kind == trust.Clone {
			if ct, err := targets.Add(t.Path, trust.Clone, ""); err == nil {
				served[ct.ID] = true
			} else {
				cmp.Or(logger, slog.Default()).Warn("a clone made earlier is not served", "path", t.Path, "err", err)
			}
		}
	}
	for _, t := range store.Targets() { // worktrees made earlier for a device, of a checkout served now
		if t.Kind == trust.Worktree && served[t.Parent] {
			_, _ = targets.Add(t.Path, trust.Worktree, t.Parent)
		}
	}
	log, err := rpc.OpenRequestLog(store.Dir())
	if err != nil {
		targets.Close()
		return rpc.HostOptions{}, nil, err
	}
	o := rpc.HostOptions{Registry: reg, Targets: targets, FullAccess: store.FullAccess, Log: log,
		Version: version, Logger: logger, ClonesDir: store.Settings().ClonesFolder(home),
		Remember: func(kind trust.TargetKind, id, path, parent string) {
			if path == "" {
				_ = store.RemoveTarget(id)
			} else {
				_, _ = store.AddTarget(path, kind, parent)
			}
		}}
	return o, func() { log.Close(); targets.Close() }, nil
}

func setupServe(fs *flag.FlagSet) func(*env, []string) int {
	relayURL := fs.String("relay", "", "also answer devices through the relay at `URL` (the LAN too, unless --listen none)")
	listen := fs.String("listen", "auto", "auto, tailscale, lan, loopback, or an `ADDR` of one of those kinds, with :PORT if you like")
	port := fs.Int("port", 0, "the `PORT` (default: any free one)")
	noTUI := fs.Bool("no-tui", false, "no terminal prompts: log, and decide with 'gatehouse devices'")
	certFile := fs.String("tls-cert", "", "serve the page over HTTPS with this certificate `FILE` (a Tailscale name's, from 'tailscale cert'), with --tls-key")
	keyFile := fs.String("tls-key", "", "the certificate's key `FILE`")
	return func(e *env, args []string) int {
		if len(args) == 0 {
			args = []string{"."}
		}
		if *port < 0 || *port > 65535 {
			return usageError(e, named("serve"), "--port takes 0 to 65535")
		}
		if *listen == "none" && *relayURL == "" {
			return usageError(e, named("serve"), "--listen none serves nothing without --relay")
		}
		mode, p, err := splitListen(*listen, *port)
		if *listen == "none" {
			mode, p, err = "none", 0, nil
		}
		if err != nil {
			return usageError(e, named("serve"), "%v", err)
		}
		var tl *lanTLS
		if (*certFile == "") != (*keyFile == "") {
			return usageError(e, named("serve"), "--tls-cert and --tls-key go together")
		}
		if *certFile != "" {
			if tl, err = loadLANTLS(*certFile, *keyFile); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
				return exitUsage
			}
		}
		warnServedFolders(e, args)
		if *relayURL != "" {
			return serveRelayMode(e, *relayURL, args, *listen, mode, p, tl)
		}
		return serveLAN(e, args, mode, p, *noTUI || !isInteractive(e.stdin), tl)
	}
}

// serveRelayMode answers through the relay and, unless listen is "none",
// on the LAN address too, from one process: one set of served folders, one
// request log, each transport with its own devices (LAN pairings, relay
// grants). With the LAN address it is refused, like serveLAN, where a serve
// already runs; with --listen none it takes neither the LAN's port nor
// the control socket, and may run beside one.
func serveRelayMode(e *env, relayURL string, args []string, listenFlag, mode string, port int, tl *lanTLS) (code int) {
	c := named("serve")
	state, code := openServeState(e, mode != "none") // before anything is opened or written
	if state == nil {
		return code
	}
	defer func() { code = state.close(code) }()
	store := state.store
	id, err := relay.OpenRole(store.Dir(), relay.HostRole)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	p := id.Profile()
	if u, err := relay.CheckURL(relayURL); err != nil {
		return usageError(e, c, "%s", trimRelay(err))
	} else if _, err := id.Token(); err != nil || p.URL != u.String() {
		fmt.Fprintf(e.stderr, "gatehouse serve: this computer is not signed in to %s; run 'gatehouse login --relay %s' first\n", relayURL, relayURL)
		return exitUsage
	}
	logger := e.serverLogger(slog.LevelWarn) // -v and --debug show more
	ho, closeHost, err := hostOptions(store, args, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	defer closeHost()
	key, _ := id.Key()
	fmt.Fprintf(e.stdout, "Serving %s through %s as %s (key fingerprint %s).\n",
		count(len(ho.Targets.All()), "checkout"), p.URL, p.DeviceID, trust.Fingerprint(key.PublicKey().Bytes()))
	fmt.Fprintln(e.stdout, "Allow a device with 'gatehouse devices grant ID view|control|full'. Stop with Ctrl-C.")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, stopUnsafe := context.WithCancel(ctx)
	defer stopUnsafe()
	state.watch(e, stopUnsafe)
	if mode != "none" {
		stopLAN, err := alsoServeLAN(ctx, e, store, ho, mode, port, tl, logger)
		switch {
		case err != nil && listenFlag != "auto":
			fmt.Fprintf(e.stderr, "gatehouse serve: %s\n", personal(err))
			return exitUsage
		case err != nil:
			fmt.Fprintf(e.stdout, "Not serving on a local address (%s); through the relay only.\n", personal(err))
		default:
			defer stopLAN()
		}
	}
	ho.Grants = store // relay devices' grants, bound to their key fingerprints
	host := rpc.NewHost(ho)
	defer host.Close()
	err = link.Serve(ctx, id, host, logger)
	switch {
	case errors.Is(err, relay.ErrSignedOut):
		fmt.Fprintln(e.stderr, "gatehouse serve: this device was signed out of the relay (removed from the account); run 'gatehouse login' again")
		return exitFound
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitFound
	}
	fmt.Fprintln(e.stdout, "Stopped.")
	return exitOK
}

// monitorProgram is this binary, which git runs as the status monitor's
// hook (gate/fsmonitor.go); "" when its path cannot be known.
func monitorProgram() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if canon, err := filepath.EvalSymlinks(exe); err == nil {
		return canon
	}
	return ""
}
