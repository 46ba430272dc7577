package lan

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/connlimit"
	"github.com/gatehouse/gatehouse/internal/flood"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// slowConns opens n connections from local that send a pairing step's
// headers and never its body.
func slowConns(t testing.TB, f *fixture, local string, n int) []net.Conn {
	t.Helper()
	head := fmt.Sprintf("POST /rc/pair HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", f.srv.hostport)
	return flood.HeadersOnly(t, local, f.srv.hostport, head, n)
}

// stillOpen counts the connections the server has not closed: a read that
// times out (rather than ending) is a connection the server still holds.
func stillOpen(conns []net.Conn, wait time.Duration) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	open := 0
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(wait))
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				mu.Lock()
				open++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return open
}

// 5,000 connections from one address that send headers and never a body
// hold at most connsPerAddr of the server's connections, and a paired page
// at another address keeps its event stream and is answered within a
// second.
func TestSlowClientsFromOneAddressLeaveRoom(t *testing.T) {
	const slow = 5000
	flood.RaiseFileLimit(t, 2*slow+256)
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	frames := openEvents(t, f.hc, mustSession(t, f, p))

	start := time.Now()
	conns := slowConns(t, f, "127.0.0.2", slow)
	t.Logf("%d slow connections from 127.0.0.2 opened in %v", slow, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	res, err := (&http.Client{Timeout: time.Second}).Get(f.srv.URL())
	if err != nil {
		t.Fatalf("the page from 127.0.0.1 during the flood: %v", err)
	}
	res.Body.Close()
	pageTook := time.Since(start)
	start = time.Now()
	if _, err := f.call(t, p, "host.hello", map[string]any{}); err != nil {
		t.Fatalf("a call from the paired device during the flood: %v", err)
	}
	callTook := time.Since(start)
	t.Logf("during the flood: the page in %v, a sealed call in %v", pageTook.Round(time.Microsecond), callTook.Round(time.Microsecond))
	open := stillOpen(conns, 2*time.Second)
	held, refused, _ := connlimit.Stats(f.srv.l)
	t.Logf("slow connections the server still holds: %d of %d (listener: %d open, %d closed at once)", open, slow, held, refused)
	if open > connsPerAddr {
		t.Fatalf("the server holds %d slow connections from one address, over the cap of %d", open, connsPerAddr)
	}
	// The event stream from 127.0.0.1 lived through it.
	if _, err := f.call(t, p, "subscribe", map[string]any{"targets": []string{f.target}}); err != nil {
		t.Fatal(err)
	}
	streamStillTalks(t, f, frames)
}

// streamStillTalks changes the checkout and waits for the paired page's
// event stream to say so.
func streamStillTalks(t *testing.T, f *fixture, frames <-chan map[string]any) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.repo, "flood.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case m, ok := <-frames:
		if !ok || m["name"] != "checkout.changed" {
			t.Fatalf("event stream after the flood: %v %v", m, ok)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream went quiet during the flood")
	}
}

// Found by a red team: 32 headers-only connections from each of 16 addresses
// filled the total cap of 512, and every other request was closed unanswered.
// The listener now sheds the oldest connection that is not doing
// authenticated work, so the page, a paired device's call and its event
// stream all go on.
func TestSlowClientsFromManyAddressesLeaveRoom(t *testing.T) {
	const addrs = connsTotal/connsPerAddr + 2
	flood.RaiseFileLimit(t, 4*connsTotal)
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	frames := openEvents(t, f.hc, mustSession(t, f, p))
	for a := range addrs {
		slowConns(t, f, fmt.Sprintf("127.0.1.%d", a+1), connsPerAddr)
	}
	// The server accepts on its own goroutine: wait for the flood to fill it.
	held := 0
	for deadline := time.Now().Add(5 * time.Second); held < connsTotal && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		held, _, _ = connlimit.Stats(f.srv.l)
	}
	if held < connsTotal {
		t.Fatalf("the flood did not fill the cap: %d of %d held", held, connsTotal)
	}
	start := time.Now()
	res, err := (&http.Client{Timeout: time.Second}).Get(f.srv.URL())
	if err != nil {
		t.Fatalf("the page beside a full cap of slow connections: %v", err)
	}
	res.Body.Close()
	if _, err := f.call(t, p, "subscribe", map[string]any{"targets": []string{f.target}}); err != nil {
		t.Fatalf("a paired device's call beside the flood: %v", err)
	}
	t.Logf("page and call answered in %v beside %d slow connections", time.Since(start).Round(time.Millisecond), addrs*connsPerAddr)
	streamStillTalks(t, f, frames)
}

// A request whose body never comes is answered and closed when the body
// deadline passes, instead of holding its connection for ever.
func TestSlowBodyIsCut(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.BodyTimeoutForTest = 300 * time.Millisecond })
	c := slowConns(t, f, "127.0.0.1", 1)[0]
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	answer, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("a request without its body was still held after %v", time.Since(start).Round(time.Millisecond))
	}
	t.Logf("cut after %v: %q", time.Since(start).Round(time.Millisecond), strings.SplitN(string(answer), "\r\n", 2)[0])
}

