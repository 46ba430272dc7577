package connlimit

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// At the total cap a plain listener refuses the newcomer, so connections
// that never finish a request, spread over enough addresses, shut everyone
// out; a shedding listener closes the oldest connection that is not doing
// authenticated work instead, and never one that is.
func TestSheddingMakesRoomButNeverForWork(t *testing.T) {
	for _, shedding := range []bool{false, true} {
		t.Run(fmt.Sprint("shedding=", shedding), func(t *testing.T) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			l := Listen(raw, 0, 3)
			if shedding {
				l = ListenShedding(raw, 0, 3)
			}
			accepted := serve(t, l)
			addr := raw.Addr().String()
			var clients []net.Conn
			for i := range 3 {
				clients = append(clients, dialFrom(t, fmt.Sprintf("127.0.0.%d", i+2), addr))
				<-accepted
			}
			newcomer := dialFrom(t, "127.0.0.9", addr)
			if !shedding {
				if !closedByServer(newcomer) {
					t.Fatal("not reproduced: the newcomer got in over a full cap")
				}
				return
			}
			got := <-accepted
			if !closedByServer(clients[0]) || closedByServer(newcomer) {
				t.Fatal("the oldest idle connection was not the one closed for the newcomer")
			}
			// Connections doing work are never shed: mark every open one,
			// and the next newcomer is refused instead.
			Working(WithConn(context.Background(), got))
			for range 2 {
				Working(WithConn(context.Background(), <-drain(l, accepted)))
			}
			if !closedByServer(dialFrom(t, "127.0.0.10", addr)) {
				t.Fatal("a connection doing work was shed, or the cap was passed")
			}
		})
	}
}

// drain returns the listener's open connections one at a time (the two
// still open from the first round, re-read from a fresh list).
func drain(l net.Listener, accepted <-chan net.Conn) <-chan net.Conn {
	ll := l.(*listener)
	out := make(chan net.Conn, 1)
	ll.mu.Lock()
	for e := ll.order.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*conn); c.state.Load() != stateWorking {
			out <- c
			break
		}
	}
	ll.mu.Unlock()
	return out
}

// With net/http: 4 headers-only connections fill a cap of 4, and an
// ordinary request still gets its answer.
func TestSheddingWithAnHTTPServer(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := ListenShedding(raw, 0, 4)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ConnState: ConnState, ConnContext: WithConn, ReadHeaderTimeout: time.Minute}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	for i := range 4 {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", i+2), raw.Addr().String())
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
	}
	time.Sleep(100 * time.Millisecond)
	cl := &http.Client{Timeout: 2 * time.Second}
	res, err := cl.Get("http://" + raw.Addr().String() + "/")
	if err != nil {
		t.Fatalf("an ordinary request beside a full cap of slow connections: %v", err)
	}
	res.Body.Close()
}
