package lan

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

func TestPickAddress(t *testing.T) {
	a := netip.MustParseAddr
	ifaces := []Iface{
		{Name: "lo", Up: true, Addrs: []netip.Addr{a("127.0.0.1"), a("::1")}},
		{Name: "eth0", Up: true, Addrs: []netip.Addr{a("203.0.113.7"), a("192.168.1.20"), a("fe80::1")}},
		{Name: "wwan0", Up: true, Addrs: []netip.Addr{a("100.72.1.1")}}, // carrier-grade NAT, not Tailscale
		{Name: "tailscale0", Up: true, Addrs: []netip.Addr{a("100.101.102.103"), a("fd7a:115c:a1e0::1")}},
	}
	for _, c := range []struct {
		mode   string
		ifaces []Iface
		want   string
		kind   Kind
		err    bool
	}{
		{"auto", ifaces, "100.101.102.103", Tailscale, false},
		{"lan", ifaces, "192.168.1.20", LAN, false},
		{"tailscale", ifaces, "100.101.102.103", Tailscale, false},
		{"auto", ifaces[:3], "192.168.1.20", LAN, false}, // the CGNAT address is never taken for Tailscale
		{"tailscale", ifaces[:3], "", "", true},
		{"auto", []Iface{ifaces[0], {Name: "eth0", Up: true, Addrs: []netip.Addr{a("203.0.113.7")}}}, "", "", true},
		{"auto", []Iface{{Name: "en0", Up: true, Addrs: []netip.Addr{a("fd12:3456::5")}}}, "fd12:3456::5", LAN, false},
		{"auto", []Iface{{Name: "eth0", Up: false, Addrs: []netip.Addr{a("10.0.0.5")}}}, "", "", true},
		{"loopback", nil, "127.0.0.1", Loopback, false},
		{"10.1.2.3", nil, "10.1.2.3", LAN, false},
		{"100.101.102.103", ifaces, "100.101.102.103", Tailscale, false},
		{"100.72.1.1", ifaces, "", "", true}, // CGNAT on a phone hotspot: public for our purposes
		{"203.0.113.7", ifaces, "", "", true},
		{"0.0.0.0", ifaces, "", "", true},
		{"::", ifaces, "", "", true},
		{"nonsense", ifaces, "", "", true},
	} {
		got, kind, err := Pick(c.mode, c.ifaces)
		if (err != nil) != c.err || (!c.err && (got.String() != c.want || kind != c.kind)) {
			t.Errorf("Pick(%q) = %v %v %v", c.mode, got, kind, err)
		}
	}
	if _, _, err := Pick("auto", nil); refusal.Sentence(err) != ErrNoAddress.Sentence() {
		t.Errorf("no address: %v", err)
	}
}

type fixture struct {
	srv    *Server
	target string
	repo   string
	hc     *http.Client
	paired int
}

func newFixture(t *testing.T, tweak func(*Options)) *fixture {
	t.Helper()
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "TOKEN=1\n"})
	f, _ := serveRepo(t, repo, tweak)
	return f
}

// serveRepo serves repo on loopback as serve does (tweak adjusts the
// options); stop ends it, and the test's end does too. Its client has a
// transport of its own: the default one would offer a later server on the
// same port a kept-alive connection to this one, closed by then.
func serveRepo(t *testing.T, repo string, tweak func(*Options)) (f *fixture, stop func()) {
	t.Helper()
	return serveRepoHost(t, repo, tweak, nil)
}

// serveRepoWithLog is serveRepo with the host's request log.
func serveRepoWithLog(t *testing.T, repo string, l *rpc.RequestLog) (f *fixture, stop func()) {
	t.Helper()
	return serveRepoHost(t, repo, nil, func(ho *rpc.HostOptions) { ho.Log = l })
}

// serveRepoHost is serveRepo that also adjusts the host's options.
func serveRepoHost(t *testing.T, repo string, tweak func(*Options), hostTweak func(*rpc.HostOptions)) (f *fixture, stop func()) {
	t.Helper()
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	targets := rpc.NewTargets(fsguard.Options{Home: "/nonexistent"}, gate.Options{})
	tg, err := targets.Add(repo, trust.Served, "")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Addr: netip.MustParseAddr("127.0.0.1"), Kind: Loopback,
		Page: fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>gatehouse</title>")}}}
	if tweak != nil {
		tweak(&o)
	}
	ho := rpc.HostOptions{Registry: reg, Targets: targets, FullAccess: func() bool { return false }}
	if hostTweak != nil {
		hostTweak(&ho)
	}
	srv, err := Listen(o, ho)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Close(ctx)
			targets.Close()
		})
	}
	t.Cleanup(stop)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &fixture{srv: srv, target: tg.ID, repo: repo, hc: &http.Client{Timeout: 70 * time.Second, Transport: tr}}, stop
}

