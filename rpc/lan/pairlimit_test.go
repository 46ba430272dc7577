package lan

import (
	"context"
	"errors"
	"fmt"
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

// Junk from one address is limited to that address: it does not stop a
// device at another address from pairing, and the sender of junk that then
// holds the real link still gets through.
func TestJunkIsLimitedPerSender(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	wrong := l
	wrong.Key[0] ^= 1
	attacker := clientFrom("127.0.0.2")
	refusedAt := -1
	for i := range 30 {
		_, err := Pair(context.Background(), attacker, wrong, "junk", nil)
		if refusal.Sentence(err) == msgTooMany {
			refusedAt = i
			break
		}
		if refusal.Sentence(err) != msgOldLink {
			t.Fatalf("junk %d: %v", i, err)
		}
	}
	if refusedAt < 0 {
		t.Fatal("30 junk messages from one address in a minute were all answered: no limit per sender")
	}
	t.Logf("junk from 127.0.0.2 limited after %d messages", refusedAt)
	if _, err := f.pair(t, trust.View); err != nil {
		t.Fatalf("a valid pairing from 127.0.0.1 after junk from 127.0.0.2: %v", err)
	}
	next, _ := ParseLink(f.srv.Pairing().Link())
	if _, err := f.pairThrough(t, attacker, next, "now with the link", trust.View); err != nil {
		t.Fatalf("a valid pairing from an address over its junk budget: %v", err)
	}
}

// waitRequests waits until n requests wait, and returns them.
func waitRequests(t *testing.T, p *Pairing, n int) []*Request {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		st, ch := p.Status()
		if len(st.Requests) >= n {
			return st.Requests
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("%d requests wait, want %d", len(st.Requests), n)
		}
	}
}

// asking starts a pairing in the background; its code and result come on
// the channels.
func asking(hc *http.Client, l Link, name string) (<-chan string, <-chan error) {
	codes, done := make(chan string, 1), make(chan error, 1)
	go func() {
		_, err := Pair(context.Background(), hc, l, name, func(c string) { codes <- c })
		done <- err
	}()
	return codes, done
}

// The device and the computer show the same pair code for one request;
// two requests through the same link show different codes; the control
// socket's listing carries them (gatehouse devices).
func TestPairCodeMatchesAndDiffers(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	dir := t.TempDir()
	stop, err := f.srv.ServeControl(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	code1, done1 := asking(f.hc, l, "Test browser")
	code2, done2 := asking(clientFrom("127.0.0.2"), l, "Another browser")
	device := []string{<-code1, <-code2}
	reqs := waitRequests(t, f.srv.Pairing(), 2)
	ans, err := Control(dir, ControlRequest{Op: "status"})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range ans.Status.Requests {
		listed[r.Code] = true
	}
	for i, c := range device {
		if len(c) != 7 || !listed[c] {
			t.Fatalf("device %d shows %q; the computer lists %+v", i, c, reqs)
		}
	}
	if device[0] == device[1] {
		t.Fatalf("two requests show the same code %q", device[0])
	}
	for _, c := range device {
		if _, err := Control(dir, ControlRequest{Op: "deny", Request: c}); err != nil {
			t.Fatal(err)
		}
	}
	for _, done := range []<-chan error{done1, done2} {
		if err := <-done; err == nil || !strings.Contains(refusal.Sentence(err), "did not allow") {
			t.Fatalf("a denied request: %v", err)
		}
	}
}

// allowWhateverWaits is the person's allow as gatehouse had it before an
// allow named its request: it took whichever request waited at that
// moment.
func allowWhateverWaits(p *Pairing, g trust.Grant) error {
	st, _ := p.Status()
	if len(st.Requests) == 0 {
		return ErrNoSuchRequest
	}
	return p.Decide(st.Requests[len(st.Requests)-1].ID, true, g)
}

// An allow names what it allows. The attack: a holder of the link keeps
// asking; the phone's request times out, the attacker's takes its place,
// and the person's allow, typed for the phone, pairs the attacker. With the
// allow bound to whatever waits, it does; named by the phone's code, it
// allows nothing, and with several waiting nothing is allowed unnamed.
func TestAllowNamesWhatItAllows(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(fmt.Sprintf("named=%v", named), func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.DecisionWaitForTest = 500 * time.Millisecond })
			l, _ := ParseLink(f.srv.Pairing().Link())
			phoneCode, phoneDone := asking(f.hc, l, "Safari on iPhone")
			code := <-phoneCode // the person reads this code on the phone
			if err := <-phoneDone; err == nil {
				t.Fatal("the phone's request did not time out")
			}
			f.srv.pairing.decisionWaitForTest = 20 * time.Second
			_, attackerDone := asking(clientFrom("127.0.0.2"), l, "Safari on iPhone")
			waitRequests(t, f.srv.Pairing(), 1)
			var err error
			if named {
				err = f.srv.Pairing().Decide(code, true, trust.Full)
			} else {
				err = allowWhateverWaits(f.srv.Pairing(), trust.Full)
			}
			if !named {
				if err != nil || <-attackerDone != nil {
					t.Fatalf("the attack did not work with the allow bound to whatever waits: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNoSuchRequest) {
				t.Fatalf("an allow naming the phone's code: %v", err)
			}
			if err := f.srv.Pairing().Decide("", true, trust.Full); !errors.Is(err, ErrNameTheRequest) {
				t.Fatalf("an allow naming nothing: %v", err)
			}
			if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 0 {
				t.Fatalf("paired: %+v", st.Devices)
			}
			f.srv.Pairing().DenyAll()
			<-attackerDone
		})
	}
}

// A holder of the link cannot hold the only waiting slot: each address
// waits in at most 2 of the 8, so a request from the phone's address still
// gets in; a new link (devices link --new) ends what came through the old.
func TestALinkHolderCannotTakeEverySlot(t *testing.T) {
	f := newFixture(t, nil)
	l, _ := ParseLink(f.srv.Pairing().Link())
	attacker := clientFrom("127.0.0.2")
	results := make(chan error, maxWaitingPerAddr+2)
	for range maxWaitingPerAddr + 2 {
		_, d := asking(attacker, l, "attacker")
		go func() { results <- <-d }()
	}
	waitRequests(t, f.srv.Pairing(), maxWaitingPerAddr)
	for range 2 {
		select {
		case err := <-results:
			if err == nil || !strings.Contains(refusal.Sentence(err), "already waiting") {
				t.Fatalf("an address over its waiting slots: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("an address held more than %d waiting slots", maxWaitingPerAddr)
		}
	}
	if _, err := f.pairThrough(t, f.hc, l, "the phone", trust.View); err != nil {
		t.Fatalf("the phone beside a link holder's requests: %v", err)
	}
	// Pairing spent the link: the attacker's waiting requests ended with it.
	for range maxWaitingPerAddr {
		if err := <-results; err == nil || refusal.Sentence(err) != msgOldLink {
			t.Fatalf("a request of the spent link: %v", err)
		}
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
