package lan

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Pairing limits (seed, page 15).
const (
	MaxDevices   = 3
	maxFailures  = 20               // failed hellos before the link is replaced
	decisionWait = 50 * time.Second // a hello waits this long for the person at the computer
)

// Device is a paired device. Its key lives in memory, and in the state
// folder when serve keeps its pairings (Options.Keep).
type Device struct {
	ID       string      `json:"id"`
	Name     string      `json:"name"`
	Grant    trust.Grant `json:"grant"`
	Paired   time.Time   `json:"paired"`
	LastSeen time.Time   `json:"lastSeen"`
	key      rpc.Key
}

// Request is a device waiting to be allowed.
type Request struct {
	ID   string `json:"id"`
	Name string `json:"name"` // what the page says it is (its browser)
	From string `json:"from"` // its address
	// Code is the pair code the device shows too (PairCode): the person
	// allows the request whose code matches the one on the device in hand.
	Code string    `json:"code"`
	At   time.Time `json:"at"`
	// Replaces is the paired device of the same name, which this one
	// replaces when allowed: a device that pairs again (its old key lost)
	// takes its old place instead of filling the limit.
	Replaces string `json:"replaces,omitempty"`
	done     chan decision
}

type decision struct {
	allow bool
	grant trust.Grant
}

// Status is what the person at the computer sees.
type Status struct {
	Link     string    `json:"link"`
	Kind     Kind      `json:"kind"`
	Devices  []Device  `json:"devices"`
	Request  *Request  `json:"request"`
	Warning  string    `json:"warning,omitempty"`
	Revision int       `json:"revision"`
	Started  time.Time `json:"started"`
	// Set by the control socket's answer (the server's, not the pairing's):
	// the page's address, the folders served, and the devices with an event
	// stream open now.
	URL    string         `json:"url,omitempty"`
	Served []ServedFolder `json:"served,omitempty"`
	Online []string       `json:"online,omitempty"`
}

// ServedFolder is one folder serve answers for, for the person at the
// computer (its path stays on this computer's control socket).
type ServedFolder struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Pairing is the link, the waiting request and the paired devices.
type Pairing struct {
	mu       sync.Mutex
	base     string // http://addr:port/
	kind     Kind
	linkID   string
	linkKey  rpc.Key
	guard    *rpc.ReplayGuard
	devices  map[string]*Device
	pending  *Request
	junk     junkBudget // failed hellos per sender address
	failures int
	warning  string
	revision int
	changed  chan struct{}
	started  time.Time
	onRevoke func(id string)
	keeper   Keeper // nil: pairings end with serve
	port     int
	log      *slog.Logger

	decisionWaitForTest time.Duration
}

func newPairing(base string, kind Kind) *Pairing {
	p := &Pairing{base: base, kind: kind, devices: map[string]*Device{}, changed: make(chan struct{}), started: time.Now()}
	p.rotateLocked()
	return p
}

func randomKey() rpc.Key {
	var k rpc.Key
	_, _ = rand.Read(k[:])
	return k
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// rotateLocked makes a new link: a new id and key, so the old QR code pairs
// nothing more.
func (p *Pairing) rotateLocked() {
	p.linkID, p.linkKey, p.guard = randomID(12), randomKey(), rpc.NewReplayGuard()
	p.failures = 0
	p.bumpLocked()
}

func (p *Pairing) bumpLocked() {
	p.revision++
	close(p.changed)
	p.changed = make(chan struct{})
}

// Link is the pairing link, key included (never logged).
func (p *Pairing) Link() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base + "#" + p.linkID + "." + base64.RawURLEncoding.EncodeToString(p.linkKey[:])
}

// Rotate replaces the link (a new QR code) without touching paired devices.
func (p *Pairing) Rotate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rotateLocked()
}

