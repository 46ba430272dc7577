package lan

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// The rules that let one page reach several computers (computers.go), each
// first shown letting the attack through with its ...ForTest switch, then
// refusing it.

// The page of computer A, a third site, and A on another port: none of
// them is this fixture's own origin.
const (
	pageA      = "http://127.0.0.1:7001"
	thirdSite  = "http://evil.example"
	pageAOther = "http://127.0.0.1:7002"
)

// originTransport sends every request as a browser would from a page at
// origin ("" sends none, as gatehouse call does).
type originTransport struct {
	origin string
	rt     http.RoundTripper
}

func (o originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if o.origin != "" {
		req.Header.Set("Origin", o.origin)
	}
	return o.rt.RoundTrip(req)
}

func (f *fixture) from(t *testing.T, origin string) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 70 * time.Second, Transport: originTransport{origin, tr}}
}

// ownOrigin is the fixture's own page's origin.
func (f *fixture) ownOrigin() string { return strings.TrimSuffix(f.srv.URL(), "/") }

// pairFrom pairs a device from a page at origin with grant g.
func (f *fixture) pairFrom(t *testing.T, origin string, g trust.Grant) *Paired {
	t.Helper()
	l, err := ParseLink(f.srv.Pairing().Link())
	if err != nil {
		t.Fatal(err)
	}
	f.paired++
	p, err := f.pairThrough(t, f.from(t, origin), l, "Page at A "+string(rune('0'+f.paired)), g)
	if err != nil {
		t.Fatalf("pairing from %s: %v", origin, err)
	}
	return p
}

// callFrom opens a session for p from origin and calls host.hello.
func (f *fixture) callFrom(t *testing.T, origin string, p *Paired) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	se, err := Resume(ctx, f.from(t, origin), p)
	if err != nil {
		return err
	}
	_, err = se.Conn().Call(ctx, "host.hello", map[string]any{})
	return err
}

func TestComputersAPagePairsFromAnotherComputer(t *testing.T) {
	f := newFixture(t, nil)
	p := f.pairFrom(t, pageA, trust.Control)
	st, _ := f.srv.Pairing().Status()
	if len(st.Devices) != 1 || st.Devices[0].Page != pageA {
		t.Fatalf("the device does not show the page it paired from: %+v", st.Devices)
	}
	if err := f.callFrom(t, pageA, p); err != nil {
		t.Fatalf("a call from the page it paired from: %v", err)
	}
	// Every answer to it names that origin, never *.
	req, _ := http.NewRequest(http.MethodOptions, f.srv.URL()+"rc/call?d="+p.DeviceID, nil)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-gatehouse-auth")
	res, err := f.from(t, pageA).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != pageA ||
		res.Header.Get("Access-Control-Allow-Headers") != corsHeaders || res.Header.Get("Access-Control-Allow-Methods") != "POST" {
		t.Fatalf("the pinned page's preflight: %d %v", res.StatusCode, res.Header)
	}
	// The page's own computer's page, a client naming no page, and a device
	// paired at this computer's own page asked from A are all refused.
	for _, o := range []string{f.ownOrigin(), ""} {
		if err := f.callFrom(t, o, &Paired{Base: p.Base, DeviceID: p.DeviceID, Stored: p.Stored, TicketID: p.TicketID, Ticket: p.Ticket}); err == nil || !strings.Contains(err.Error(), msgOtherPage) {
			t.Fatalf("a device paired from A called from %q: %v", o, err)
		}
	}
	own, err := f.pair(t, trust.Control)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.callFrom(t, pageA, own); err == nil || !strings.Contains(err.Error(), msgOtherPage) {
		t.Fatalf("a device of this computer's own page called from A: %v", err)
	}
	if err := f.callFrom(t, "", own); err != nil {
		t.Fatalf("this computer's own device: %v", err)
	}
}

func TestComputersAnotherSiteCannotUseADevicePairedFromA(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "page check off", false: "page check on"}[off], func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.pageCheckOffForTest = off })
			p := f.pairFrom(t, pageA, trust.Control)
			if err := f.callFrom(t, pageA, p); err != nil {
				t.Fatal(err)
			}
			for _, o := range []string{thirdSite, pageAOther} {
				err := f.callFrom(t, o, p)
				switch {
				case off && err != nil:
					t.Fatalf("the attack from %s did not work with the page check off: %v", o, err)
				case !off && (err == nil || !strings.Contains(err.Error(), msgOtherPage)):
					t.Fatalf("a call from %s with A's device was not refused: %v", o, err)
				}
			}
		})
	}
}

