package lan

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// clientFrom is an HTTP client whose connections leave from the loopback
// address local (127.0.0.2 stands for another machine on the network).
func clientFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 70 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// Junk hellos from one address are limited to that address: they do not
// stop a device at another address from pairing, and the sender of junk
// that then holds the real link still gets through.
func TestJunkHellosAreLimitedPerSender(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	wrong := l
	wrong.Key[0] ^= 1
	attacker := clientFrom("127.0.0.2")
	refusedAt := -1
	for i := range 30 {
		_, err := Pair(context.Background(), attacker, wrong, "junk")
		if refusal.Sentence(err) == msgTooMany {
			refusedAt = i
			break
		}
		if refusal.Sentence(err) != msgOldLink {
			t.Fatalf("junk hello %d: %v", i, err)
		}
	}
	if refusedAt < 0 {
		t.Fatal("30 junk hellos from one address in a minute were all answered: no limit per sender")
	}
	t.Logf("junk from 127.0.0.2 limited after %d hellos", refusedAt)
	if _, err := f.pair(t, trust.View); err != nil {
		t.Fatalf("a valid hello from 127.0.0.1 after junk from 127.0.0.2: %v", err)
	}
	// The junk sender itself, once it holds the (new) link, gets through.
	next, _ := ParseLink(f.srv.Pairing().Link())
	go decideFirst(f, trust.View)
	if _, err := Pair(context.Background(), attacker, next, "now with the link"); err != nil {
		t.Fatalf("a valid hello from an address over its junk budget: %v", err)
	}
	if st, _ := f.srv.Pairing().Status(); st.Warning != "" {
		t.Fatalf("junk from one address replaced the link: %q", st.Warning)
	}
}

// decideFirst allows (or with trust.None denies) the next pair request.
func decideFirst(f *fixture, g trust.Grant) {
	for {
		st, ch := f.srv.Pairing().Status()
		if st.Request != nil {
			f.srv.Pairing().Decide(st.Request.ID, g != trust.None, g)
			return
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			return
		}
	}
}

// The device and the computer show the same pair code for one request, and
// two requests through the same link show different codes.
func TestPairCodeMatchesAndDiffers(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	var codes []string
	for i := range 2 {
		shown := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			_, err := PairShowingCode(context.Background(), f.hc, l, "Test browser", func(c string) { shown <- c })
			done <- err
		}()
		device := <-shown
		var host string
		for host == "" {
			st, ch := f.srv.Pairing().Status()
			if st.Request != nil {
				host = st.Request.Code
				f.srv.Pairing().Decide(st.Request.ID, false, trust.None) // deny: the link stays
				break
			}
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatal("no pair request")
			}
		}
		if err := <-done; err == nil || !strings.Contains(refusal.Sentence(err), "did not allow") {
			t.Fatalf("request %d: %v", i, err)
		}
		if device != host || len(device) != 7 {
			t.Fatalf("request %d: the device shows %q, the computer %q", i, device, host)
		}
		codes = append(codes, host)
	}
	if codes[0] == codes[1] {
		t.Fatalf("two requests show the same code %q", codes[0])
	}
	// The control socket's listing carries it too (gatehouse devices).
	dir := t.TempDir()
	stop, err := f.srv.ServeControl(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	shown := make(chan string, 1)
	go func() {
		_, _ = PairShowingCode(context.Background(), f.hc, l, "Test browser", func(c string) { shown <- c })
	}()
	device := <-shown
	deadline := time.Now().Add(5 * time.Second)
	for {
		ans, err := Control(dir, ControlRequest{Op: "status"})
		if err == nil && ans.Status.Request != nil {
			if ans.Status.Request.Code != device {
				t.Fatalf("devices lists code %q, the device shows %q", ans.Status.Request.Code, device)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no request listed on the control socket")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := Control(dir, ControlRequest{Op: "deny"}); err != nil {
		t.Fatal(err)
	}
}

// pairCodeVector is PairCode("link-id", key 0..31, "c2VhbGVk"); web/test/paircode.test.mjs checks the page computes the same.
const pairCodeVector = "251 825"

// PairCode is fixed by its inputs (web/test checks the page's against it).
func TestPairCodeVector(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	got := PairCode("link-id", key, "c2VhbGVk")
	t.Logf("PairCode vector: %s", got)
	if got != pairCodeVector {
		t.Fatalf("PairCode = %q, want %q", got, pairCodeVector)
	}
}

// An IPv6 host cannot step around its junk budget by cycling addresses in
// its /64, and the budget remembers a bounded number of senders.
func TestJunkBudgetKeys(t *testing.T) {
	var j junkBudget
	now := time.Now()
	base := netip.MustParseAddr("fd00:1:2:3::1").As16()
	for i := range junkPerMinute {
		a := base
		a[15] = byte(i + 2)
		if !j.charge(netip.AddrFrom16(a), now) {
			t.Fatalf("junk %d refused early", i)
		}
	}
	if j.allowed(netip.MustParseAddr("fd00:1:2:3::ffff"), now) {
		t.Fatal("another address in the same /64 had a fresh budget")
	}
	if !j.allowed(netip.MustParseAddr("fd00:1:2:4::1"), now) {
		t.Fatal("another /64 was charged")
	}
	if !j.allowed(netip.MustParseAddr("fd00:1:2:3::1"), now.Add(time.Minute)) {
		t.Fatal("the budget did not come back after a minute")
	}
	for i := range junkAddresses {
		j.charge(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), now)
	}
	if j.allowed(netip.MustParseAddr("192.0.2.1"), now) || len(j.by) > junkAddresses {
		t.Fatalf("senders remembered: %d", len(j.by))
	}
}
