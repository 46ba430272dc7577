// Package connlimit bounds how many connections a server holds open: per
// client address and in total.
//
// A server's descriptors and memory are spent per open connection, and an
// attacker who opens thousands of connections and never finishes a request
// (headers without a body, an upgraded socket that never speaks) holds them
// until a timeout fires. Timeouts alone do not help while the flood lasts:
// 20,000 slow connections inside a 10-second window still exhaust the
// descriptors. connlimit caps the number held at once, so one address can
// take at most perAddr of them and everyone together at most total.
//
// Use it by wrapping the listener before handing it to the server:
//
//	ln, _ := net.Listen("tcp", addr)
//	ln = connlimit.Listen(ln, 64, 4096)
//	srv.Serve(ln)
//
// A connection over either cap is closed at once, before the server reads a
// byte, and Accept goes on to the next one: the excess costs one accept and
// one close, not a goroutine and a buffer. The slot is freed when the server
// closes the connection (Close is counted once, however often it is called).
//
// The per-address key is the TCP peer's IP address (the port is dropped):
// behind a reverse proxy every client shares the proxy's address, so put the
// proxy's own limits in front or raise perAddr. IPv6 peers are keyed by
// their /64, the block one subscriber usually holds, so one host cannot
// step around the cap by cycling addresses within its prefix.
//
// Known limits: a connection accepted and then closed by the cap has still
// completed the TCP handshake, so a SYN flood or a flood of completed
// handshakes is the kernel's and the firewall's business; connlimit only
// bounds what the Go server holds.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Listen wraps l so that at most perAddr connections from one client address
// and at most total connections in all are open at once. A value <= 0 means
// no cap of that kind.
func Listen(l net.Listener, perAddr, total int) net.Listener {
	return &listener{Listener: l, perAddr: perAddr, total: total, byAddr: map[netip.Prefix]int{}}
}

// Stats reports what a listener returned by Listen has open and how many
// connections it closed at once for being over a cap. ok is false when l did
// not come from Listen.
func Stats(l net.Listener) (open int, refused uint64, ok bool) {
	ll, ok := l.(*listener)
	if !ok {
		return 0, 0, false
	}
	ll.mu.Lock()
	open = ll.open
	ll.mu.Unlock()
	return open, ll.refused.Load(), true
}

type listener struct {
	net.Listener
	perAddr, total int

	refused atomic.Uint64

	mu     sync.Mutex
	open   int
	byAddr map[netip.Prefix]int
}

// Accept returns the next connection within the caps; connections over a cap
// are closed here and never reach the caller.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := keyOf(c.RemoteAddr())
		if !l.take(key) {
			l.refused.Add(1)
			c.Close()
			continue
		}
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

// take reserves a slot for key, or reports false when a cap is reached.
func (l *listener) take(key netip.Prefix) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total > 0 && l.open >= l.total {
		return false
	}
	if l.perAddr > 0 && l.byAddr[key] >= l.perAddr {
		return false
	}
	l.open++
	l.byAddr[key]++
	return true
}

// release frees the slot taken for key.
func (l *listener) release(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[key] <= 1 {
		delete(l.byAddr, key) // the map holds only addresses with open connections
	} else {
		l.byAddr[key]--
	}
}

// keyOf is the per-address key: the peer's IP (IPv4) or its /64 (IPv6).
// An address that is not TCP/UDP (a Unix socket, a test pipe) shares one key.
func keyOf(a net.Addr) netip.Prefix {
	var ap netip.AddrPort
	switch a := a.(type) {
	case *net.TCPAddr:
		ap = a.AddrPort()
	case *net.UDPAddr:
		ap = a.AddrPort()
	default:
		return netip.Prefix{}
	}
	ip := ap.Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

type conn struct {
	net.Conn
	l    *listener
	key  netip.Prefix
	once sync.Once
}

// Close closes the connection and frees its slot once.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}
