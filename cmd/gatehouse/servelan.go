package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
	"github.com/gatehouse/gatehouse/web"
)

// httpsTip is shown on a Tailscale address served over plain HTTP.
const httpsTip = "Tip: with a certificate for this machine's Tailscale name ('tailscale cert'), serve --tls-cert FILE --tls-key FILE serves the page over HTTPS: then no other program can pose as it, and a page opened after a restart needs no new code."

// lanThreat is the threat note the terminal and the README show.
const lanThreat = "The page is plain HTTP with every body sealed: that stops someone listening and replays, not someone who can change traffic on this network. Prefer Tailscale on networks you do not trust."

func serveLAN(e *env, paths []string, listen string, port int, noTUI bool, tl *lanTLS) (code int) {
	state, code := openServeState(e, true) // before anything is opened or written
	if state == nil {
		return code
	}
	defer func() { code = state.close(code) }()
	state.watch(e, stopBySignal)
	store := state.store
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
	logger := e.serverLogger(level) // -v and --debug show more
	ho, closeHost, err := hostOptions(store, paths, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return exitUsage
	}
	defer closeHost()
	srv, err := lan.Listen(lanOptions(addr, port, kind, tl, logger, store), ho)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %s\n", personal(err))
		return exitFound
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
	if f, ok := e.stdin.(*os.File); ok && !noTUI && isInteractive(f) {
		if restore, err := rawKeys(f); err == nil {
			defer restore() // the terminal is the person's again when serve ends
			t.single = true
		}
	}
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
	fmt.Fprintf(e.stdout, "Stopped. Paired devices reconnect when it serves again; '%s devices revoke ID' ends a pairing for good.\n", selfCommand())
	return exitOK
}

// alsoServeLAN serves the LAN address beside the relay, with the same
// folders and log (ho, before its Grants are set), quietly: pairing goes
// through 'gatehouse devices'. stop ends it and tells its pages.
func alsoServeLAN(ctx context.Context, e *env, store *trust.Store, ho rpc.HostOptions, mode string, port int, tl *lanTLS, logger *slog.Logger) (stop func(), err error) {
	ifaces, err := lan.SystemInterfaces()
	if err != nil {
		return nil, err
	}
	addr, kind, err := lan.Pick(mode, ifaces)
	if err != nil {
		return nil, err
	}
	srv, err := lan.Listen(lanOptions(addr, port, kind, tl, logger, store), ho)
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

// lanOptions places the LAN server: plain HTTP, or HTTPS at the name tl's
// certificate covers.
func lanOptions(addr netip.Addr, port int, kind lan.Kind, tl *lanTLS, logger *slog.Logger, store *trust.Store) lan.Options {
	o := lan.Options{Addr: addr, Port: port, Kind: kind, Page: web.Page(), Logger: logger, Keep: store}
	if tl != nil {
		o.TLS, o.Name = tl.config(), tl.name
	}
	return o
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
	e     *env
	p     *lan.Pairing
	kind  lan.Kind
	n     int
	url   string
	quiet bool
	// single: stdin is a terminal put in cbreak mode (rawKeys), so a key
	// acts as it is pressed; else answers are lines, "then Enter".
	single bool
	mu     sync.Mutex
	showQR bool
	// The request on screen, and since when: a key answers that request
	// and no other, and only once it has been on screen for settle, so a
	// request that takes another's place just as a key is pressed is
	// never the one allowed.
	shown   string
	shownAt time.Time
	settle  time.Duration
	listed  map[string]bool // requests already reported (quiet)
}

// settleTime is how long a request must have been on screen before a key
// answers it.
const settleTime = 1500 * time.Millisecond

func (t *tui) say(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.e.stdout, format, a...)
}

func (t *tui) banner() {
	t.say("gatehouse is serving %s at %s (%s).\n", count(t.n, "checkout"), t.url, t.kind)
	switch {
	case strings.HasPrefix(t.url, "https://"):
	case t.kind == lan.Tailscale:
		t.say("%s\n", httpsTip)
	default:
		t.say("%s\n", lanThreat)
	}
	if t.quiet {
		self := selfCommand()
		t.say("Get the pairing link with '%s devices link'; allow a device with '%s devices allow CODE --grant view|control|full', CODE being the pair code the device shows.\n", self, self)
		return
	}
	t.showLink()
	if t.single {
		t.say("Keys: q hide/show the code, n new link, l list devices, r unpair a device (then its id and Enter), Ctrl-C stop.\n")
	} else {
		t.say("Keys (then Enter): q hide/show the code, n new link, l list devices, r ID unpair, Ctrl-C stop.\n")
	}
}

// then is what follows a key: nothing when a key acts as it is pressed.
func (t *tui) then() string {
	if t.single {
		return ""
	}
	return " then Enter"
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
		}
		warning = st.Warning
		if len(st.Devices) > devices {
			t.say("Paired. %s\n", deviceList(st.Devices))
			t.showLink() // the link paired one device: this is the next one's
		}
		devices = len(st.Devices)
		t.prompt(st.Requests)
	}
}