// Status is a snapshot, and Changed a channel closed at the next change.
func (p *Pairing) Status() (Status, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Status{Link: p.base + "#" + p.linkID + "." + base64.RawURLEncoding.EncodeToString(p.linkKey[:]), Kind: p.kind,
		Devices: []Device{}, Warning: p.warning, Revision: p.revision, Started: p.started}
	for _, d := range p.devices {
		s.Devices = append(s.Devices, *d)
	}
	if p.pending != nil {
		r := *p.pending
		s.Request = &r
	}
	return s, p.changed
}

// Decide allows (with a grant) or denies the waiting request.
func (p *Pairing) Decide(requestID string, allow bool, g trust.Grant) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil || (requestID != "" && p.pending.ID != requestID) || (allow && g == trust.None) {
		return false
	}
	select {
	case p.pending.done <- decision{allow, g}:
	default:
		return false
	}
	return true
}

// Revoke unpairs a device.
func (p *Pairing) Revoke(id string) bool {
	p.mu.Lock()
	_, ok := p.devices[id]
	delete(p.devices, id)
	if ok {
		p.bumpLocked()
		p.saveLocked() // revoked for good: the key is forgotten
	}
	f := p.onRevoke
	p.mu.Unlock()
	if ok && f != nil {
		f(id)
	}
	return ok
}

// GrantFor is the grant of a paired device presenting its key (the host's
// Grants).
func (p *Pairing) GrantFor(id, fp string) trust.Grant {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.devices[id]; d != nil && trust.Fingerprint(d.key[:]) == fp {
		return d.Grant
	}
	return trust.None
}

// device returns a paired device's key.
func (p *Pairing) device(id string) (rpc.Key, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.devices[id]
	if d == nil {
		return rpc.Key{}, false
	}
	return d.key, true
}

// seen marks a device's request as its last: only one that opened with its
// key, so a frame under its id sealed with another key does not make it
// look active.
func (p *Pairing) seen(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.devices[id]; d != nil {
		d.LastSeen = time.Now()
	}
}

// junkAllowed reports whether the sender address from may still send a
// hello that fails to open this minute. A hello that opens is never asked
// about: the holder of a valid link always gets through.
func (p *Pairing) junkAllowed(from netip.Addr, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.junk.allowed(from, now)
}

// failed charges a failed hello to its sender address; the 20th counted
// failure replaces the link. A sender over its budget is not counted, so
// one address cannot spend the link.
func (p *Pairing) failed(from netip.Addr, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.junk.charge(from, now) {
		return
	}
	p.failures++
	if p.failures >= maxFailures {
		p.rotateLocked()
		p.warning = "20 pairing attempts failed, so the link was replaced. Someone on this network may be trying to pair; pair only devices you hold."
		p.bumpLocked()
	}
}

// current returns the link's id, key and replay guard.
func (p *Pairing) current() (string, rpc.Key, *rpc.ReplayGuard) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.linkID, p.linkKey, p.guard
}