func TestComputersAReconnectOnlyFromThePinnedPage(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "page check off", false: "page check on"}[off], func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.pageCheckOffForTest = off })
			p := f.pairFrom(t, pageA, trust.Control)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			shown := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				_, err := Reconnect(ctx, f.from(t, thirdSite), *p, "A page", func(c string) { shown <- c })
				done <- err
			}()
			select {
			case code := <-shown:
				if !off {
					t.Fatalf("a reconnect from %s reached the person at the computer (code %s)", thirdSite, code)
				}
				if err := f.srv.Pairing().Decide(code, false, trust.None); err != nil {
					t.Fatal(err)
				}
				<-done
			case err := <-done:
				if off {
					t.Fatalf("the attack did not work with the page check off: %v", err)
				}
				if err == nil || !strings.Contains(err.Error(), msgOtherPage) {
					t.Fatalf("a reconnect from %s: %v", thirdSite, err)
				}
				if st, _ := f.srv.Pairing().Status(); len(st.Requests) != 0 {
					n := len(st.Requests)
					t.Fatalf("%d requests wait for the person", n)
				}
			}
		})
	}
}

func TestComputersAPreflightFromAnUnpinnedOrigin(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "page check off", false: "page check on"}[off], func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.pageCheckOffForTest = off })
			p := f.pairFrom(t, pageA, trust.Control)
			for _, path := range []string{"rc/call?d=", "rc/resume?d="} {
				req, _ := http.NewRequest(http.MethodOptions, f.srv.URL()+path+p.DeviceID, nil)
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "content-type")
				res, err := f.from(t, thirdSite).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				allowed := res.StatusCode == http.StatusNoContent && res.Header.Get("Access-Control-Allow-Origin") == thirdSite
				switch {
				case off && !allowed:
					t.Fatalf("the preflight from %s for %s was not let through with the page check off: %d", thirdSite, path, res.StatusCode)
				case !off && (allowed || res.Header.Get("Access-Control-Allow-Origin") != "" || res.StatusCode != http.StatusForbidden):
					t.Fatalf("the preflight from %s for %s: %d %v", thirdSite, path, res.StatusCode, res.Header)
				}
			}
		})
	}
	// Whatever the origin, only the page's method and headers pass, and
	// only the paths the page calls are reached from another origin.
	f := newFixture(t, nil)
	p := f.pairFrom(t, pageA, trust.Control)
	for _, c := range []struct{ method, path, reqMethod, headers string }{
		{"OPTIONS", "rc/call?d=" + p.DeviceID, "PUT", ""},
		{"OPTIONS", "rc/call?d=" + p.DeviceID, "POST", "content-type,x-other"},
		{"OPTIONS", "index.html", "GET", ""},
		{"GET", "", "", ""},
		{"GET", "rc/call?d=" + p.DeviceID, "", ""},
	} {
		req, _ := http.NewRequest(c.method, f.srv.URL()+c.path, nil)
		if c.reqMethod != "" {
			req.Header.Set("Access-Control-Request-Method", c.reqMethod)
		}
		if c.headers != "" {
			req.Header.Set("Access-Control-Request-Headers", c.headers)
		}
		res, err := f.from(t, pageA).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%+v from the pinned page: %d %v", c, res.StatusCode, res.Header)
		}
	}
	// A request a browser sends without asking first (text/plain), and one
	// from an origin not pinned to the device, reach nothing.
	for _, c := range []struct{ origin, path, ct string }{
		{pageA, "rc/resume?d=" + p.DeviceID, "text/plain"},
		{pageA, "rc/pair", "application/x-www-form-urlencoded"},
		{thirdSite, "rc/resume?d=" + p.DeviceID, "application/json"},
		{thirdSite, "rc/call?d=" + p.DeviceID + "&s=x", "application/json"},
		{pageA, "rc/resume", "application/json"},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+c.path, strings.NewReader(`{"d":"`+p.DeviceID+`","m":"stored","f":"x"}`))
		req.Header.Set("Content-Type", c.ct)
		res, err := f.from(t, c.origin).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%+v: %d %v", c, res.StatusCode, res.Header)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL()+"rc/events?d="+p.DeviceID+"&s=x&f=y", nil)
	res, err := f.from(t, thirdSite).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a third site's event stream with A's device: %d %v", res.StatusCode, res.Header)
	}
	// An origin that is no http or https origin pairs nothing.
	for _, o := range []string{"null", "file://", "http://a.example/path", "ftp://a.example"} {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"rc/pair", strings.NewReader(`{"p":"x","f":"y"}`))
		res, err := f.from(t, o).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("a pairing start from %q: %d %v", o, res.StatusCode, res.Header)
		}
	}
}

