package link

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// hostLink answers devices that reach this host through a relay. The
// relay's presence is the device list: a device that is not in it is not
// answered, and its subscriptions are dropped when it leaves. A device's
// key is the one presence shows now; its grant is bound to that key's
// fingerprint (trust.Store.GrantFor), so a key the relay swapped in finds
// no grant. The relay sees only ids and ciphertext.

// peer is a device as presence shows it.
type peer struct {
	ID        string
	PublicKey []byte
}

// maxInFlight bounds the requests one device has open on this host at once
// (the relay's rate limit bounds how fast they come).
const maxInFlight = 32

// hostLink is a host's end of the relay.
type hostLink struct {
	host   *rpc.Host
	id     string // this host's device id
	keys   *rpc.KeyCache
	logger *slog.Logger
	// send hands a sealed frame for device to to the relay client, and
	// carries says whether the relay forwards binary frames now. Both are
	// set once, before the client runs and before the host's events reach
	// here.
	send    func(to, ref string, f rpc.Frame) error
	carries func() bool

	mu       sync.Mutex
	peers    map[string]peer
	inFlight map[string]int
	binary   map[string]bool // devices whose last request was answered in a binary frame: their events go in one too
}

// newHostLink makes a host's end of the relay for host, whose relay id is
// id and key is key. Its send is the caller's to set before frames flow.
func newHostLink(host *rpc.Host, key *ecdh.PrivateKey, id string, logger *slog.Logger) *hostLink {
	if logger == nil {
		logger = slog.Default()
	}
	return &hostLink{host: host, id: id, keys: rpc.NewKeyCache(key, id), logger: logger,
		peers: map[string]peer{}, inFlight: map[string]int{}, binary: map[string]bool{}, carries: func() bool { return false }}
}

// Presence replaces the device list. Devices that left are forgotten.
func (r *hostLink) Presence(peers []peer) {
	next := map[string]peer{}
	for _, p := range peers {
		if p.ID != r.id && relay.ValidDeviceID(p.ID) && len(p.PublicKey) == 32 {
			next[p.ID] = p
		}
	}
	r.mu.Lock()
	var gone []string
	for id, old := range r.peers {
		if p, ok := next[id]; !ok || string(p.PublicKey) != string(old.PublicKey) {
			gone = append(gone, id) // left, or came back with another key
		}
	}
	r.peers = next
	for _, id := range gone {
		delete(r.binary, id)
	}
	r.mu.Unlock()
	for _, id := range gone {
		r.host.Forget(id)
	}
}

// Frame handles a sealed body from device from: it answers a request and
// drops anything else (a frame that does not open under the pair key for
// the key presence shows has nothing to answer).
func (r *hostLink) Frame(from, body string) { r.handle(from, rpc.Frame{Body: []byte(body)}) }

// Binary is Frame for a binary frame (protocol 2).
func (r *hostLink) Binary(from string, body []byte) {
	r.handle(from, rpc.Frame{Body: body, Binary: true})
}

func (r *hostLink) handle(from string, f rpc.Frame) {
	r.mu.Lock()
	p, known := r.peers[from]
	busy := r.inFlight[from] >= maxInFlight
	if known && !busy {
		r.inFlight[from]++
	}
	r.mu.Unlock()
	if !known || busy {
		r.logger.Debug("relay frame dropped", "from", from, "inPresence", known, "busy", busy)
		if busy {
			r.host.NoteBusy(rpc.Device{ID: from, Fingerprint: trust.Fingerprint(p.PublicKey)})
		}
		return
	}
	go func() {
		defer r.done(from)
		r.answer(from, p, f)
	}()
}

// done ends one of from's requests in flight.
func (r *hostLink) done(from string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight[from]--
	if r.inFlight[from] == 0 {
		delete(r.inFlight, from)
	}
}

// answer opens, runs and answers one request of p.
func (r *hostLink) answer(from string, p peer, in rpc.Frame) {
	key, err := r.keys.Get(from, p.PublicKey)
	if err != nil {
		return
	}
	dev := rpc.Device{ID: from, Fingerprint: trust.Fingerprint(p.PublicKey)}.
		WithPresence(func() bool { return r.inPresence(from, p.PublicKey) }).
		WithFrames(r.carries())
	out, ref, err := r.host.HandleFrame(context.Background(), dev, key, rpc.RelayAAD(from, r.id), rpc.RelayAAD(r.id, from), in)
	if err != nil {
		return
	}
	r.mu.Lock()
	if _, ok := r.peers[from]; ok {
		r.binary[from] = out.Binary
	}
	r.mu.Unlock()
	// ref is the request's id, so the relay's undeliverable notice
	// names the one call it concerns (relay.md, frames).
	if err := r.send(from, ref, out); err != nil {
		r.logger.Warn("relay reply not sent", "to", from, "err", err)
	}
}

// inPresence reports whether device id is in presence now with key.
func (r *hostLink) inPresence(id string, key []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.peers[id]
	return ok && string(p.PublicKey) == string(key)
}

// Event seals an event for a device in presence and sends it (the host's
// event sink).
func (r *hostLink) Event(deviceID string, ev rpc.Event) {
	r.mu.Lock()
	p, known := r.peers[deviceID]
	binary := r.binary[deviceID] && r.carries()
	r.mu.Unlock()
	if !known {
		return
	}
	key, err := r.keys.Get(deviceID, p.PublicKey)
	if err != nil {
		return
	}
	plain, err := json.Marshal(ev)
	if err != nil {
		return
	}
	aad := rpc.RelayAAD(r.id, deviceID)
	if binary {
		_ = r.send(deviceID, "", rpc.Frame{Body: rpc.SealFrame(key, plain, aad), Binary: true})
		return
	}
	_ = r.send(deviceID, "", rpc.Frame{Body: []byte(rpc.Seal(key, plain, aad))})
}