// pair pairs a new device (a name of its own) through the current link
// and, as the person at the computer, decides the request whose code the
// device shows: a grant, or trust.None to deny.
func (f *fixture) pair(t *testing.T, g trust.Grant) (*Paired, error) {
	t.Helper()
	f.paired++
	return f.pairAs(t, g, fmt.Sprintf("Test browser %d", f.paired))
}

// pairAs pairs under name (the same name is the same device pairing again).
func (f *fixture) pairAs(t *testing.T, g trust.Grant, name string) (*Paired, error) {
	t.Helper()
	l, err := ParseLink(f.srv.Pairing().Link())
	if err != nil {
		t.Fatal(err)
	}
	return f.pairThrough(t, f.hc, l, name, g)
}

// pairThrough pairs through link l from hc, allowing (or denying) the
// request by the code the device shows, as a person compares them.
func (f *fixture) pairThrough(t *testing.T, hc *http.Client, l Link, name string, g trust.Grant) (*Paired, error) {
	t.Helper()
	type result struct {
		p   Paired
		err error
	}
	codes := make(chan string, 1)
	done := make(chan result, 1)
	go func() {
		p, err := Pair(context.Background(), hc, l, name, func(c string) { codes <- c })
		done <- result{p, err}
	}()
	select {
	case code := <-codes:
		if err := f.srv.Pairing().Decide(code, g != trust.None, g); err != nil {
			t.Fatalf("deciding the request with code %s: %v", code, err)
		}
	case r := <-done:
		return &r.p, r.err
	case <-time.After(20 * time.Second):
		t.Fatal("no pair code was shown")
	}
	r := <-done
	return &r.p, r.err
}

// session opens a session for p (updating its ticket).
func (f *fixture) session(t *testing.T, p *Paired) (*Session, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Resume(ctx, f.hc, p)
}

// viewSession pairs a device with the view grant and opens its session,
// failing the test on either error.
func (f *fixture) viewSession(t *testing.T) (*Paired, *Session) {
	t.Helper()
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	se, err := f.session(t, p)
	if err != nil {
		t.Fatal(err)
	}
	return p, se
}

// call opens a session for p and calls method in it.
func (f *fixture) call(t *testing.T, p *Paired, method string, params any) (json.RawMessage, error) {
	t.Helper()
	se, err := f.session(t, p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return se.Conn().Call(ctx, method, params)
}

func codeOf(err error) rpc.Code {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

func TestPairingWithEachGrant(t *testing.T) {
	f := newFixture(t, nil)
	view, err := f.pair(t, trust.View)
	if err != nil || view.Grant != "view" {
		t.Fatalf("view: %+v %v", view, err)
	}
	control, err := f.pair(t, trust.Control)
	if err != nil {
		t.Fatal(err)
	}
	full, err := f.pair(t, trust.Full)
	if err != nil {
		t.Fatal(err)
	}
	// view reads, without secrets; control stages; full reads the secret.
	if _, err := f.call(t, view, "git.status", map[string]string{"target": f.target}); err != nil {
		t.Fatalf("view status: %v", err)
	}
	if _, err := f.call(t, view, "files.read", map[string]string{"target": f.target, "path": ".env"}); codeOf(err) != rpc.CodeRefused && codeOf(err) != rpc.CodeAccess {
		t.Fatalf("view read a secret: %v", err)
	}
	if _, err := f.call(t, view, "git.stage", map[string]any{"target": f.target, "all": true}); codeOf(err) != rpc.CodeAccess {
		t.Fatalf("view staged: %v", err)
	}
	gittest.Write(t, f.repo, map[string]string{"b.txt": "b\n"})
	if _, err := f.call(t, control, "git.stage", map[string]any{"target": f.target, "paths": []string{"b.txt"}}); err != nil {
		t.Fatalf("control stage: %v", err)
	}
	out, err := f.call(t, full, "files.read", map[string]string{"target": f.target, "path": ".env"})
	if err != nil || !strings.Contains(string(out), "TOKEN=1") {
		t.Fatalf("full read: %s %v", out, err)
	}
	// A fourth device is refused: at most 3.
	if _, err := f.pair(t, trust.View); err == nil || !strings.Contains(refusal.Sentence(err), "already has 3 paired devices") {
		t.Fatalf("a fourth device: %v", err)
	}
	// Revoked, a device's session's calls are refused as not paired, and it
	// opens no new session.
	se, err := f.session(t, view)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Pairing().Revoke(view.DeviceID)
	conn := se.Conn()
	if _, err := conn.Call(context.Background(), "git.status", map[string]string{"target": f.target}); !errors.Is(err, rpc.ErrOffline) || !conn.NotPaired() {
		t.Fatalf("a revoked device: %v", err)
	}
	if _, err := f.session(t, view); !errors.Is(err, ErrNotPaired) {
		t.Fatalf("a revoked device's resume: %v", err)
	}
}

func TestPairingDeniedTimedOutAndLinkReplaced(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.DecisionWaitForTest = 300 * time.Millisecond })
	if _, err := f.pair(t, trust.None); err == nil || refusal.Sentence(err) != "The computer did not allow this device." {
		t.Fatalf("denied: %v", err)
	}
	l, _ := ParseLink(f.srv.Pairing().Link())
	_, err := Pair(context.Background(), f.hc, l, "slow", nil)
	if err == nil || !strings.Contains(refusal.Sentence(err), "Nobody allowed this device") {
		t.Fatalf("timeout: %v", err)
	}
	// Paired once, the link is spent: the same QR code pairs nothing more.
	used, _ := ParseLink(f.srv.Pairing().Link())
	if _, err := f.pairThrough(t, f.hc, used, "first", trust.View); err != nil {
		t.Fatal(err)
	}
	if _, err := Pair(context.Background(), f.hc, used, "second", nil); err == nil || refusal.Sentence(err) != msgOldLink {
		t.Fatalf("a spent link: %v", err)
	}
}