// TestComputersTheSquattersLootOpensNothing: a device paired from A's page
// keeps its stored secret in A's storage, which whatever serves A's address
// while A's serve is stopped reads, and sends from A's origin, while this
// computer keeps running. Over plain HTTP that secret opened the one
// session the page opened right after pairing, and nothing after.
func TestComputersTheSquattersLootOpensNothing(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "stored rule off", false: "stored rule on"}[off], func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.storedCrossForTest = off })
			p := f.pairFrom(t, pageA, trust.Full)
			if err := f.callFrom(t, pageA, p); err != nil { // the page, right after pairing: its stored secret
				t.Fatal(err)
			}
			if err := f.callFrom(t, pageA, p); err != nil { // and again, with the ticket it holds in memory
				t.Fatal(err)
			}
			loot := &Paired{Base: p.Base, DeviceID: p.DeviceID, Stored: p.Stored} // what A's storage holds: no ticket
			err := f.callFrom(t, pageA, loot)
			switch {
			case off && err != nil:
				t.Fatalf("the squatter's attack did not work with the stored rule off: %v", err)
			case !off && !errors.Is(err, ErrRestarted):
				t.Fatalf("the loot from A's storage was not refused: %v", err)
			}
			if off {
				return
			}
			// The person at this computer allows the page again by its code,
			// and the new stored secret opens one session again.
			p2, err := f.reconnectFrom(t, pageA, *p)
			if err != nil {
				t.Fatalf("reconnecting from A: %v", err)
			}
			p2.TicketID = ""
			if err := f.callFrom(t, pageA, &p2); err != nil {
				t.Fatalf("the stored secret after a reconnect: %v", err)
			}
		})
	}
}

// reconnectFrom reconnects p from origin, allowing it by the code shown.
func (f *fixture) reconnectFrom(t *testing.T, origin string, p Paired) (Paired, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shown := make(chan string, 1)
	type result struct {
		p   Paired
		err error
	}
	done := make(chan result, 1)
	go func() {
		np, err := Reconnect(ctx, f.from(t, origin), p, "A page", func(c string) { shown <- c })
		done <- result{np, err}
	}()
	select {
	case code := <-shown:
		if err := f.srv.Pairing().Decide(code, true, trust.None); err != nil {
			t.Fatal(err)
		}
	case r := <-done:
		return r.p, r.err
	}
	r := <-done
	return r.p, r.err
}

// A pairing's later steps come from the page that began it.
func TestComputersAPairingStaysWithItsPage(t *testing.T) {
	f := newFixture(t, nil)
	l, err := ParseLink(f.srv.Pairing().Link())
	if err != nil {
		t.Fatal(err)
	}
	// The start from A, the reveal from another origin: the client sends
	// every step through one client, so split it with a transport that
	// changes its origin after the first request.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	sw := &switching{rt: tr, first: pageA, then: thirdSite}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = Pair(ctx, &http.Client{Transport: sw}, l, "split", func(string) { t.Error("a code was shown") })
	if err == nil || !strings.Contains(err.Error(), msgOtherPage) {
		t.Fatalf("a pairing continued from another origin: %v", err)
	}
}

type switching struct {
	rt          http.RoundTripper
	first, then string
	n           int
}

func (s *switching) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	s.n++
	if s.n == 1 {
		req.Header.Set("Origin", s.first)
	} else {
		req.Header.Set("Origin", s.then)
	}
	return s.rt.RoundTrip(req)
}

// After this computer restarts, the page that stayed open at A comes back
// with its ticket, which rotates the stored secret (A's storage keeps the
// new one): that one opens nothing either.
func TestComputersARotatedStoredSecretOpensNothing(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "stored rule off", false: "stored rule on"}[off], func(t *testing.T) {
			gittest.Home(t, "")
			repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
			store := newStore(t)
			keep := func(o *Options) { o.Keep, o.storedCrossForTest = store, off }
			f, stop := serveRepo(t, repo, keep)
			p := f.pairFrom(t, pageA, trust.Full)
			if err := f.callFrom(t, pageA, p); err != nil {
				t.Fatal(err)
			}
			stop()
			f, _ = serveRepo(t, repo, keep)
			if err := f.callFrom(t, pageA, p); err != nil { // the open page's ticket
				t.Fatalf("the ticket after a restart: %v", err)
			}
			loot := &Paired{Base: p.Base, DeviceID: p.DeviceID, Stored: p.Stored} // the rotated secret, as A stores it
			err := f.callFrom(t, pageA, loot)
			switch {
			case off && err != nil:
				t.Fatalf("the rotated secret did not open a session with the stored rule off: %v", err)
			case !off && !errors.Is(err, ErrRestarted):
				t.Fatalf("the rotated secret from A's storage: %v", err)
			}
		})
	}
}
