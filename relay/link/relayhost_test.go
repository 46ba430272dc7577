package link

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// linkWorld is a hostLink in front of a real host with test methods, with
// one phone in presence granted full; what the host sends to the relay is
// captured.
type linkWorld struct {
	hl      *hostLink
	host    *rpc.Host
	phoneID string
	phone   *ecdh.PrivateKey
	hostPub []byte
	key     rpc.Key
	sent    chan sentFrame
	release chan struct{} // test.block returns when this is closed or sent to
	started chan string
	ran     chan string // test.record's runs
}

type sentFrame struct{ to, ref, body string }

const relayHostID = "laptop"

// grantFunc is a host's Grants as a function.
type grantFunc func(id, fp string) trust.Grant

func (g grantFunc) GrantFor(id, fp string) trust.Grant { return g(id, fp) }

func newLinkWorld(t *testing.T, log *rpc.RequestLog) *linkWorld {
	t.Helper()
	w := &linkWorld{phoneID: "phone-relay", sent: make(chan sentFrame, 64),
		release: make(chan struct{}), started: make(chan string, 64), ran: make(chan string, 64)}
	hostKey, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if w.phone, err = ecdh.X25519().GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	w.hostPub = hostKey.PublicKey().Bytes()
	phoneFP := trust.Fingerprint(w.phone.PublicKey().Bytes())
	grants := grantFunc(func(id, fp string) trust.Grant {
		if id == w.phoneID && fp == phoneFP {
			return trust.Full
		}
		return trust.None
	})
	w.host = rpc.NewHost(rpc.HostOptions{Registry: w.registry(t), Targets: rpc.NewTargets(fsguard.Options{}, gate.Options{}),
		Grants: grants, Log: log, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(w.host.Close)
	w.hl = newHostLink(w.host, hostKey, relayHostID, slog.New(slog.DiscardHandler))
	w.hl.send = func(to, ref string, f rpc.Frame) error { w.sent <- sentFrame{to, ref, string(f.Body)}; return nil }
	if err := w.host.AttachEvents(w.hl.Event); err != nil {
		t.Fatal(err)
	}
	w.hl.Presence([]peer{{ID: w.phoneID, PublicKey: w.phone.PublicKey().Bytes()}})
	if w.key, err = rpc.PairKey(w.phone, w.phoneID, relayHostID, hostKey.PublicKey().Bytes()); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *linkWorld) registry(t *testing.T) *rpc.Registry {
	reg := rpc.NewRegistry()
	type none struct{}
	for _, m := range []struct {
		meth rpc.Method
		h    func(ctx context.Context, c *rpc.Call, _ none) (any, error)
	}{
		{rpc.Method{Name: "test.block", Scope: trust.View, Lane: rpc.LaneOrdered, Wait: 5 * time.Second},
			func(ctx context.Context, c *rpc.Call, _ none) (any, error) {
				w.started <- "block"
				select {
				case <-w.release:
				case <-ctx.Done():
				}
				return "released", nil
			}},
		{rpc.Method{Name: "test.record", Scope: trust.View, Lane: rpc.LaneOrdered, Wait: 5 * time.Second},
			func(ctx context.Context, c *rpc.Call, _ none) (any, error) { w.ran <- "record"; return "ok", nil }},
		{rpc.Method{Name: "test.slow", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true},
			func(ctx context.Context, c *rpc.Call, _ none) (any, error) { return "slow", nil }},
	} {
		if err := rpc.Register(reg, m.meth, m.h); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

var seq atomic.Int64

func req(method string) rpc.Request {
	n := strconv.FormatInt(seq.Add(1), 10)
	return rpc.Request{Type: "req", ID: "r" + n, Method: method, Params: json.RawMessage("{}"),
		TS: time.Now().UnixMilli(), Nonce: "nonce-000000000000" + n}
}

// sealed is r sealed by key as the phone, for the host.
func (w *linkWorld) sealed(key rpc.Key, r rpc.Request) string {
	plain, _ := json.Marshal(r)
	return rpc.Seal(key, plain, rpc.RelayAAD(w.phoneID, relayHostID))
}

// send seals r as the phone and hands it to the host as the relay would.
func (w *linkWorld) send(r rpc.Request) { w.hl.Frame(w.phoneID, w.sealed(w.key, r)) }

// reply waits for the next frame the host sends and opens it as the phone.
func (w *linkWorld) reply(t *testing.T) (sentFrame, rpc.Response) {
	t.Helper()
	select {
	case f := <-w.sent:
		plain, err := rpc.Open(w.key, f.body, rpc.RelayAAD(relayHostID, w.phoneID))
		if err != nil {
			t.Fatal(err)
		}
		res, err := rpc.ParseResponse(plain)
		if err != nil {
			t.Fatal(err)
		}
		return f, res
	case <-time.After(10 * time.Second):
		t.Fatal("no reply")
	}
	return sentFrame{}, rpc.Response{}
}

// A device removed from the account (gone from relay presence) while its
// request waited in the ordered lane gets that request refused when it would
// start, not run (docs/relay.md, "What the relay can and cannot do"). Before
// the fix the queued request ran.
func TestQueuedRequestOfADeviceGoneFromPresenceDoesNotRun(t *testing.T) {
	w := newLinkWorld(t, nil)
	w.send(req("test.block"))
	<-w.started
	queued := req("test.record")
	w.send(queued)
	time.Sleep(150 * time.Millisecond) // it waits behind test.block
	w.hl.Presence(nil)                 // removed from the account
	w.release <- struct{}{}
	for range 2 {
		f, res := w.reply(t)
		if res.ID != queued.ID {
			continue
		}
		if res.OK || res.Code != rpc.CodeAccess || res.Error != rpc.ErrNotPresent.Sentence() || f.to != w.phoneID {
			t.Fatalf("the queued request of a removed device: %+v", res)
		}
	}
	select {
	case <-w.ran:
		t.Fatal("the queued request ran after its device left presence")
	default:
	}
	// Back in presence with another key: still nothing. A request sealed
	// with the old key does not open under the new one, and one sealed
	// with the new key finds no grant (bound to the old key's fingerprint).
	other, _ := ecdh.X25519().GenerateKey(rand.Reader)
	w.hl.Presence([]peer{{ID: w.phoneID, PublicKey: other.PublicKey().Bytes()}})
	w.send(req("test.record"))
	otherKey, err := rpc.PairKey(other, w.phoneID, relayHostID, w.hostPub)
	if err != nil {
		t.Fatal(err)
	}
	w.hl.Frame(w.phoneID, w.sealed(otherKey, req("test.record")))
	select {
	case <-w.ran:
		t.Fatal("a device whose key changed in presence had a request run")
	case <-time.After(300 * time.Millisecond):
	}
}

// A reply through the relay names its request's id as the frame's ref
// (relay.md, frames), so an undeliverable notice fails only that call.
// Before the fix the ref was empty.
func TestRelayRepliesCarryTheRequestID(t *testing.T) {
	w := newLinkWorld(t, nil)
	for _, r := range []rpc.Request{req("test.slow"), req("no.such.method")} {
		w.send(r)
		f, res := w.reply(t)
		if f.ref != r.ID || res.ID != r.ID {
			t.Fatalf("reply to %s: ref %q, id %q, want %q", r.Method, f.ref, res.ID, r.ID)
		}
	}
	// A replayed frame is still answered, under its own ref.
	r := req("test.slow")
	body := w.sealed(w.key, r)
	for range 2 {
		w.hl.Frame(w.phoneID, body)
		if f, _ := w.reply(t); f.ref != r.ID {
			t.Fatalf("ref %q, want %q", f.ref, r.ID)
		}
	}
}

// Frames over a device's in-flight bound are dropped by the relay host
// before they are opened; they are counted too.
func TestRelayBusyDropsAreLogged(t *testing.T) {
	dir := t.TempDir()
	l, err := rpc.OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := newLinkWorld(t, l)
	for range maxInFlight {
		w.send(req("test.block"))
	}
	<-w.started
	go func() { // the later blocks announce themselves too
		for range maxInFlight - 1 {
			<-w.started
		}
	}()
	// The in-flight count rises as each goroutine starts; wait until the
	// next frame is dropped.
	time.Sleep(100 * time.Millisecond)
	for range 5 {
		w.send(req("test.slow"))
	}
	close(w.release)
	for range maxInFlight {
		w.reply(t)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _, err := rpc.ReadLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Code == rpc.RefusedBusy && e.Count == 5 && e.Device == w.phoneID {
			return
		}
	}
	t.Fatalf("no busy record: %+v", entries)
}

// A host has one event sink: a second transport cannot take over (or
// share) the first one's events.
func TestSecondEventSinkIsRefused(t *testing.T) {
	w := newLinkWorld(t, nil)
	if err := w.host.AttachEvents(func(string, rpc.Event) {}); err != rpc.ErrEventSinkSet {
		t.Fatalf("a second sink: %v", err)
	}
	preset := rpc.NewHost(rpc.HostOptions{Registry: rpc.NewRegistry(), Targets: rpc.NewTargets(fsguard.Options{}, gate.Options{}),
		Events: func(string, rpc.Event) {}})
	defer preset.Close()
	if err := preset.AttachEvents(w.hl.Event); err != rpc.ErrEventSinkSet {
		t.Fatalf("a sink over the caller's Events: %v", err)
	}
}

// hostOf is the host a test serves through the relay, closed at its end.
func hostOf(t *testing.T, o rpc.HostOptions) *rpc.Host {
	h := rpc.NewHost(o)
	t.Cleanup(h.Close)
	return h
}
