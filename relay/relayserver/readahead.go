package relayserver

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"syscall"
)

// A socket's own read buffer is small (readBuffer, 1 KiB) because an idle
// socket keeps it. A frame that arrives in many small pieces (a client that
// writes 64 KiB as sixty-four 1 KiB WebSocket fragments, or 1 KiB frames
// back to back) would then cost one read system call per KiB (bench/relay's
// client writing 1 KiB pieces cost the relay 134,000 reads of 900 bytes each
// for 120 MB, 62 % of its CPU).
//
// readAheadConn takes what waits in the kernel in one call instead, into a
// buffer borrowed from a pool shared by every socket, and hands it out
// until it is empty. It borrows only after a read filled its buffer (more
// is probably waiting), reads without blocking, and gives the buffer back as
// soon as it is drained: a read that has to wait for the peer reads straight
// into the caller's buffer, so a socket parked in a read (every idle socket)
// holds no borrowed buffer, and a socket holds at most one while it works.

const readAheadSize = 64 << 10

// An aheadBuf is a borrowed buffer and the part of it, b[r:w], not yet
// handed out.
type aheadBuf struct {
	b    [readAheadSize]byte
	r, w int
}

var aheadBufs = sync.Pool{New: func() any { return new(aheadBuf) }}

// readAheadConn adds 32 bytes to an idle socket (the wrapper itself): the
// descriptor is asked for at each read ahead rather than kept.
type readAheadConn struct {
	net.Conn
	ahead  *aheadBuf // borrowed while it holds bytes not yet handed out
	full   bool      // the last read filled its buffer
	aheads int       // reads ahead that found bytes (tests count them)
}

// readAhead wraps a ResponseWriter so that the connection its Hijack
// returns reads ahead (the WebSocket upgrader hijacks it).
func readAhead(w http.ResponseWriter) http.ResponseWriter { return readAheadWriter{w} }

type readAheadWriter struct{ http.ResponseWriter }

func (w readAheadWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	return &readAheadConn{Conn: c}, brw, nil
}

// Read hands out what a read ahead left, or reads: ahead if the last read
// filled its buffer, else (and whenever nothing waits) straight into p.
// Only the WebSocket's read loop calls it.
func (c *readAheadConn) Read(p []byte) (int, error) {
	if c.ahead == nil && c.full && len(p) < readAheadSize {
		c.fill()
	}
	a := c.ahead
	if a == nil {
		n, err := c.Conn.Read(p)
		c.full = n == len(p)
		return n, err
	}
	n := copy(p, a.b[a.r:a.w])
	a.r += n
	if a.r == a.w {
		aheadBufs.Put(a)
		c.ahead = nil
	}
	return n, nil
}

// fill borrows a buffer and reads what waits into it, without blocking.
// With nothing waiting, no descriptor (a TLS conn) or an error (which the
// next plain read reports), it gives the buffer back.
func (c *readAheadConn) fill() {
	c.full = false
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	a := aheadBufs.Get().(*aheadBuf)
	n := 0
	err = raw.Read(func(fd uintptr) bool {
		n, _ = syscall.Read(int(fd), a.b[:])
		return true // never wait here: a wait is a plain read's
	})
	if err != nil || n <= 0 {
		aheadBufs.Put(a)
		return
	}
	a.r, a.w = 0, n
	c.ahead, c.full = a, n == len(a.b)
	c.aheads++
}