// Messages that do not open (a guess at the link key) are limited per
// sender, and never replace the link: junk cannot pair, and replacing the
// link whenever junk came from many addresses kept the real phone out.
func TestJunkLimitsAndKeepsTheLink(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	wrong := l
	wrong.Key[0] ^= 1 // a guess at the key
	for i := range junkPerMinute {
		if _, err := Pair(context.Background(), f.hc, wrong, "guess", nil); err == nil || refusal.Sentence(err) != msgOldLink {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := Pair(context.Background(), f.hc, wrong, "guess", nil); err == nil || refusal.Sentence(err) != msgTooMany {
		t.Fatalf("the 11th failed hello in a minute: %v", err)
	}
	for i := range 40 {
		hc := clientFrom(fmt.Sprintf("127.0.1.%d", i+1))
		_, _ = Pair(context.Background(), hc, wrong, "guess", nil)
	}
	if st, _ := f.srv.Pairing().Status(); !strings.Contains(st.Link, l.ID) {
		t.Fatal("junk from 40 addresses replaced the link")
	}
	if _, err := f.pairThrough(t, f.hc, l, "the real phone", trust.View); err != nil {
		t.Fatalf("the holder of the link after junk from 41 addresses: %v", err)
	}
}

// Every call is sealed with its session's key: the frame as sealed is
// answered once; a replay is refused as not run; a changed byte, another
// session's or device's frame, and a reply fed back do not open; a call
// without its session's proof in the headers is refused before its body.
func TestSealedCalls(t *testing.T) {
	f := newFixture(t, nil)
	p, se := f.viewSession(t)
	plain, _ := json.Marshal(rpc.Request{Type: "req", ID: "1", Method: "projects.list", TS: time.Now().UnixMilli(), Nonce: randomID(24)})
	frame := rpc.Seal(se.keys.key, plain, sessionAAD(p.DeviceID, se.id, "host"))
	send := func(se *Session, frame string) (string, error) {
		return se.c.post(context.Background(), se.callPath(), map[string]string{"f": frame}, se.authHeader())
	}
	out, err := send(se, frame)
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rpc.Open(se.keys.key, out, sessionAAD(p.DeviceID, se.id, "device")); !strings.Contains(string(res), `"ok":true`) {
		t.Fatalf("answer: %s", res)
	}
	out, err = send(se, frame)
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rpc.Open(se.keys.key, out, sessionAAD(p.DeviceID, se.id, "device")); !strings.Contains(string(res), "stale or repeated") {
		t.Fatalf("a replay: %s", res)
	}
	tampered := []byte(frame)
	tampered[40] ^= 'A' ^ 'B'
	if _, err := send(se, string(tampered)); err == nil || refusal.Sentence(refusalOf(err)) != msgBadFrame {
		t.Fatalf("tampered: %v", err)
	}
	// Another session of the same device: the frame does not open there.
	other, err := f.session(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(other, frame); err == nil {
		t.Fatal("a frame of one session opened in another")
	}
	// A reply can never be fed back as a request: the directions differ.
	if _, err := send(se, out); err == nil {
		t.Fatal("a reply was accepted as a request")
	}
	// The headers' proof: missing, or replayed, the call is refused before
	// its body is read.
	h := se.authHeader()
	plain2, _ := json.Marshal(rpc.Request{Type: "req", ID: "2", Method: "projects.list", TS: time.Now().UnixMilli(), Nonce: randomID(24)})
	frame2 := rpc.Seal(se.keys.key, plain2, sessionAAD(p.DeviceID, se.id, "host"))
	if _, err := se.c.post(context.Background(), se.callPath(), map[string]string{"f": frame2}, nil); err == nil {
		t.Fatal("a call without its session's proof was answered")
	}
	if _, err := se.c.post(context.Background(), se.callPath(), map[string]string{"f": frame2}, h); err != nil {
		t.Fatal(err)
	}
	if _, err := se.c.post(context.Background(), se.callPath(), map[string]string{"f": frame2}, h); err == nil {
		t.Fatal("a replayed proof was accepted")
	}
}

func TestHostAndOriginChecks(t *testing.T) {
	f := newFixture(t, nil)
	get := func(host, origin string) (int, http.Header) {
		req, _ := http.NewRequest("GET", f.srv.URL(), nil)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header
	}
	code, h := get("", "")
	if code != 200 || h.Get("Cache-Control") != "no-store" || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "manifest-src 'self'") {
		t.Fatalf("the page: %d %v", code, h)
	}
	// A DNS name rebound to this address: the Host is not the address.
	if code, _ := get("evil.example:80", ""); code != http.StatusMisdirectedRequest {
		t.Fatalf("a rebound host: %d", code)
	}
	// Another site's page calling in.
	if code, _ := get("", "http://evil.example"); code != http.StatusForbidden {
		t.Fatalf("another origin: %d", code)
	}
	// Bodies are capped.
	big := `{"h":"x","f":"` + strings.Repeat("A", maxPairBody) + `"}`
	res, err := f.hc.Post(f.srv.URL()+"rc/pair", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the cap: %d", res.StatusCode)
	}
}

// openEvents opens a session's event stream and returns its opened frames.
func openEvents(t testing.TB, hc *http.Client, se *Session) <-chan map[string]any {
	t.Helper()
	res, err := hc.Get(se.EventsURL())
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("events: %v %v", res, err)
	}
	frames := make(chan map[string]any, 8)
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			plain, err := se.OpenEvent(line)
			if err != nil {
				continue
			}
			var m map[string]any
			_ = json.Unmarshal(plain, &m)
			frames <- m
		}
		close(frames)
	}()
	return frames
}

