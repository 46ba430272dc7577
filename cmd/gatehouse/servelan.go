package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
	"github.com/gatehouse/gatehouse/web"
)

// lanThreat is the threat note the terminal and the README show.
const lanThreat = "The page is plain HTTP with every body sealed: that stops someone listening and replays, not someone who can change traffic on this network. Prefer Tailscale on networks you do not trust."

func serveLAN(e *env, paths []string, listen string, port int, noTUI bool) int {
	store, code := openState(e)
	if store == nil {
		return code
	}
	ifaces, err := lan.SystemInterfaces()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	addr, kind, err := lan.Pick(listen, ifaces)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %s\n", personal(err))
		return exitUsage
	}
	level := slog.LevelWarn
	if noTUI {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	ho, closeHost, err := hostOptions(store, paths, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	defer closeHost()
	srv, err := lan.Listen(lan.Options{Addr: addr, Port: port, Kind: kind, Page: web.Page(), Logger: logger, Keep: store}, ho)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	stopControl, err := srv.ServeControl(store.Dir())
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	defer stopControl()
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := &tui{e: e, p: srv.Pairing(), kind: kind, n: len(ho.Targets.All()), url: srv.URL(), quiet: noTUI, showQR: true}
	t.banner()
	go t.watch(ctx)
	if !noTUI {
		go t.keys(ctx, e.stdin)
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
			return exitFound
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Close(sctx) // tells every page that serving ended
	fmt.Fprintln(e.stdout, "Stopped. Paired devices reconnect when it serves again; 'gatehouse devices revoke ID' ends a pairing for good.")
	return exitOK
}

// alsoServeLAN serves the LAN address beside the relay, with the same
// folders and log (ho, before its Grants are set), quietly: pairing goes
// through 'gatehouse devices'. stop ends it and tells its pages.
func alsoServeLAN(ctx context.Context, e *env, store *trust.Store, ho rpc.HostOptions, mode string, port int, logger *slog.Logger) (stop func(), err error) {
	ifaces, err := lan.SystemInterfaces()
	if err != nil {
		return nil, err
	}
	addr, kind, err := lan.Pick(mode, ifaces)
	if err != nil {
		return nil, err
	}
	srv, err := lan.Listen(lan.Options{Addr: addr, Port: port, Kind: kind, Page: web.Page(), Logger: logger, Keep: store}, ho)
	if err != nil {
		return nil, err
	}
	stopControl, err := srv.ServeControl(store.Dir())
	if err != nil {
		return nil, err
	}
	go func() { _ = srv.Serve() }()
	t := &tui{e: e, p: srv.Pairing(), kind: kind, n: len(ho.Targets.All()), url: srv.URL(), quiet: true}
	t.banner()
	go t.watch(ctx)
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(sctx)
		stopControl()
	}, nil
}

// replacing says which paired device a request would replace.
func replacing(r *lan.Request) string {
	if r.Replaces == "" {
		return ""
	}
	return " (it replaces the paired device " + r.Replaces + " of the same name)"
}

// tui is serve's terminal: the link and QR code, pair requests as prompts,
// and a few keys. Without a terminal (quiet) it only reports, and never
// writes the link's key.
type tui struct {
	e      *env
	p      *lan.Pairing
	kind   lan.Kind
	n      int
	url    string
	quiet  bool
	mu     sync.Mutex
	showQR bool
	asked  string // the request already prompted for
}

func (t *tui) say(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.e.stdout, format, a...)
}

func (t *tui) banner() {
	t.say("gatehouse is serving %s at %s (%s).\n", count(t.n, "checkout"), t.url, t.kind)
	if t.kind != lan.Tailscale {
		t.say("%s\n", lanThreat)
	}
	if t.quiet {
		t.say("Get the pairing link with 'gatehouse devices link'; allow a device with 'gatehouse devices allow --grant view|control|full'.\n")
		return
	}
	t.showLink()
	t.say("Keys: q hide/show the code, n new link, l list devices, r ID unpair, Ctrl-C stop.\n")
}

func (t *tui) showLink() {
	if t.quiet {
		return
	}
	link := t.p.Link()
	t.say("\nOpen this on your phone: %s\n", link)
	if t.showQR {
		if q, err := qrText(link); err == nil {
			t.say("%s", q)
		}
	}
}

// watch reports pair requests, pairings and warnings as they happen.
func (t *tui) watch(ctx context.Context) {
	st, changed := t.p.Status()
	devices, warning := len(st.Devices), st.Warning
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		st, changed = t.p.Status()
		if st.Warning != warning && st.Warning != "" {
			t.say("! %s\n", st.Warning)
			t.showLink()
		}
		warning = st.Warning
		if len(st.Devices) > devices {
			t.say("Paired. %s\n", deviceList(st.Devices))
			t.showLink() // the link paired one device: this is the next one's
		}
		devices = len(st.Devices)
		if r := st.Request; r != nil && r.ID != t.asked {
			t.asked = r.ID
			// The code tells this request from another holder of the link's:
			// the person allows only if the device in their hand shows it.
			if t.quiet {
				t.say("Pair request from %q at %s with code %s%s: if the device shows the same code, allow it with 'gatehouse devices allow --grant view|control|full', or 'gatehouse devices deny'.\n", r.Name, r.From, r.Code, replacing(r))
			} else {
				t.say("\nPair request from %q at %s with code %s%s. Allow only if the device shows the same code: [v]iew, [c]ontrol or [f]ull access, or [d]eny? ", r.Name, r.From, r.Code, replacing(r))
			}
		}
	}
}

func deviceList(ds []lan.Device) string {
	if len(ds) == 0 {
		return "No devices are paired."
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %q (%s)", d.ID, d.Name, d.Grant))
	}
	return fmt.Sprintf("%d of %d devices: %s", len(ds), lan.MaxDevices, strings.Join(parts, ", "))
}

// keys reads the person's answers and commands, a line at a time.
func (t *tui) keys(ctx context.Context, in io.Reader) {
	sc := bufio.NewScanner(in)
	for sc.Scan() && ctx.Err() == nil {
		line := strings.TrimSpace(sc.Text())
		cmd, arg, _ := strings.Cut(line, " ")
		st, _ := t.p.Status()
		grants := map[string]trust.Grant{"v": trust.View, "c": trust.Control, "f": trust.Full}
		switch {
		case st.Request != nil && grants[cmd] != trust.None:
			t.p.Decide(st.Request.ID, true, grants[cmd])
		case st.Request != nil && cmd == "d":
			t.p.Decide(st.Request.ID, false, trust.None)
			t.say("Denied.\n")
		case cmd == "q":
			t.mu.Lock()
			t.showQR = !t.showQR
			t.mu.Unlock()
			t.showLink()
		case cmd == "n":
			t.p.Rotate()
			t.showLink()
		case cmd == "l":
			t.say("%s\n", deviceList(st.Devices))
		case cmd == "r" && arg != "":
			if t.p.Revoke(arg) {
				t.say("Unpaired %s.\n", arg)
			} else {
				t.say("No paired device %s.\n", arg)
			}
		case cmd == "":
		default:
			t.say("Keys: v/c/f allow a waiting device with that grant, d deny it; q hide/show the code, n new link, l list devices, r ID unpair.\n")
		}
	}
}
