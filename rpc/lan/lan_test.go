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
	srv, err := Listen(o, rpc.HostOptions{Registry: reg, Targets: targets, FullAccess: func() bool { return false }})
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

// pair says hello through the current link as a new device (a name of its
// own) and, as the person at the computer, decides: a grant, or trust.None
// to deny.
func (f *fixture) pair(t *testing.T, g trust.Grant) (Paired, error) {
	t.Helper()
	f.paired++
	return f.pairAs(t, g, fmt.Sprintf("Test browser %d", f.paired))
}

// pairAs pairs under name (the same name is the same device pairing again).
func (f *fixture) pairAs(t *testing.T, g trust.Grant, name string) (Paired, error) {
	t.Helper()
	l, err := ParseLink(f.srv.Pairing().Link())
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		p   Paired
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := Pair(context.Background(), f.hc, l, name)
		done <- result{p, err}
	}()
	for {
		st, changed := f.srv.Pairing().Status()
		if st.Request != nil {
			if st.Request.Name != name {
				t.Fatalf("request: %+v", st.Request)
			}
			f.srv.Pairing().Decide(st.Request.ID, g != trust.None, g)
			break
		}
		select {
		case <-changed:
		case r := <-done:
			return r.p, r.err
		case <-time.After(5 * time.Second):
			t.Fatal("no pair request arrived")
		}
	}
	r := <-done
	return r.p, r.err
}

func (f *fixture) call(t *testing.T, p Paired, method string, params any) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return NewConn(f.hc, p).Call(ctx, method, params)
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
	// Revoked, a device's calls are refused as not paired.
	f.srv.Pairing().Revoke(view.DeviceID)
	conn := NewConn(f.hc, view)
	if _, err := conn.Call(context.Background(), "git.status", map[string]string{"target": f.target}); !errors.Is(err, rpc.ErrOffline) || !conn.NotPaired() {
		t.Fatalf("a revoked device: %v", err)
	}
}

func TestPairingDeniedTimedOutAndLinkReplaced(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.DecisionWaitForTest = 300 * time.Millisecond })
	if _, err := f.pair(t, trust.None); err == nil || refusal.Sentence(err) != "The computer did not allow this device." {
		t.Fatalf("denied: %v", err)
	}
	l, _ := ParseLink(f.srv.Pairing().Link())
	_, err := Pair(context.Background(), f.hc, l, "slow")
	if err == nil || !strings.Contains(refusal.Sentence(err), "Nobody allowed this device") {
		t.Fatalf("timeout: %v", err)
	}
	// Paired once, the link is spent: the same QR code pairs nothing more.
	used, _ := ParseLink(f.srv.Pairing().Link())
	go func() {
		for {
			st, ch := f.srv.Pairing().Status()
			if st.Request != nil {
				f.srv.Pairing().Decide(st.Request.ID, true, trust.View)
				return
			}
			<-ch
		}
	}()
	if _, err := Pair(context.Background(), f.hc, used, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := Pair(context.Background(), f.hc, used, "second"); err == nil || refusal.Sentence(err) != msgOldLink {
		t.Fatalf("a spent link: %v", err)
	}
}

