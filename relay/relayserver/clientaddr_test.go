package relayserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// startProxy is a real reverse proxy on loopback in front of target that
// appends to X-Forwarded-For the address it saw (seen, or else its peer)
// and keeps what the client sent there: in the client's line, as
// httputil.ReverseProxy itself does (and nginx's $proxy_add_x_forwarded_for,
// Caddy and Envoy), or, with ownLine, in a line of its own after the
// client's, as HAProxy's option forwardfor does. It returns its URL.
func startProxy(t *testing.T, target string, ownLine bool, seen string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u) // appends the peer to the client's line
	if ownLine || seen != "" {
		p = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			addr := seen
			if addr == "" {
				addr, _, _ = net.SplitHostPort(pr.In.RemoteAddr)
			}
			lines := slices.Clone(pr.In.Header.Values("X-Forwarded-For"))
			switch {
			case ownLine || len(lines) == 0:
				lines = append(lines, addr)
			default:
				lines = []string{strings.Join(append(lines, addr), ", ")}
			}
			pr.Out.Header["X-Forwarded-For"] = lines
		}}
	}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	return ps.URL
}

// signInFrom posts a sign-in (not a valid one: 400 when its address's
// budget allows it, 429 when not) to base, with X-Forwarded-For lines the
// client wrote, and returns the status and the error sentence.
func signInFrom(t *testing.T, base string, unsafeForwarded ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/auth/invite", strings.NewReader("{}"))
	for _, v := range unsafeForwarded {
		req.Header.Add("X-Forwarded-For", v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]string
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body["error"]
}

// rotateForged signs in authPerIP+1 times through base, each time with
// another forged X-Forwarded-For, and returns how many were refused 429.
func rotateForged(t *testing.T, base string) int {
	t.Helper()
	limited := 0
	for i := range authPerIP + 1 {
		forged := []string{fmt.Sprintf("203.0.113.%d", i+1)}
		if i%2 == 1 { // two lines, and other spellings
			forged = []string{fmt.Sprintf("198.51.100.%d", i+1), fmt.Sprintf("[::ffff:203.0.113.%d]:443", i+1)}
		}
		if code, _ := signInFrom(t, base, forged...); code == http.StatusTooManyRequests {
			limited++
		}
	}
	return limited
}

// Found by a black-box attack: behind a proxy that appends its own
// X-Forwarded-For line (HAProxy's option forwardfor), the relay counted the
// address the client wrote in its own line, so a client that rotated a
// forged header was never held by the per-address sign-in limit. Shown
// first with the old rule (the header's first line), then stopped: every
// forged address counts against the one the proxy appended. Behind a proxy
// that appends to the client's line (httputil.ReverseProxy, as nginx,
// Caddy and Envoy) the old rule happened to hold, and the new one holds
// too.
func TestForgedForwardedForIsNotTheAddress(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ownLine      bool
		oldRuleFools bool
	}{
		{"ReverseProxy appends to the line", false, false},
		{"HAProxy-style line of its own", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useHeader := func(o *Options) { o.ProxyHeader = "X-Forwarded-For" }
			old := startRelayServer(t, useHeader, func(s *Server) { s.firstLineForTest = true })
			limited := rotateForged(t, startProxy(t, old.url, tc.ownLine, ""))
			if tc.oldRuleFools && limited != 0 {
				t.Fatalf("the old rule was expected to count the forged addresses, yet %d sign-ins were limited", limited)
			}
			if !tc.oldRuleFools && limited != 1 {
				t.Fatalf("the old rule limited %d sign-ins through a proxy that appends to the line; want 1", limited)
			}

			r := startRelay(t, useHeader)
			proxy := startProxy(t, r.url, tc.ownLine, "")
			if limited := rotateForged(t, proxy); limited != 1 {
				t.Fatalf("rotating a forged X-Forwarded-For escaped the limit: %d of %d limited", limited, authPerIP+1)
			}
			// The budget spent was the address the proxy saw (this
			// machine): a sign-in with no forged header is held too.
			if code, _ := signInFrom(t, proxy); code != http.StatusTooManyRequests {
				t.Fatalf("the proxy-appended address was not the one counted: %d", code)
			}
		})
	}
}