// nextEvent waits for a frame named name on frames.
func nextEvent(t *testing.T, frames <-chan map[string]any, key, value string) map[string]any {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-frames:
			if !ok {
				t.Fatalf("the stream ended before a frame with %s %q", key, value)
			}
			if m[key] == value {
				return m
			}
		case <-timeout:
			t.Fatalf("no frame with %s %q", key, value)
		}
	}
}

// Each session (each tab of the page) has its own event stream: two tabs
// of one device both get checkout.changed, and neither takes the other's
// stream. Stopping serve tells every page.
func TestEventsPerSessionAndGracefulStop(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	tab1, err := f.session(t, p)
	if err != nil {
		t.Fatal(err)
	}
	tab2, err := f.session(t, p)
	if err != nil {
		t.Fatal(err)
	}
	frames1, frames2 := openEvents(t, f.hc, tab1), openEvents(t, f.hc, tab2)
	if _, err := tab1.Conn().Call(context.Background(), "subscribe", map[string]any{"targets": []string{f.target}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.repo, "new.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, frames1, "name", "checkout.changed")
	nextEvent(t, frames2, "name", "checkout.changed")
	// Reopening tab 1's stream replaces tab 1's, not tab 2's.
	frames1 = openEvents(t, f.hc, tab1)
	if err := os.WriteFile(filepath.Join(f.repo, "new2.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, frames2, "name", "checkout.changed")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go f.srv.Close(ctx)
	nextEvent(t, frames1, "type", "ended")
	nextEvent(t, frames2, "type", "ended")
}
