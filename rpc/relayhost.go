package rpc

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/gatehouse/gatehouse/trust"
)

// RelayHost answers devices that reach this host through a relay. The
// relay's presence is the device list: a device that is not in it is not
// answered, and its subscriptions are dropped when it leaves. A device's
// key is the one presence shows now; its grant is bound to that key's
// fingerprint (trust.Store.GrantFor), so a key the relay swapped in finds
// no grant. The relay sees only ids and ciphertext.

// Peer is a device as presence shows it.
type Peer struct {
	ID        string
	PublicKey []byte
}

// RelayHostOptions wire a relay host.
type RelayHostOptions struct {
	Host *Host
	Key  *ecdh.PrivateKey
	ID   string // this host's device id
	// Send hands a sealed body for device to to the relay client.
	Send   func(to, ref, body string) error
	Logger *slog.Logger
}

// ErrNotPresent refuses a request whose device left the account's presence
// (removed, or back with another key) while the request waited to start.
var ErrNotPresent = newError(CodeAccess, "This device is no longer on this computer's relay account, so the request did not run.")

// maxInFlight bounds the requests one device has open on this host at once
// (the relay's rate limit bounds how fast they come).
const maxInFlight = 32

// RelayHost is a host's end of the relay.
type RelayHost struct {
	o    RelayHostOptions
	keys *KeyCache

	mu       sync.Mutex
	peers    map[string]Peer
	inFlight map[string]int
}

// NewRelayHost makes a relay host.
func NewRelayHost(o RelayHostOptions) *RelayHost {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &RelayHost{o: o, keys: NewKeyCache(o.Key, o.ID), peers: map[string]Peer{}, inFlight: map[string]int{}}
}

// Presence replaces the device list. Devices that left are forgotten.
func (r *RelayHost) Presence(peers []Peer) {
	next := map[string]Peer{}
	for _, p := range peers {
		if p.ID != r.o.ID && trust.ValidDeviceID(p.ID) && len(p.PublicKey) == 32 {
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
	r.mu.Unlock()
	for _, id := range gone {
		r.o.Host.Forget(id)
	}
}

// Frame handles a sealed body from device from: it answers a request and
// drops anything else (a frame that does not open under the pair key for
// the key presence shows has nothing to answer).
func (r *RelayHost) Frame(from, body string) {
	r.mu.Lock()
	p, known := r.peers[from]
	busy := r.inFlight[from] >= maxInFlight
	if known && !busy {
		r.inFlight[from]++
	}
	r.mu.Unlock()
	if !known || busy {
		r.o.Logger.Debug("relay frame dropped", "from", from, "inPresence", known, "busy", busy)
		if busy {
			r.o.Host.noteRefused(Device{ID: from, Fingerprint: trust.Fingerprint(p.PublicKey)}, RefusedBusy)
		}
		return
	}
	go func() {
		defer func() {
			r.mu.Lock()
			r.inFlight[from]--
			if r.inFlight[from] == 0 {
				delete(r.inFlight, from)
			}
			r.mu.Unlock()
		}()
		key, err := r.keys.Get(from, p.PublicKey)
		if err != nil {
			return
		}
		dev := Device{ID: from, Fingerprint: trust.Fingerprint(p.PublicKey),
			present: func() bool { return r.inPresence(from, p.PublicKey) }}
		out, ref, err := r.o.Host.handleSealed(context.Background(), dev, key, RelayAAD(from, r.o.ID), RelayAAD(r.o.ID, from), body)
		if err != nil {
			return
		}
		// ref is the request's id, so the relay's undeliverable notice
		// names the one call it concerns (relay.md, frames).
		if err := r.o.Send(from, ref, out); err != nil {
			r.o.Logger.Warn("relay reply not sent", "to", from, "err", err)
		}
	}()
}

// inPresence reports whether device id is in presence now with key.
func (r *RelayHost) inPresence(id string, key []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.peers[id]
	return ok && string(p.PublicKey) == string(key)
}

// Event seals an event for a device in presence and sends it (the host's
// Events hook).
func (r *RelayHost) Event(deviceID string, ev Event) {
	r.mu.Lock()
	p, known := r.peers[deviceID]
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
	_ = r.o.Send(deviceID, "", Seal(key, plain, RelayAAD(r.o.ID, deviceID)))
}
