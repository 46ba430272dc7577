package rpc

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// relayWorld is a RelayHost in front of a test host, with one phone in
// presence granted full; what the host sends to the relay is captured.
type relayWorld struct {
	th      *testHost
	rh      *RelayHost
	phoneID string
	phone   *ecdh.PrivateKey
	key     Key
	sent    chan sentFrame
}

type sentFrame struct{ to, ref, body string }

const relayHostID = "laptop"

func newRelayWorld(t *testing.T) *relayWorld {
	t.Helper()
	w := &relayWorld{th: newTestHost(t), phoneID: "phone-relay", sent: make(chan sentFrame, 64)}
	hostKey, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if w.phone, err = ecdh.X25519().GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	w.th.grants.mu.Lock()
	w.th.grants.g[w.phoneID+"/"+trust.Fingerprint(w.phone.PublicKey().Bytes())] = trust.Full
	w.th.grants.mu.Unlock()
	w.rh = NewRelayHost(RelayHostOptions{Host: w.th.Host, Key: hostKey, ID: relayHostID, Logger: slog.New(slog.DiscardHandler),
		Send: func(to, ref, body string) error { w.sent <- sentFrame{to, ref, body}; return nil }})
	w.rh.Presence([]Peer{{ID: w.phoneID, PublicKey: w.phone.PublicKey().Bytes()}})
	if w.key, err = PairKey(w.phone, w.phoneID, relayHostID, hostKey.PublicKey().Bytes()); err != nil {
		t.Fatal(err)
	}
	return w
}

// send seals r as the phone and hands it to the host as the relay would.
func (w *relayWorld) send(r Request) {
	plain, _ := json.Marshal(r)
	w.rh.Frame(w.phoneID, Seal(w.key, plain, RelayAAD(w.phoneID, relayHostID)))
}

// reply waits for the next frame the host sends and opens it as the phone.
func (w *relayWorld) reply(t *testing.T) (sentFrame, Response) {
	t.Helper()
	select {
	case f := <-w.sent:
		plain, err := Open(w.key, f.body, RelayAAD(relayHostID, w.phoneID))
		if err != nil {
			t.Fatal(err)
		}
		res, err := ParseResponse(plain)
		if err != nil {
			t.Fatal(err)
		}
		return f, res
	case <-time.After(10 * time.Second):
		t.Fatal("no reply")
	}
	return sentFrame{}, Response{}
}

// A device removed from the account (gone from relay presence) while its
// request waited in the ordered lane gets that request refused when it
// would start, not run (issue 12, item 5; policy.md §1). Before the fix the
// queued request ran.
func TestQueuedRequestOfADeviceGoneFromPresenceDoesNotRun(t *testing.T) {
	w := newRelayWorld(t)
	w.th.orderedWait = 10 * time.Second
	w.send(req("test.block", "{}"))
	<-w.th.started
	queued := req("test.record", "{}")
	w.send(queued)
	time.Sleep(150 * time.Millisecond) // it waits behind test.block
	w.rh.Presence(nil)                 // removed from the account
	w.th.release <- struct{}{}
	for range 2 {
		f, res := w.reply(t)
		if res.ID != queued.ID {
			continue
		}
		if res.OK || res.Code != CodeAccess || res.Error != ErrNotPresent.Sentence() || f.to != w.phoneID {
			t.Fatalf("the queued request of a removed device: %+v", res)
		}
	}
	select {
	case <-w.th.trusts:
		t.Fatal("the queued request ran after its device left presence")
	default:
	}
	// Back in presence with another key: still nothing (its grant is bound
	// to the old key, and presence is checked by key too).
	other, _ := ecdh.X25519().GenerateKey(rand.Reader)
	w.rh.Presence([]Peer{{ID: w.phoneID, PublicKey: other.PublicKey().Bytes()}})
	dev := Device{ID: w.phoneID, Fingerprint: trust.Fingerprint(w.phone.PublicKey().Bytes()),
		present: func() bool { return w.rh.inPresence(w.phoneID, w.phone.PublicKey().Bytes()) }}
	m, _ := w.th.o.Registry.Lookup("test.record")
	if _, err := w.th.admit(w.th.newCall(dev, "r"), m); err != ErrNotPresent {
		t.Fatal("a device whose key changed in presence passed the presence check")
	}
}

// A reply through the relay names its request's id as the frame's ref
// (relay.md, frames), so an undeliverable notice fails only that call.
// Before the fix the ref was empty.
func TestRelayRepliesCarryTheRequestID(t *testing.T) {
	w := newRelayWorld(t)
	for _, r := range []Request{req("test.slow", "{}"), req("no.such.method", "{}")} {
		w.send(r)
		f, res := w.reply(t)
		if f.ref != r.ID || res.ID != r.ID {
			t.Fatalf("reply to %s: ref %q, id %q, want %q", r.Method, f.ref, res.ID, r.ID)
		}
	}
	// A replayed frame is still answered, under its own ref.
	r := req("test.slow", "{}")
	plain, _ := json.Marshal(r)
	body := Seal(w.key, plain, RelayAAD(w.phoneID, relayHostID))
	for range 2 {
		w.rh.Frame(w.phoneID, body)
		if f, _ := w.reply(t); f.ref != r.ID {
			t.Fatalf("ref %q, want %q", f.ref, r.ID)
		}
	}
}