func TestHelloLimits(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	wrong := l
	wrong.Key[0] ^= 1 // a guess at the key
	for i := range junkPerMinute {
		if _, err := Pair(context.Background(), f.hc, wrong, "guess"); err == nil || refusal.Sentence(err) != msgOldLink {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := Pair(context.Background(), f.hc, wrong, "guess"); err == nil || refusal.Sentence(err) != msgTooMany {
		t.Fatalf("the 11th failed hello in a minute: %v", err)
	}
	// 20 failures replace the link and warn.
	f.srv.pairing.mu.Lock()
	f.srv.pairing.junk = junkBudget{}
	f.srv.pairing.failures = maxFailures - 1
	f.srv.pairing.mu.Unlock()
	_, _ = Pair(context.Background(), f.hc, wrong, "guess")
	st, _ := f.srv.Pairing().Status()
	if !strings.Contains(st.Warning, "link was replaced") || strings.Contains(st.Link, l.ID) {
		t.Fatalf("after 20 failures: %+v", st)
	}
}

func TestSealedCalls(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(rpc.Request{Type: "req", ID: "1", Method: "projects.list", TS: time.Now().UnixMilli(), Nonce: randomID(24)})
	frame := rpc.Seal(p.Key, plain, rpc.LANAAD(p.DeviceID, "host"))
	body := func(d, f string) []byte { b, _ := json.Marshal(map[string]string{"d": d, "f": f}); return b }
	// The frame as sealed opens and is answered.
	out, err := post(context.Background(), f.hc, p.Base+"rc/call", body(p.DeviceID, frame))
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rpc.Open(p.Key, out, rpc.LANAAD(p.DeviceID, "device")); !strings.Contains(string(res), `"ok":true`) {
		t.Fatalf("answer: %s", res)
	}
	// The same frame again is a replay: refused, sealed, as not run.
	out, err = post(context.Background(), f.hc, p.Base+"rc/call", body(p.DeviceID, frame))
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rpc.Open(p.Key, out, rpc.LANAAD(p.DeviceID, "device")); !strings.Contains(string(res), "stale or repeated") {
		t.Fatalf("a replay: %s", res)
	}
	// A byte changed: it does not open.
	tampered := []byte(frame)
	tampered[40] ^= 'A' ^ 'B'
	if _, err := post(context.Background(), f.hc, p.Base+"rc/call", body(p.DeviceID, string(tampered))); err == nil || refusal.Sentence(err) != msgBadFrame {
		t.Fatalf("tampered: %v", err)
	}
	// Another paired device's id with this device's frame: it does not open
	// under that device's key.
	q, err := f.pair(t, trust.Full)
	if err != nil {
		t.Fatal(err)
	}
	plain2, _ := json.Marshal(rpc.Request{Type: "req", ID: "2", Method: "projects.list", TS: time.Now().UnixMilli(), Nonce: randomID(24)})
	if _, err := post(context.Background(), f.hc, p.Base+"rc/call", body(q.DeviceID, rpc.Seal(p.Key, plain2, rpc.LANAAD(p.DeviceID, "host")))); err == nil || refusal.Sentence(err) != msgBadFrame {
		t.Fatalf("wrong device: %v", err)
	}
	// A reply can never be fed back as a request: the directions differ.
	if _, err := post(context.Background(), f.hc, p.Base+"rc/call", body(p.DeviceID, out)); err == nil {
		t.Fatal("a reply was accepted as a request")
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
	big := `{"d":"x","f":"` + strings.Repeat("A", maxCallBody) + `"}`
	res, err := f.hc.Post(f.srv.URL()+"rc/call", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the cap: %d", res.StatusCode)
	}
}

func TestEventsAndGracefulStop(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	open, _ := json.Marshal(map[string]any{"type": "req", "id": "e", "method": "events", "ts": time.Now().UnixMilli(), "nonce": randomID(24)})
	u := p.Base + "rc/events?d=" + p.DeviceID + "&f=" + urlQuery(rpc.Seal(p.Key, open, rpc.LANAAD(p.DeviceID, "host")))
	res, err := f.hc.Get(u)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("events: %v %v", res.StatusCode, err)
	}
	defer res.Body.Close()
	frames := make(chan map[string]any, 8)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			plain, err := rpc.Open(p.Key, line, rpc.LANAAD(p.DeviceID, "device"))
			if err != nil {
				continue
			}
			var m map[string]any
			_ = json.Unmarshal(plain, &m)
			frames <- m
		}
		close(frames)
	}()
	if _, err := f.call(t, p, "subscribe", map[string]any{"targets": []string{f.target}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.repo, "new.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-frames:
		if m["name"] != "checkout.changed" {
			t.Fatalf("event: %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no checkout.changed event")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go f.srv.Close(ctx)
	for m := range frames {
		if m["type"] == "ended" {
			return
		}
	}
	t.Fatal("the page was not told that serving ended")
}

func urlQuery(s string) string {
	return strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(s)
}
