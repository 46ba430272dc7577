// Package flood opens the slow connections that the servers' tests and
// benchmarks attack themselves with: thousands of connections from one
// loopback address that send a request's headers and never its body. Only
// tests import it.
package flood

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// RaiseFileLimit lifts the soft descriptor limit to the hard one, and skips
// the test when even that is below need (a flood holds each connection
// twice in one process: client and server side).
func RaiseFileLimit(tb testing.TB, need uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	if uint64(lim.Cur) < need {
		tb.Skipf("the descriptor limit %d is below the %d this test needs", lim.Cur, need)
	}
}

// HeadersOnly dials addr n times from the loopback address from, writes
// head (a request's headers, announcing a body that never comes) on each,
// and returns the connections, closed when the test ends. A connection the
// server closed at once (a cap) may refuse the write: that is the server's
// answer, not an error.
func HeadersOnly(tb testing.TB, from, addr, head string, n int) []net.Conn {
	tb.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conns := make([]net.Conn, 0, n)
	tb.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			tb.Fatalf("slow connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
		_, _ = io.WriteString(c, head)
	}
	return conns
}