// prompt shows the oldest waiting request, one at a time (the person
// compares one code at a time); without a terminal, each new request is
// reported once with the command that answers it.
func (t *tui) prompt(reqs []*lan.Request) {
	if t.quiet {
		t.mu.Lock()
		if t.listed == nil {
			t.listed = map[string]bool{}
		}
		var fresh []*lan.Request
		for _, r := range reqs {
			if !t.listed[r.ID] {
				t.listed[r.ID] = true
				fresh = append(fresh, r)
			}
		}
		t.mu.Unlock()
		for _, r := range fresh {
			t.say("%s\n", requestLine(r))
		}
		return
	}
	t.mu.Lock()
	if len(reqs) == 0 || reqs[0].ID == t.shown {
		if len(reqs) == 0 {
			t.shown = ""
		}
		t.mu.Unlock()
		return
	}
	r := reqs[0]
	t.shown, t.shownAt = r.ID, time.Now()
	t.mu.Unlock()
	more := ""
	if len(reqs) > 1 {
		more = fmt.Sprintf(" (%d more waiting after this one; if you did not make them, press n for a new link)", len(reqs)-1)
	}
	if r.Kind == lan.KindReconnect {
		t.say("\n%s (%s, %s access) asks to reconnect after a restart, from %s, with code %s%s. Allow only if the device shows the same code: a%s to allow with %s access (v, c or f for another), d%s to deny. ",
			shown(r.Name), shown(r.Device), r.Grant, fromLine(r), r.Code, more, t.then(), r.Grant, t.then())
		return
	}
	t.say("\nPair request from %q at %s with code %s%s%s. Allow only if the device shows the same code: v (view), c (control) or f (full access)%s, or d%s to deny. ",
		shown(r.Name), fromLine(r), r.Code, replacing(r), more, t.then(), t.then())
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

// answer decides the request on screen with the key pressed; it says why
// when the key does nothing.
func (t *tui) answer(cmd string) {
	grants := map[string]trust.Grant{"v": trust.View, "c": trust.Control, "f": trust.Full, "a": trust.None}
	t.mu.Lock()
	id, at := t.shown, t.shownAt
	settle := t.settle
	t.mu.Unlock()
	if settle == 0 {
		settle = settleTime
	}
	switch {
	case id == "":
		t.say("No device is waiting to be allowed.\n")
		return
	case time.Since(at) < settle:
		t.say("\nThe request on screen just changed: read its code, then answer again.\n")
		return
	}
	var err error
	if cmd == "d" {
		err = t.p.Decide(id, false, trust.None)
	} else {
		err = t.p.Decide(id, true, grants[cmd])
	}
	switch {
	case errors.Is(err, lan.ErrGrantNeeded):
		t.say("A new device needs a grant: v, c or f%s.\n", t.then())
	case err != nil:
		t.say("That request is no longer waiting; nothing was allowed.\n")
	case cmd == "d":
		t.say("Denied.\n")
	}
}

// keys reads the person's answers and commands: a key at a time from a
// terminal in cbreak mode (single), else a line at a time.
func (t *tui) keys(ctx context.Context, in io.Reader) {
	if t.single {
		t.singleKeys(ctx, bufio.NewReader(in))
		return
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() && ctx.Err() == nil {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		t.command(cmd, arg)
	}
}

// singleKeys acts on each key as it is pressed; r then reads the id to
// unpair up to Enter, echoing it (the terminal does not).
func (t *tui) singleKeys(ctx context.Context, in *bufio.Reader) {
	for ctx.Err() == nil {
		r, _, err := in.ReadRune()
		if err != nil {
			return
		}
		switch r {
		case '\r', '\n', ' ', '\t':
		case 'r':
			t.say("\nUnpair which device (its id, then Enter)? ")
			id, ok := t.readLine(in)
			if !ok {
				return
			}
			t.command("r", strings.TrimSpace(id))
		default:
			t.command(string(r), "")
		}
	}
}

// readLine reads up to Enter from a terminal in cbreak mode, echoing what
// is typed and taking back a character on Backspace. At most 128 runes
// are kept: a device id is far shorter.
func (t *tui) readLine(in *bufio.Reader) (string, bool) {
	var line []rune
	for {
		r, _, err := in.ReadRune()
		switch {
		case err != nil:
			return "", false
		case r == '\r' || r == '\n':
			t.say("\n")
			return string(line), true
		case r == 0x7f || r == '\b':
			if len(line) > 0 {
				line = line[:len(line)-1]
				t.say("\b \b")
			}
		case r < 0x20 || len(line) >= 128:
		default:
			line = append(line, r)
			t.say("%s", display.Text(string(r)))
		}
	}
}

// command does what one key (with its argument, for r) asks.
func (t *tui) command(cmd, arg string) {
	switch {
	case cmd == "v" || cmd == "c" || cmd == "f" || cmd == "a" || cmd == "d":
		t.answer(cmd)
	case cmd == "q":
		t.mu.Lock()
		t.showQR = !t.showQR
		t.mu.Unlock()
		t.showLink()
	case cmd == "n":
		t.p.Rotate()
		t.showLink()
	case cmd == "l":
		st, _ := t.p.Status()
		t.say("%s\n", deviceList(st.Devices))
	case cmd == "r" && arg != "":
		if t.p.Revoke(arg) {
			t.say("Unpaired %s.\n", shown(arg))
		} else {
			t.say("No paired device %s.\n", shown(arg))
		}
	case cmd == "":
	default:
		t.say("Keys%s: v/c/f allow the device on screen with that grant, a allow a reconnecting device with its grant, d deny it; q hide/show the code, n new link, l list devices, r ID unpair.\n", t.keysNote())
	}
}

// keysNote says how keys are answered, for the list of keys.
func (t *tui) keysNote() string {
	if t.single {
		return ""
	}
	return " (then Enter)"
}