// With two trusted proxies, the address is the one the outer proxy
// appended (two from the right): a client's forged elements left of it
// are not read, and the inner proxy's (this machine) is not the budget.
func TestProxyHopsCountTheOutermostProxysAddress(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.ProxyHeader = "X-Forwarded-For"; o.ProxyHops = 2 })
	inner := startProxy(t, r.url, false, "")
	outer := startProxy(t, inner, true, "198.51.100.7") // as if the client came from there
	if limited := rotateForged(t, outer); limited != 1 {
		t.Fatalf("rotating a forged X-Forwarded-For through two proxies escaped the limit: %d limited", limited)
	}
	// Straight to the relay, as the inner proxy would send it.
	if code, _ := signInFrom(t, r.url, "203.0.113.9, 198.51.100.7, 127.0.0.1"); code != http.StatusTooManyRequests {
		t.Fatalf("198.51.100.7 was not the address counted: %d", code)
	}
	if code, _ := signInFrom(t, r.url, "198.51.100.7, 198.51.100.8, 127.0.0.1"); code != http.StatusBadRequest {
		t.Fatalf("another address than the outer proxy's shared its budget: %d", code)
	}
}

// A trusted proxy's header without an address where the proxies write one
// (missing, shorter than the hops, not an address) is refused, not counted
// as the proxy or as one shared key: a flood of such requests spends no
// one's budget, and the operator is told (once a minute) rather than
// seeing sign-ins slow down.
func TestProxyHeaderWithoutAddressIsRefused(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.ProxyHeader = "X-Forwarded-For"; o.ProxyHops = 2 })
	for _, lines := range [][]string{
		nil,                          // no header at all
		{"198.51.100.7"},             // one proxy where two append
		{"unknown, 127.0.0.1"},       // not an address
		{"198.51.100.7,, 127.0.0.1"}, // an empty element is one
		{strings.Repeat("1", 8<<10) + ", 127.0.0.1"},
	} {
		for range authPerIP + 1 {
			if code, msg := signInFrom(t, r.url, lines...); code != http.StatusBadRequest || msg != msgNoAddress {
				t.Fatalf("%q: %d %q", lines, code, msg)
			}
		}
	}
	if n := strings.Count(r.logs.String(), "refusing a sign-in"); n != 1 {
		t.Errorf("the misconfiguration was logged %d times; want once a minute", n)
	}
	if code, msg := signInFrom(t, r.url, "198.51.100.7, 127.0.0.1"); code != http.StatusBadRequest || msg == msgNoAddress {
		t.Fatalf("a request with an address after a flood without: %d %q", code, msg)
	}
}

// The header is read only from a proxy on this machine; any other peer is
// its own address, whatever it sends. An IPv6 address is counted by its
// /64.
func TestClientAddrFromPeer(t *testing.T) {
	s := &Server{o: Options{ProxyHeader: "X-Forwarded-For", ProxyHops: 1}}
	for _, tc := range []struct{ peer, header, want string }{
		{"192.0.2.1:5555", "1.2.3.4", "192.0.2.1"},
		{"[2001:db8::1]:443", "1.2.3.4", "2001:db8::/64"},
		{"[::ffff:192.0.2.1]:443", "1.2.3.4", "192.0.2.1"},
		{"127.0.0.1:5555", "1.2.3.4", "1.2.3.4"},
		{"[::1]:5555", "1.2.3.4, 2001:db8:0:0:5::9", "2001:db8::/64"},
		{"[::ffff:127.0.0.1]:5555", "1.2.3.4", "1.2.3.4"},
	} {
		req := httptest.NewRequest("POST", "/v1/auth/invite", nil)
		req.RemoteAddr = tc.peer
		req.Header.Set("X-Forwarded-For", tc.header)
		if got, err := s.clientAddr(req); err != nil || got != tc.want {
			t.Errorf("from %s with %q: %q %v, want %q", tc.peer, tc.header, got, err, tc.want)
		}
	}
	// Without a proxy header, a loopback peer's header is not read either.
	req := httptest.NewRequest("POST", "/v1/auth/invite", nil)
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("X-Forwarded-For", "1.2.3.4")
	if got, _ := (&Server{}).clientAddr(req); got != "127.0.0.1" {
		t.Errorf("without a proxy header: %q", got)
	}
}

