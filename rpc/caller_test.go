package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// pipe joins a Caller to a test host in memory, sealed both ways with a
// pair key, as a transport would. drop says whether to lose a reply.
type pipe struct {
	th     *testHost
	key    Key
	caller *Caller
	drop   atomic.Pointer[func(n int) bool]
	sent   atomic.Int64
	last   atomic.Value // the last sealed reply
}

func newPipe(t *testing.T, th *testHost) *pipe {
	p := &pipe{th: th}
	p.setDrop(func(int) bool { return false })
	p.key[0] = 7
	p.caller = NewCaller(CallerOptions{
		Seal: func(plain []byte) string { return Seal(p.key, plain, LANAAD(phone.ID, "in")) },
		Open: func(body string) ([]byte, error) { return Open(p.key, body, LANAAD(phone.ID, "out")) },
		Send: func(ctx context.Context, ref, body string) error {
			n := int(p.sent.Add(1))
			go func() {
				out, err := th.HandleSealed(context.Background(), phone, p.key, LANAAD(phone.ID, "in"), LANAAD(phone.ID, "out"), body)
				if err != nil || (*p.drop.Load())(n) {
					return
				}
				p.last.Store(out)
				p.caller.Deliver(out)
			}()
			return nil
		},
	})
	return p
}

func TestCallerRoundTrip(t *testing.T) {
	th := newTestHost(t)
	p := newPipe(t, th)
	ctx := context.Background()
	_, err := p.caller.Call(ctx, "test.slow", nil)
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeAccess {
		t.Fatalf("no grant: %v", err)
	}
	th.grants.set(phone.ID, trust.View)
	out, err := p.caller.Call(ctx, "test.slow", nil)
	if err != nil || string(out) != `"slow"` {
		t.Fatalf("%s %v", out, err)
	}
	// A packed reply (over 1 KB) opens.
	out, err = p.caller.Call(ctx, "host.hello", nil)
	var h Hello
	if err != nil || json.Unmarshal(out, &h) != nil || h.Protocol != ProtocolText { // a protocol-1 caller: frame_test.go has both
		t.Fatalf("hello: %v", err)
	}
}

// A reply delivered twice is dropped the second time, and a reply that fails
// the replay check fails its call at once.
func TestCallerRefusesStaleReplies(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	p := newPipe(t, th)
	ctx := context.Background()
	if _, err := p.caller.Call(ctx, "test.slow", nil); err != nil {
		t.Fatal(err)
	}
	old := p.last.Load().(string)
	// A pending call whose reply comes stamped a minute and a half ago.
	stale, _ := json.Marshal(Response{Type: "res", OK: true, Result: json.RawMessage(`"forged"`),
		TS: time.Now().Add(-90 * time.Second).UnixMilli(), Nonce: newNonce()})
	p.setDrop(func(int) bool { return true })
	done := make(chan error, 1)
	go func() {
		_, err := p.caller.Call(ctx, "test.slow", nil)
		done <- err
	}()
	var id string
	for id == "" {
		p.caller.mu.Lock()
		for k := range p.caller.pending {
			id = k
		}
		p.caller.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	var res Response
	_ = json.Unmarshal(stale, &res)
	res.ID = id
	stale, _ = json.Marshal(res)
	p.caller.Deliver(Seal(p.key, stale, LANAAD(phone.ID, "out")))
	select {
	case err := <-done:
		if !errors.Is(err, ErrStaleReply) || refusal.Sentence(err) != "That computer's reply was stale or repeated. Try again." {
			t.Fatalf("a stale reply: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stale reply did not fail its call")
	}
	// The earlier reply, replayed, matches nothing and changes nothing.
	p.caller.Deliver(old)
}

// A once-method whose reply is lost is sent once more under the same
// sendId, and the host answers from memory: it ran once.
func TestCallOnceRetriesUnderTheSameSendID(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.Control)
	p := newPipe(t, th)
	p.setDrop(func(n int) bool { return n == 2 }) // 1 is host.hello; 2 is the first try
	out, err := p.caller.CallOnce(context.Background(), "test.count", map[string]any{}, 300*time.Millisecond)
	if err != nil || string(out) != `{"run":1}` {
		t.Fatalf("%s %v", out, err)
	}
	if n := th.runs.Load(); n != 1 {
		t.Fatalf("it ran %d times", n)
	}
	// Lost twice: unconfirmed, not a third try.
	p.setDrop(func(n int) bool { return true })
	_, err = p.caller.CallOnce(context.Background(), "test.count", map[string]any{}, 200*time.Millisecond)
	if !errors.Is(err, ErrUnconfirmed) || refusal.Sentence(err) != "The computer did not confirm this, so it may have gone through. Check before trying again." {
		t.Fatalf("lost twice: %v", err)
	}
}

// A host that does not dedupe gets no second try.
func TestCallOnceWithoutDedupeNeverRetries(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.Control)
	p := newPipe(t, th)
	p.caller.features = map[string]bool{} // a host whose hello lists no sendId
	p.setDrop(func(n int) bool { return true })
	_, err := p.caller.CallOnce(context.Background(), "test.count", map[string]any{}, 200*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	if !errors.Is(err, ErrUnconfirmed) || p.sent.Load() != 1 {
		t.Fatalf("without dedupe: %v after %d sends", err, p.sent.Load())
	}
}

func TestUndeliverableFailsTheCall(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	p := newPipe(t, th)
	p.setDrop(func(int) bool { return true })
	done := make(chan error, 1)
	go func() {
		_, err := p.caller.Call(context.Background(), "test.slow", nil)
		done <- err
	}()
	for p.sent.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	p.caller.Undeliverable("")
	if err := <-done; !errors.Is(err, ErrOffline) {
		t.Fatalf("%v", err)
	}
}

func (p *pipe) setDrop(f func(int) bool) { p.drop.Store(&f) }

// A host whose key is not the pinned one gets nothing: CheckHost refuses
// before Seal, so not even a sealed request leaves (docs/relay.md, "The
// device pins the computer's key").
func TestCallerChecksTheHostBeforeSealing(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	p := newPipe(t, th)
	var sealed atomic.Int64
	seal := p.caller.o.Seal
	p.caller.o.Seal = func(plain []byte) string { sealed.Add(1); return seal(plain) }
	if _, err := p.caller.Call(context.Background(), "test.slow", nil); err != nil {
		t.Fatal(err)
	}
	errChanged := errors.New("host key changed")
	p.caller.o.CheckHost = func() error { return errChanged }
	before := sealed.Load()
	if _, err := p.caller.Call(context.Background(), "test.slow", nil); !errors.Is(err, errChanged) {
		t.Fatalf("a call to a host with another key: %v", err)
	}
	if sealed.Load() != before || p.sent.Load() != 1 {
		t.Fatalf("sealed %d, sent %d after the refusal", sealed.Load()-before, p.sent.Load())
	}
}