// The body deadline does not cut what legitimately lasts: an event stream
// and a request waiting for the person at the computer both outlive it.
func TestDeadlinesSpareStreamsAndWaitingHellos(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.BodyTimeoutForTest = 200 * time.Millisecond })
	l, _ := ParseLink(f.srv.Pairing().Link())
	codes := make(chan string, 1)
	go func() {
		code := <-codes
		time.Sleep(600 * time.Millisecond) // the person takes longer than the body deadline
		_ = f.srv.Pairing().Decide(code, true, trust.View)
	}()
	paired, err := Pair(context.Background(), f.hc, l, "Test browser", func(c string) { codes <- c })
	if err != nil {
		t.Fatalf("a request waiting past the body deadline: %v", err)
	}
	p := &paired
	frames := openEvents(t, f.hc, mustSession(t, f, p))
	time.Sleep(800 * time.Millisecond)
	if _, err := f.call(t, p, "subscribe", map[string]any{"targets": []string{f.target}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.repo, "later.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case m, ok := <-frames:
		if !ok || m["name"] != "checkout.changed" {
			t.Fatalf("the event stream after the body deadline: %v %v", m, ok)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event after the body deadline")
	}
}

// BenchmarkPageDuringSlowFlood measures an ordinary request from 127.0.0.1
// while 5,000 slow connections from 127.0.0.2 knock.
// BenchmarkPageDuringSlowFlood: an ordinary page request from 127.0.0.1,
// alone and beside 5,000 headers-only connections from 127.0.0.2, in one
// run (the ratio is the result).
func BenchmarkPageDuringSlowFlood(b *testing.B) {
	flood.RaiseFileLimit(b, 2*5000+256)
	f := newBenchFixture(b)
	hc := &http.Client{Timeout: time.Second}
	get := func(b *testing.B) {
		for b.Loop() {
			res, err := hc.Get(f.srv.URL())
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	b.Run("alone", get)
	slowConns(b, f, "127.0.0.2", 5000)
	b.Run("beside-5000-slow", get)
}

// mustSession opens a session for p.
func mustSession(t testing.TB, f *fixture, p *Paired) *Session {
	t.Helper()
	se, err := Resume(context.Background(), f.hc, p)
	if err != nil {
		t.Fatal(err)
	}
	return se
}

// newBenchFixture is a server with the page and no checkouts.
func newBenchFixture(b *testing.B) *fixture {
	srv, err := Listen(Options{Addr: netip.MustParseAddr("127.0.0.1"), Kind: Loopback,
		Page: fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>gatehouse</title>")}}},
		rpc.HostOptions{Registry: rpc.NewRegistry(), Targets: rpc.NewTargets(fsguard.Options{Home: "/nonexistent"}, gate.Options{}), FullAccess: func() bool { return false }})
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	b.Cleanup(func() { _ = srv.Close(context.Background()) })
	return &fixture{srv: srv}
}

// slowUpload sends a proven call whose body (a files.search of a long
// query, over 100 KiB) trickles in over about two seconds, as from a phone on
// a weak signal, and returns the answer's status or the error.
func slowUpload(t *testing.T, f *fixture, se *Session) (int, error) {
	t.Helper()
	plain, _ := json.Marshal(rpc.Request{Type: "req", ID: "slow", Method: "host.hello", Params: json.RawMessage(`{"pad":"` + strings.Repeat("x", 100<<10) + `"}`),
		TS: se.c.now().UnixMilli(), Nonce: randomID(24)})
	body, _ := json.Marshal(map[string]string{"f": rpc.Seal(se.keys.key, plain, sessionAAD(se.deviceID, se.id, "host"))})
	c, err := net.Dial("tcp", f.srv.hostport)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	head := fmt.Sprintf("POST /%s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		se.callPath(), f.srv.hostport, authHeader, se.authHeader().Get(authHeader), len(body))
	if _, err := io.WriteString(c, head); err != nil {
		return 0, err
	}
	const pieces = 40
	for i := range pieces {
		chunk := body[i*len(body)/pieces : (i+1)*len(body)/pieces]
		if _, err := c.Write(chunk); err != nil {
			return 0, err
		}
		time.Sleep(50 * time.Millisecond) // the upload's own pace, not a wait for the server
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// churn floods from one address until stop: batches of connsPerAddr
// headers-only connections, each batch closed as the next is opened, so
// the server keeps accepting newcomers at its total cap.
func churn(f *fixture, from string, stop <-chan struct{}) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	head := fmt.Sprintf("POST /rc/pair HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", f.srv.hostport)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for {
		select {
		case <-stop:
			return
		default:
		}
		var batch []net.Conn
		for range connsPerAddr {
			if c, err := d.Dial("tcp", f.srv.hostport); err == nil {
				_, _ = io.WriteString(c, head)
				batch = append(batch, c)
			}
		}
		for _, c := range held {
			c.Close()
		}
		held = batch
	}
}

// A paired device's upload is never shed for unproven connections. Found
// by a red team: every call taking 0.5 s or more to send failed under a
// flood of headers-only connections from 20 addresses, because a call
// counted as proven work only once its body was in. A call now proves its
// session in a header, and is proven work from then on. With the proof
// taken late (the switch) the flood sheds the upload.
func TestAFloodDoesNotShedAProvenUpload(t *testing.T) {
	flood.RaiseFileLimit(t, 8*connsTotal)
	for _, late := range []bool{true, false} {
		t.Run(map[bool]string{true: "proven after the body", false: "proven by its header"}[late], func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.callProvenLateForTest = late })
			p, err := f.pair(t, trust.View)
			if err != nil {
				t.Fatal(err)
			}
			se := mustSession(t, f, p)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for a := range 20 {
				wg.Go(func() { churn(f, fmt.Sprintf("127.0.2.%d", a+1), stop) })
			}
			status, err := slowUpload(t, f, se)
			close(stop)
			wg.Wait()
			if late {
				if err == nil && status == http.StatusOK {
					t.Fatal("the upload went through a flood with its proof taken after its body: the test proves nothing")
				}
				return
			}
			if err != nil || status != http.StatusOK {
				t.Fatalf("a proven upload under a flood from 20 addresses: %d %v", status, err)
			}
		})
	}
}