func TestForwardedFor(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		hops  int
		want  string
		ok    bool
	}{
		{[]string{"1.1.1.1"}, 1, "1.1.1.1", true},
		{[]string{"6.6.6.6, 1.1.1.1"}, 1, "1.1.1.1", true},
		{[]string{"6.6.6.6", "1.1.1.1"}, 1, "1.1.1.1", true},
		{[]string{"6.6.6.6, 7.7.7.7", " 1.1.1.1 ,  2.2.2.2 "}, 2, "1.1.1.1", true},
		{[]string{"6.6.6.6", "1.1.1.1, 2.2.2.2"}, 3, "6.6.6.6", true},
		{[]string{"1.1.1.1,"}, 1, "", true},
		{[]string{"", "1.1.1.1"}, 2, "", true},
		{[]string{"1.1.1.1"}, 2, "", false},
		{nil, 1, "", false},
	} {
		got, ok := forwardedFor(tc.lines, tc.hops)
		if got != tc.want || ok != tc.ok {
			t.Errorf("forwardedFor(%q, %d) = %q %v, want %q %v", tc.lines, tc.hops, got, ok, tc.want, tc.ok)
		}
	}
}

// forwardedFor reads the same element as splitting every line, which is
// what the rule says; it just does not split what it never reads.
func FuzzForwardedFor(f *testing.F) {
	f.Add("6.6.6.6, 1.1.1.1", "2.2.2.2", 2)
	f.Add(",,", "", 1)
	f.Fuzz(func(t *testing.T, a, b string, hops int) {
		if hops < 1 || hops > maxProxyHops {
			return
		}
		lines := []string{a, b}
		var list []string
		for _, l := range lines {
			list = append(list, strings.Split(l, ",")...)
		}
		want, wantOK := "", len(list) >= hops
		if wantOK {
			want = strings.TrimSpace(list[len(list)-hops])
		}
		if got, ok := forwardedFor(lines, hops); got != want || ok != wantOK {
			t.Fatalf("forwardedFor(%q, %d) = %q %v, want %q %v", lines, hops, got, ok, want, wantOK)
		}
	})
}

// One address, however a proxy spells it, is one budget; an IPv6 host's
// /64 is one budget.
func TestCanonicalAddr(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.5": "10.0.0.5", "10.0.0.5:4431": "10.0.0.5", "::ffff:10.0.0.5": "10.0.0.5",
		"[::ffff:10.0.0.5]:80": "10.0.0.5", "2001:DB8:0:0:0:0:0:1": "2001:db8::/64",
		"[2001:db8::1]": "2001:db8::/64", "[2001:db8::1]:80": "2001:db8::/64", "2001:db8::ffff:1:2": "2001:db8::/64",
		"2001:db8:0:1::1": "2001:db8:0:1::/64", "fe80::1%eth0": "fe80::/64",
	} {
		a, ok := canonicalAddr(in)
		if got := addrKey(a); !ok || got != want {
			t.Errorf("canonicalAddr(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"010.0.0.5", "not-an-ip", "", "[10.0.0.5", "[]", "unknown", "10.0.0.5:x"} {
		if a, ok := canonicalAddr(in); ok {
			t.Errorf("canonicalAddr(%q) = %v, want not an address", in, a)
		}
	}
}
