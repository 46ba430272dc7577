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
// The per-address key is the TCP peer's whole IP address (the port is
// dropped; an IPv4-mapped IPv6 address is its IPv4 one): behind a reverse
// proxy every client shares the proxy's address, so put the proxy's own
// limits in front or raise perAddr. IPv6 peers are not keyed by their /64:
// every host on one LAN shares the LAN's /64, so a /64 key made the LAN one
// address, and one laptop's connections locked the phone beside it out of
// serve (found by a black-box attack).
//
// The price is that one IPv6 host may cycle addresses within its /64 (it
// may assign itself as many as it likes) and so take perAddr connections
// for each, as a host given many IPv4 addresses can. That stays bounded by
// the total cap, and under ListenShedding by the shedding of connections
// that do no proven work, which is what lets a real request in beside such
// a flood. There is deliberately no second, per-/64 cap: on a LAN the phone
// is in the flooding host's /64, so any per-/64 cap below the total cap
// would lock it out again, and one at the total cap is no cap; on the
// internet an IPv6 subscriber is usually delegated a /56 or /48 (256 or
// 65,536 /64s), so a /64 cap never bounded a determined one either.
//
// ListenShedding is Listen for a server that tells the listener which
// connections carry proven work (Working, from a handler that authenticated
// its request) and which are idle (ConnState, as the http.Server's hook).
// At the total cap it does not refuse the newcomer: it closes the oldest
// connection that is neither working nor new-and-proven, that is, one that
// has not finished sending a request or sits idle between requests. A flood
// of headers-only connections from many addresses then churns itself, while
// a real request, which completes in milliseconds, gets in (found by a red
// team: 16 addresses with 32 headers-only connections each filled the LAN
// server's 512 and shut everyone out). The per-address cap still refuses.
//
// Known limits: a connection accepted and then closed by the cap has still
// completed the TCP handshake, so a SYN flood or a flood of completed
// handshakes is the kernel's and the firewall's business; connlimit only
// bounds what the Go server holds.
package connlimit

import (
	"container/list"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
)

// Listen wraps l so that at most perAddr connections from one client address
// and at most total connections in all are open at once. A value <= 0 means
// no cap of that kind.
func Listen(l net.Listener, perAddr, total int) net.Listener {
	return &listener{Listener: l, perAddr: perAddr, total: total, byAddr: map[netip.Addr]int{}}
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

// ListenShedding wraps l like Listen, and at the total cap closes the oldest
// connection that is not doing proven work to make room (see the package
// doc). The server must report states through ConnState and Working.
func ListenShedding(l net.Listener, perAddr, total int) net.Listener {
	ll := Listen(l, perAddr, total).(*listener)
	ll.shed = true
	ll.order = list.New()
	return ll
}

// Connection states a shedding listener tracks.
const (
	stateUnproven int32 = iota // accepted, or reading a request not yet authenticated
	stateIdle                  // between requests on a kept-alive connection
	stateWorking               // a handler authenticated its request
)

// ConnState is an http.Server's ConnState hook for a shedding listener.
func ConnState(c net.Conn, s http.ConnState) {
	cc, ok := unwrap(c)
	if !ok {
		return
	}
	switch s {
	case http.StateIdle:
		cc.state.Store(stateIdle)
	case http.StateActive:
		cc.state.Store(stateUnproven)
	}
}

type connKey struct{}

// WithConn is an http.Server's ConnContext hook: it keeps the connection in
// the request's context for Working.
func WithConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// Working marks the connection of the request whose context is ctx as
// carrying authenticated work: it is not shed until its request ends.
func Working(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(net.Conn); ok {
		if cc, ok := unwrap(c); ok {
			cc.state.Store(stateWorking)
		}
	}
}

// unwrap finds the listener's connection under c, which may be a TLS
// connection over it (an HTTPS server on a shedding listener).
func unwrap(c net.Conn) (*conn, bool) {
	for range 4 {
		if cc, ok := c.(*conn); ok {
			return cc, true
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		c = w.NetConn()
	}
	return nil, false
}

type listener struct {
	net.Listener
	perAddr, total int
	shed           bool
	order          *list.List // every open connection, oldest first (shedding only)

	refused atomic.Uint64
	shed1   atomic.Uint64 // connections closed to make room

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]int
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
		if !l.take(key) && !(l.shedOne() && l.take(key)) {
			l.refused.Add(1)
			c.Close()
			continue
		}
		cc := &conn{Conn: c, l: l, key: key}
		if l.shed {
			l.mu.Lock()
			cc.elem = l.order.PushBack(cc)
			l.mu.Unlock()
		}
		return cc, nil
	}
}

// shedOne closes the oldest connection that is not working, when the
// listener sheds and the total cap is what is full. It reports whether it
// closed one.
func (l *listener) shedOne() bool {
	if !l.shed {
		return false
	}
	l.mu.Lock()
	var victim *conn
	if l.total > 0 && l.open >= l.total {
		for e := l.order.Front(); e != nil; e = e.Next() {
			if c := e.Value.(*conn); c.state.Load() != stateWorking {
				victim = c
				break
			}
		}
	}
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	l.shed1.Add(1)
	victim.Close()
	return true
}

// take reserves a slot for key, or reports false when a cap is reached.
func (l *listener) take(key netip.Addr) bool {
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

// release frees the slot taken for c.
func (l *listener) release(c *conn) {
	key := c.key
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.order.Remove(c.elem)
	}
	l.open--
	if l.byAddr[key] <= 1 {
		delete(l.byAddr, key) // the map holds only addresses with open connections
	} else {
		l.byAddr[key]--
	}
}

// keyOf is the per-address key: the peer's whole IP address as the kernel
// reports it, an IPv4-mapped IPv6 address as IPv4. An address that is not
// TCP/UDP (a Unix socket, a test pipe) shares one key, the zero Addr.
func keyOf(a net.Addr) netip.Addr {
	var ap netip.AddrPort
	switch a := a.(type) {
	case *net.TCPAddr:
		ap = a.AddrPort()
	case *net.UDPAddr:
		ap = a.AddrPort()
	default:
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

type conn struct {
	net.Conn
	l     *listener
	key   netip.Addr
	once  sync.Once
	elem  *list.Element // in l.order (shedding only)
	state atomic.Int32
}

// SyscallConn hands out the socket's descriptor, for a reader that looks
// for waiting bytes without blocking (the relay's read-ahead).
func (c *conn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// Close closes the connection and frees its slot once.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
