package relayserver

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// loopback is a connected TCP pair: what the test writes to the first, the
// second (read ahead) reads.
func loopback(t *testing.T) (net.Conn, *readAheadConn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l = DefaultConnLimits().Listen(l) // as the relay serves: its descriptor still reached
	defer l.Close()
	w, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); r.Close() })
	if _, ok := r.(syscall.Conn); !ok {
		t.Fatal("the relay's socket hands out no descriptor to read ahead from")
	}
	return w, &readAheadConn{Conn: r}
}

// The bytes come out as they went in, whatever the pieces they were written
// and read in, and the reads did go ahead.
func TestReadAheadHandsOutTheStreamAsSent(t *testing.T) {
	w, rc := loopback(t)
	rng := rand.New(rand.NewPCG(1, 2))
	sent := make([]byte, 3<<20)
	for i := range sent {
		sent[i] = byte(rng.Uint32())
	}
	var written atomic.Int64
	wrng := rand.New(rand.NewPCG(3, 4)) // the writer's own: rng is the reader's
	go func() {
		for rest := sent; len(rest) > 0; {
			n := min(len(rest), 1+wrng.IntN(5000))
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			written.Add(int64(n))
			rest = rest[n:]
			if wrng.IntN(50) == 0 {
				time.Sleep(time.Millisecond) // the reader catches up and waits
			}
		}
	}()
	// The first two reads start once four socket buffers' worth waits in
	// the receive queue (asked of the kernel: bytes written are not yet
	// bytes queued when the loopback's delivery is deferred on a loaded
	// machine, and the count of written bytes let the reads start early,
	// come back short and never go ahead). The first then fills its buffer
	// and the second reads ahead, whatever the load: a state, not a clock.
	// Where the socket cannot say, the written count stands in.
	deadline := time.Now().Add(30 * time.Second)
	for q := inQueue(rc.Conn); q < 4*readBuffer && (q >= 0 || written.Load() < 4*readBuffer); q = inQueue(rc.Conn) {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d bytes written and %d queued: the writer is stuck", written.Load(), q)
		}
		time.Sleep(time.Millisecond)
	}
	got := make([]byte, 0, len(sent))
	for range 2 {
		p := make([]byte, readBuffer)
		n, err := rc.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p[:n]...)
	}
	br := bufio.NewReaderSize(rc, readBuffer) // as gorilla reads
	for len(got) < len(sent) {
		p := make([]byte, []int{1, 100, 1024, 4096, 70 << 10}[len(got)%5])
		n, err := br.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, sent) {
		t.Fatal("the stream read ahead differs from the stream sent")
	}
	// Counted where it happens: looking for a held buffer after each read
	// missed a read ahead that the same read drained, and beside the full
	// suite and two busy loops saw none.
	if rc.aheads == 0 {
		t.Fatal("no read went ahead")
	}
}

// A read that must wait for the peer holds no borrowed buffer: the buffer
// goes back to the pool as soon as it is drained, before the next read
// (which is the one that blocks).
func TestReadAheadHoldsNothingWhileWaiting(t *testing.T) {
	w, rc := loopback(t)
	if _, err := w.Write(make([]byte, 3000)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // all 3000 bytes wait in the kernel
	p := make([]byte, 1024)
	for i, want := range []struct {
		n    int
		held bool
	}{{1024, false}, {1024, true}, {952, false}} { // straight; ahead (1976 taken); drained
		n, err := rc.Read(p)
		if err != nil || n != want.n || (rc.ahead != nil) != want.held {
			t.Fatalf("read %d: %d bytes, %v, holding a buffer: %v", i, n, err, rc.ahead != nil)
		}
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = w.Write([]byte("later"))
	}()
	n, err := rc.Read(p) // waits, straight into p
	if err != nil || string(p[:n]) != "later" || rc.ahead != nil {
		t.Fatalf("read after the wait: %q, %v, holding a buffer: %v", p[:n], err, rc.ahead != nil)
	}
}

// Through the relay: a 64 KiB frame sent as sixty-four 1 KiB WebSocket
// fragments, and 1 KiB frames back to back, arrive byte for byte.
func TestFragmentedFramesAreForwardedWhole(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.FrameLimitForTest = &FrameLimit{Rate: 1e6, Burst: 1e6} })
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsH := r.dial(host, true)
	u := "ws" + strings.TrimPrefix(r.url, "http") + "/v1/connect?host=0"
	small := websocket.Dialer{ReadBufferSize: 1024, WriteBufferSize: 1024}
	wsP, _, err := small.Dial(u, map[string][]string{"Authorization": {"Bearer " + phone.token}})
	if err != nil {
		t.Fatal(err)
	}
	defer wsP.Close()
	go func() { _, _ = io.Copy(io.Discard, wsP.NetConn()) }() // presence and the like
	bodies := []string{strings.Repeat("AbC+/=9z", 8<<10)}
	for i := range 20 {
		bodies = append(bodies, strings.Repeat(string(rune('a'+i)), 1024))
	}
	for _, b := range bodies {
		if err := wsP.WriteMessage(websocket.TextMessage, []byte(`{"to":"`+host.profile.DeviceID+`","body":"`+b+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	_ = wsH.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := 0; i < len(bodies); {
		_, data, err := wsH.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`"presence"`)) {
			continue
		}
		want := `{"from":"` + phone.profile.DeviceID + `","to":"` + host.profile.DeviceID + `","body":"` + bodies[i] + `"}`
		if string(data) != want {
			t.Fatalf("frame %d forwarded as %.100s...", i, data)
		}
		i++
	}
}
