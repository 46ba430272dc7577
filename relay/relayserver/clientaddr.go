package relayserver

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
)

// The address a request is counted against (the sign-in limit per
// address) is the TCP peer's, or, when the peer is a proxy on this machine
// and Options.ProxyHeader names its header, the address the proxies wrote
// there. A client can write that header too, so which part to read is the
// whole rule.
//
// Every common proxy appends the peer it saw and keeps what the client
// sent: nginx's $proxy_add_x_forwarded_for, Caddy, Envoy and Go's
// httputil.ReverseProxy add ", PEER" to the line; HAProxy's option
// forwardfor adds a line of its own after the client's. The header's lines
// are therefore one comma-separated list, in order, whose right end was
// written by the trusted proxies, one element each, and everything left of
// that by the client. The address is the element ProxyHops places from the
// right: the one the outermost trusted proxy appended. Nothing left of it
// is read. (Found by a black-box attack: the relay read the last element of
// the header's first line, which behind HAProxy is the client's own, so a
// client rotating "X-Forwarded-For: 1.2.3.4" chose its budget at will.)

// maxProxyHops bounds Options.ProxyHops: a chain of more trusted proxies
// than this is a configuration error, not a deployment.
const maxProxyHops = 8

// errNoProxyAddr: the proxy header gives no address where the trusted
// proxies write one.
var errNoProxyAddr = errors.New("the proxy header has no client address where the trusted proxies write it")

// clientAddr is the key the per-address limits count r against, or
// errNoProxyAddr when a trusted proxy's header is missing, shorter than
// the trusted hops, or has no address in the trusted place.
//
// Such a request is refused, not counted as someone else. Correctly
// configured proxies always append, so it is a misconfiguration (a wrong
// header name, a proxy that does not append, more hops configured than
// there are proxies), and every stand-in is worse than a refusal: reading
// further left lets the client choose its address, and the peer (the
// proxy) or one shared key puts every such client in one budget, where one
// client's flood locks out the rest while the operator sees sign-ins
// merely get slower.
func (s *Server) clientAddr(r *http.Request) (string, error) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil { // not TCP (a test's pipe): one key for all of them
		return "peer:" + r.RemoteAddr, nil
	}
	if s.o.ProxyHeader == "" || !peer.Addr().Unmap().IsLoopback() {
		return addrKey(peer.Addr()), nil
	}
	lines := r.Header.Values(s.o.ProxyHeader)
	if s.firstLineForTest && len(lines) > 1 {
		lines = lines[:1] // the old rule, to show what it let through
	}
	v, ok := forwardedFor(lines, s.o.ProxyHops)
	if !ok {
		return "", errNoProxyAddr
	}
	a, ok := canonicalAddr(v)
	if !ok {
		return "", errNoProxyAddr
	}
	return addrKey(a), nil
}

// forwardedFor is the element hops places from the right of the list that
// the header's lines make, in order (hops is at least 1), its spaces
// trimmed, and false when the list is shorter. An empty element counts as
// one: a proxy appends exactly one element, so positions, not contents,
// say who wrote what.
func forwardedFor(unsafeLines []string, hops int) (string, bool) {
	for i := len(unsafeLines) - 1; i >= 0; i-- {
		line := unsafeLines[i]
		for {
			cut := strings.LastIndexByte(line, ',')
			if hops--; hops == 0 {
				return strings.TrimSpace(line[cut+1:]), true
			}
			if cut < 0 {
				break
			}
			line = line[:cut]
		}
	}
	return "", false
}

// canonicalAddr is one spelling per address (a port, brackets, a zone,
// letter case and an IPv4-mapped form dropped), so that writing one
// address another way is not another address's budget; false when v is
// not an address.
func canonicalAddr(v string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if len(v) > 2 && v[0] == '[' && v[len(v)-1] == ']' {
		v = v[1 : len(v)-1]
	}
	if a, err := netip.ParseAddr(v); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

// addrKey is the budget an address is counted in: an IPv4 address, or the
// /64 an IPv6 address is in. A subscriber usually holds a whole /64 and can
// use any address in it, so a key per IPv6 address would let one host step
// around the limit by cycling its addresses (internal/connlimit keys the
// connection caps the same way).
func addrKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