// hello is the pairing handshake's wait: it registers the request, waits
// for the person at the computer (or ctx, or 50 s), and on allow makes the
// device and replaces the link.
func (p *Pairing) hello(ctx context.Context, name, from, code string) (*Device, string) {
	p.mu.Lock()
	replaces := p.namedLocked(name)
	switch {
	case len(p.devices) >= MaxDevices && replaces == "":
		p.mu.Unlock()
		return nil, "This computer already has 3 paired devices. Unpair one there first."
	case p.pending != nil:
		p.mu.Unlock()
		return nil, "Another device is waiting to be allowed on this computer. Try again in a minute."
	}
	req := &Request{ID: randomID(8), Name: name, From: from, Code: code, At: time.Now(), Replaces: replaces, done: make(chan decision, 1)}
	p.pending = req
	p.bumpLocked()
	p.mu.Unlock()

	var d decision
	decided := false
	timer := time.NewTimer(p.wait())
	defer timer.Stop()
	select {
	case d = <-req.done:
		decided = true
	case <-timer.C:
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = nil
	p.bumpLocked()
	switch {
	case !decided:
		return nil, "Nobody allowed this device on the computer in time. Scan the code there again."
	case !d.allow:
		return nil, "The computer did not allow this device."
	}
	var ended string
	if old := p.namedLocked(name); old != "" {
		delete(p.devices, old) // the same device, paired again: its old key is done
		ended = old
	}
	if len(p.devices) >= MaxDevices {
		return nil, "This computer already has 3 paired devices. Unpair one there first."
	}
	if ended != "" && p.onRevoke != nil {
		go p.onRevoke(ended) // ends its stream; outside the lock
	}
	dev := &Device{ID: "lan-" + randomID(9), Name: name, Grant: d.grant, Paired: time.Now(), LastSeen: time.Now(), key: randomKey()}
	p.devices[dev.ID] = dev
	p.saveLocked()
	p.rotateLocked() // a link pairs one device
	return dev, ""
}

// keep restores the devices kept from an earlier run and saves every
// change from now on. A kept device with a malformed key or grant is left
// out (and so unpaired), never trusted.
func (p *Pairing) keep(k Keeper, st trust.LANState, port int, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keeper, p.port, p.log = k, port, log
	ids := map[string]int{}
	for _, d := range st.Devices {
		ids[d.ID]++
	}
	for _, d := range st.Devices {
		why := ""
		switch {
		case ids[d.ID] > 1:
			why = "its id appears more than once (none of them is trusted)"
		case len(d.Key) != len(rpc.Key{}):
			why = "its key is not 32 bytes"
		case d.Grant == trust.None:
			why = "it has no grant"
		case !validDeviceID(d.ID):
			why = "its id is not a LAN device's"
		case len(p.devices) >= MaxDevices:
			why = "3 devices are paired already"
		}
		if why != "" {
			log.Warn("a kept LAN device is left out and must pair again", "device", d.ID, "why", why)
			continue
		}
		dev := &Device{ID: d.ID, Name: d.Name, Grant: d.Grant, Paired: d.Paired, LastSeen: d.LastSeen}
		copy(dev.key[:], d.Key)
		p.devices[d.ID] = dev
	}
	if st.Port != port {
		p.saveLocked()
	}
}

// validDeviceID is the shape hello gives a LAN device's id.
func validDeviceID(id string) bool {
	return len(id) > 4 && len(id) <= 64 && id[:4] == "lan-"
}

// saveLocked writes the devices and port for the next run.
func (p *Pairing) saveLocked() {
	if p.keeper == nil {
		return
	}
	st := trust.LANState{Port: p.port, Devices: []trust.LANDevice{}}
	for _, d := range p.devices {
		st.Devices = append(st.Devices, trust.LANDevice{ID: d.ID, Name: d.Name, Grant: d.Grant, Paired: d.Paired, LastSeen: d.LastSeen, Key: append([]byte(nil), d.key[:]...)})
	}
	slices.SortFunc(st.Devices, func(a, b trust.LANDevice) int { return a.Paired.Compare(b.Paired) })
	if err := p.keeper.SaveLAN(st); err != nil && p.log != nil {
		p.log.Error("the paired devices could not be saved; they pair again after a restart", "err", err)
	}
}

// namedLocked is the paired device called name, "" for none. Names that
// differ only in letter case or surrounding spaces are one name: they read
// as one in a list.
func (p *Pairing) namedLocked(name string) string {
	for id, d := range p.devices {
		if strings.EqualFold(strings.TrimSpace(d.Name), strings.TrimSpace(name)) {
			return id
		}
	}
	return ""
}

// Rename gives a paired device the name the person chose, so devices can
// be told apart (and a device pairing again under its old name replaces
// it).
func (p *Pairing) Rename(id, name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.devices[id]
	if d == nil || strings.TrimSpace(name) == "" || p.namedLocked(name) != "" && p.namedLocked(name) != id {
		return false
	}
	d.Name = name
	p.bumpLocked()
	p.saveLocked()
	return true
}

// wait is how long a hello waits for a decision.
func (p *Pairing) wait() time.Duration {
	if p.decisionWaitForTest > 0 {
		return p.decisionWaitForTest
	}
	return decisionWait
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
