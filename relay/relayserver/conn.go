package relayserver

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse/gatehouse/relay"
)

// A conn is one device's socket. Idle, it costs one goroutine parked in a
// read and a small read buffer: nothing is written without a frame to
// write, and the goroutine that writes is started only while frames wait
// (then exits), with write buffers borrowed from a pool shared by every
// socket. The send queue is bounded in bytes and every write has a
// deadline, so a device that reads slowly loses its own frames and its
// socket, and never holds the sender or the relay's memory.

// Socket limits.
const (
	maxQueueBytes = 4 * relay.MaxFrame // waiting to be written to one socket
	writeWait     = 10 * time.Second   // one frame's write
	idleWait      = 75 * time.Second   // nothing received: clients ping every 25 s
	frameRate     = 20                 // frames a second, sustained
	frameBurst    = 100                //
	closeWait     = 2 * time.Second    // for the close frame on the way out
	readBuffer    = 1 << 10            // the socket's own read buffer
)

type queued struct {
	frame *[]byte
	at    time.Time
}

type conn struct {
	s       *Server
	ws      *websocket.Conn
	account string
	device  string
	gen     string // the token's: a socket whose device's gen changed is closed
	id      string // names this socket across nodes (the newer one wins)

	mu      sync.Mutex
	queue   []queued
	bytes   int
	writing bool
	closed  bool

	rate bucket // read loop only
}

// framePool recycles the frames the relay builds to forward.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 2<<10); return &b }}

func getFrame() *[]byte { return framePool.Get().(*[]byte) }

func putFrame(b *[]byte) {
	if cap(*b) <= relay.MaxFrame+512 {
		*b = (*b)[:0]
		framePool.Put(b)
	}
}

// send queues a frame for the device; false means it was dropped (the
// socket is closed, or too much already waits for it). The frame belongs to
// the conn from here on.
func (c *conn) send(frame *[]byte) bool {
	c.mu.Lock()
	if c.closed || c.bytes+len(*frame) > maxQueueBytes {
		closed := c.closed
		c.mu.Unlock()
		putFrame(frame)
		if closed {
			c.s.m.dropped.WithLabelValues("closed").Inc()
		} else {
			c.s.m.dropped.WithLabelValues("queue_full").Inc()
		}
		return false
	}
	c.queue = append(c.queue, queued{frame, c.s.now()})
	c.bytes += len(*frame)
	start := !c.writing
	c.writing = true
	c.mu.Unlock()
	if start {
		go c.flush()
	}
	return true
}

// sendJSON queues a relay-made frame (presence, undeliverable, error).
func (c *conn) sendJSON(v any) bool {
	b := getFrame()
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v)
	*b = append(*b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	return c.send(b)
}

// flush writes what waits, then exits. One runs at a time per conn.
func (c *conn) flush() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.closed {
			for _, q := range c.queue {
				putFrame(q.frame)
			}
			c.queue, c.bytes, c.writing = nil, 0, false
			c.mu.Unlock()
			return
		}
		q := c.queue[0]
		c.queue[0] = queued{}
		c.queue = c.queue[1:]
		c.bytes -= len(*q.frame)
		c.mu.Unlock()

		c.s.m.queueTime.Observe(c.s.now().Sub(q.at).Seconds())
		_ = c.ws.SetWriteDeadline(time.Now().Add(writeWait))
		typ := websocket.TextMessage
		if relay.IsBinary(*q.frame) {
			typ = websocket.BinaryMessage
		}
		err := c.ws.WriteMessage(typ, *q.frame)
		c.s.m.bytes.WithLabelValues("out").Add(float64(len(*q.frame)))
		putFrame(q.frame)
		if err != nil {
			c.s.m.dropped.WithLabelValues("write_failed").Inc()
			c.s.log.Debug("write failed; closing the socket", "device", c.device, "err", err)
			c.close(websocket.CloseGoingAway, "")
		}
	}
}

// isClosed reports whether the socket is closed or closing.
func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// close sends a close frame with code (0: none) and closes the socket.
// The read loop then ends and leaves the hub.
func (c *conn) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	if code != 0 {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeWait))
	}
	_ = c.ws.Close()
}

// readBufs are the buffers frames are read into, shared by every socket:
// an idle socket holds none, and a large frame does not cost a fresh
// allocation (and its clearing) each time.
var readBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readLoop reads frames until the socket ends, then leaves the hub.
func (c *conn) readLoop() {
	defer func() {
		c.close(0, "")
		c.s.leave(c)
	}()
	for {
		_ = c.ws.SetReadDeadline(time.Now().Add(idleWait))
		typ, r, err := c.ws.NextReader()
		if err != nil {
			return
		}
		buf := readBufs.Get().(*bytes.Buffer)
		buf.Reset()
		_, err = buf.ReadFrom(r) // the socket's read limit bounds it, binary or text
		switch {
		case err != nil:
		case typ == websocket.BinaryMessage:
			c.s.m.bytes.WithLabelValues("in").Add(float64(buf.Len()))
			c.s.handleBinary(c, buf.Bytes()) // copies what it keeps
		default:
			c.s.m.bytes.WithLabelValues("in").Add(float64(buf.Len()))
			c.s.handleFrame(c, buf.Bytes()) // copies what it keeps
		}
		readBufs.Put(buf)
		if err != nil {
			return // over the read limit, or the socket broke
		}
	}
}
