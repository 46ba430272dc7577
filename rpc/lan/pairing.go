package lan

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Pairing limits. Every count a device or a link holder controls is bound
// here, per sender address and in all.
const (
	MaxDevices   = 3
	decisionWait = 50 * time.Second // a request waits this long for the person at the computer

	offerTTL          = 30 * time.Second // a handshake not revealed by then is forgotten
	maxOffers         = 64               // handshakes started and not yet revealed, in all
	maxOffersPerAddr  = 4                // and from one sender address
	maxWaiting        = 8                // requests waiting for the person, in all
	maxWaitingPerAddr = 2                // and from one sender address: no holder of the link holds every slot
	// maxReconnectsPerDevice bounds the waiting reconnects of one paired
	// device, from any addresses: whoever holds a device's old stored secret
	// cannot fill the waiting slots with reconnects no new link ends.
	maxReconnectsPerDevice = 2
)

// warnFull is shown at the computer when the waiting requests fill up.
const warnFull = "8 pair requests are waiting. If you did not make them, someone else holds the link or a device's old secret: make a new link (n, or gatehouse devices link --new) and deny the rest (gatehouse devices deny)."

// Request kinds.
const (
	KindPair      = "pair"      // a new device, through the link
	KindReconnect = "reconnect" // a paired device whose page lost its ticket in a restart
)

// Device is a paired device.
type Device struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Grant       trust.Grant `json:"grant"`
	Kind        string      `json:"kind"` // page or cli
	Paired      time.Time   `json:"paired"`
	LastSeen    time.Time   `json:"lastSeen"`
	Fingerprint string      `json:"fingerprint"`
	// Page is the origin of the page it paired from when that is another
	// computer's page (computers.go), "" for this computer's own page: it
	// is reached from that origin only.
	Page        string    `json:"page,omitempty"`
	origin      string    // the page's address it paired at
	storedFresh bool      // the person's allowing just gave the stored secret: a Page device over plain HTTP may open one session with it
	stored      rpc.Key   // the secret the device keeps
	storedRun   string    // the serve run the stored secret is good for
	spent       []rpc.Key // stored secrets it had before, newest first: a page holding one may ask to reconnect
	rotatedBy   string    // the ticket whose resume changed the stored secret in this run
	tickets     []ticket  // newest first
}

// Request is a device waiting to be allowed: a new device through the link,
// or a paired one reconnecting.
type Request struct {
	ID string `json:"id"`
	// Code is the pair code the device shows too: the person allows the
	// request whose code matches the one on the device in hand.
	Code   string    `json:"code"`
	Kind   string    `json:"kind"`             // pair or reconnect
	Name   string    `json:"name"`             // what the device says it is
	From   string    `json:"from"`             // its address
	At     time.Time `json:"at"`               // when it asked
	Ends   time.Time `json:"ends"`             // when it stops waiting
	Device string    `json:"device,omitempty"` // reconnect: the paired device
	// Page is the origin of another computer's page the request came from
	// ("" for this computer's own page or gatehouse call).
	Page string `json:"page,omitempty"`
	// Grant is, for a reconnect, the grant the device has: allowing it
	// without naming another keeps it.
	Grant trust.Grant `json:"grant,omitempty"`
	// Replaces is the paired device of the same name, which a new device
	// replaces when allowed: a device that pairs again (its old secret
	// lost) takes its old place instead of filling the limit.
	Replaces string `json:"replaces,omitempty"`

	offer   *offer
	done    chan struct{} // closed when decided
	outcome pairOutcome
}

// pairOutcome is how a request ended.
type pairOutcome struct {
	device  *Device // allowed: the device, as paired
	refusal string  // else the sentence the device reads
}

// offer is a handshake the computer answered and waits to see revealed.
type offer struct {
	id      string
	hs      *handshake
	from    netip.Addr
	link    string          // the link it came through ("" for a reconnect)
	device  string          // the device reconnecting ("" for a new one)
	name    string          // the device's name as the person sees it
	kind    string          // page or cli
	page    string          // the origin of another computer's page it came from
	seen    map[string]bool // nonces of its reveal and wait messages: a replay is junk
	created time.Time
	req     *Request // once revealed
}

// Status is what the person at the computer sees.
type Status struct {
	Link     string     `json:"link"`
	Kind     Kind       `json:"kind"`
	Devices  []Device   `json:"devices"`
	Requests []*Request `json:"requests"` // waiting, oldest first
	Warning  string     `json:"warning,omitempty"`
	Revision int        `json:"revision"`
	Started  time.Time  `json:"started"`
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

// Pairing is the link, the waiting requests, the paired devices and their
// sessions.
type Pairing struct {
	mu       sync.Mutex
	base     string // http://addr:port/
	kind     Kind
	run      string    // this serve's run: a stored secret is good for the run that gave it
	secure   bool      // the page is served over HTTPS: no other program can serve its origin
	started  time.Time // a resume stamped before this is refused
	linkID   string
	linkKey  rpc.Key
	offers   map[string]*offer
	requests []*Request
	devices  map[string]*Device
	sessions map[string]*session
	resumes  map[string]*rpc.ReplayGuard // per device: resume nonces this run
	junk     junkBudget                  // messages that did not open, per sender address
	warning  string
	revision int
	changed  chan struct{}
	onRevoke func(id string)      // a device unpaired: end its streams
	onEnd    func(session string) // a session dropped: end its stream
	keeper   Keeper               // nil: pairings end with serve
	port     int
	log      *slog.Logger

	decisionWaitForTest time.Duration
	// storedAcrossRunsForTest accepts a stored secret from an earlier run,
	// as gatehouse did before pages were told apart from whatever served
	// their address while serve was stopped: a test proves the squatter's
	// attack with it, then refused without it.
	storedAcrossRunsForTest bool
	// pageCheckOffForTest answers a paired device from any origin, and
	// storedCrossForTest lets a device paired from another computer's page
	// resume with its stored secret as often as a page of this computer's
	// own: tests prove each attack with them, then refused without.
	pageCheckOffForTest bool
	storedCrossForTest  bool
}

func newPairing(base string, kind Kind) *Pairing {
	p := &Pairing{base: base, kind: kind, run: randomID(12), started: time.Now(), offers: map[string]*offer{},
		devices: map[string]*Device{}, sessions: map[string]*session{}, resumes: map[string]*rpc.ReplayGuard{},
		changed: make(chan struct{}), log: slog.Default()}
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
// nothing more, and what it started and is still waiting ends.
func (p *Pairing) rotateLocked() {
	old := p.linkID
	p.linkID, p.linkKey = randomID(12), randomKey()
	for id, o := range p.offers {
		if o.link == old && o.req == nil {
			delete(p.offers, id)
		}
	}
	for _, r := range slices.Clone(p.requests) {
		if r.offer.link == old && old != "" {
			p.endRequestLocked(r, pairOutcome{refusal: msgOldLink})
		}
	}
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
	return p.linkLocked()
}

func (p *Pairing) linkLocked() string {
	return p.base + "#" + p.linkID + "." + base64.RawURLEncoding.EncodeToString(p.linkKey[:])
}

// Rotate replaces the link (a new QR code) without touching paired
// devices; requests that came through the old link end.
func (p *Pairing) Rotate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.warning = ""
	p.rotateLocked()
}

// Status is a snapshot, and Changed a channel closed at the next change.
func (p *Pairing) Status() (Status, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked(time.Now())
	s := Status{Link: p.linkLocked(), Kind: p.kind, Devices: []Device{}, Requests: []*Request{}, Warning: p.warning,
		Revision: p.revision, Started: p.started}
	for _, d := range p.devices {
		s.Devices = append(s.Devices, *d)
	}
	slices.SortFunc(s.Devices, func(a, b Device) int { return a.Paired.Compare(b.Paired) })
	for _, r := range p.requests {
		c := *r
		s.Requests = append(s.Requests, &c)
	}
	return s, p.changed
}

// Errors a decision can meet; each is a sentence for the person at the
// computer.
var (
	ErrNameTheRequest = errors.New("name the request to allow by the pair code the device shows (or its request id); 'gatehouse devices' lists the waiting ones")
	ErrNoSuchRequest  = errors.New("no device is waiting with that code or request id ('gatehouse devices' lists the waiting ones)")
	ErrSameCode       = errors.New("two waiting requests show that code: name one by its request id")
	ErrGrantNeeded    = errors.New("say the grant with --grant view|control|full")
)

// Decide allows (with a grant) or denies the waiting request named by ref:
// its pair code ("123 456" or "123456") or its id. Nothing is decided
// without a name, so an allow can never reach a request other than the one
// whose code the person compared. A reconnect allowed with no grant keeps
// the device's.
func (p *Pairing) Decide(ref string, allow bool, g trust.Grant) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked(time.Now())
	r, err := p.findLocked(ref)
	if err != nil {
		return err
	}
	if !allow {
		p.endRequestLocked(r, pairOutcome{refusal: "The computer did not allow this device."})
		return nil
	}
	if g == trust.None && r.Kind == KindPair {
		return ErrGrantNeeded
	}
	p.takeLocked(r) // before allowing: pairing replaces the link, which ends the link's other requests
	r.outcome = p.allowLocked(r, g)
	close(r.done)
	return nil
}

// DenyAll denies every waiting request and says how many there were.
func (p *Pairing) DenyAll() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.requests)
	for _, r := range slices.Clone(p.requests) {
		p.endRequestLocked(r, pairOutcome{refusal: "The computer did not allow this device."})
	}
	return n
}

// findLocked resolves a request's name: an id exactly, or a pair code with
// its digits only.
func (p *Pairing) findLocked(ref string) (*Request, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, ErrNameTheRequest
	}
	for _, r := range p.requests {
		if r.ID == ref {
			return r, nil
		}
	}
	digits := strings.Map(func(c rune) rune {
		if c == ' ' || c == '-' {
			return -1
		}
		return c
	}, ref)
	var found *Request
	for _, r := range p.requests {
		if strings.ReplaceAll(r.Code, " ", "") == digits {
			if found != nil {
				return nil, ErrSameCode
			}
			found = r
		}
	}
	if found == nil {
		return nil, ErrNoSuchRequest
	}
	return found, nil
}

// allowLocked pairs the device a request stands for, or re-keys the one
// reconnecting.
func (p *Pairing) allowLocked(r *Request, g trust.Grant) pairOutcome {
	now := time.Now()
	if r.Kind == KindReconnect {
		dev := p.devices[r.Device]
		if dev == nil {
			return pairOutcome{refusal: msgNotPaired}
		}
		if g != trust.None {
			dev.Grant = g
		}
		p.endSessionsLocked(dev.ID) // a re-key: sessions of the old secrets end
		dev.stored, dev.Fingerprint = r.offer.hs.outcome(dev.ID)
		dev.storedRun, dev.LastSeen, dev.spent, dev.storedFresh = p.run, now, nil, true
		p.saveLocked()
		return pairOutcome{device: dev}
	}
	var ended string
	if old := p.namedLocked(r.Name); old != "" {
		ended = old // the same device, paired again: its old secrets are done
		p.dropDeviceLocked(old)
	}
	if len(p.devices) >= MaxDevices {
		return pairOutcome{refusal: msgFull}
	}
	if ended != "" && p.onRevoke != nil {
		go p.onRevoke(ended) // ends its streams; outside the lock
	}
	dev := &Device{ID: "lan-" + randomID(9), Name: r.Name, Grant: g, Kind: r.offer.kind, Paired: now, LastSeen: now,
		origin: p.base, Page: r.offer.page, storedRun: p.run, storedFresh: true}
	dev.stored, dev.Fingerprint = r.offer.hs.outcome(dev.ID)
	p.devices[dev.ID] = dev
	p.saveLocked()
	p.rotateLocked() // a link pairs one device
	return pairOutcome{device: dev}
}

// endRequestLocked ends a waiting request with its outcome.
func (p *Pairing) endRequestLocked(r *Request, out pairOutcome) {
	if p.takeLocked(r) {
		r.outcome = out
		close(r.done)
	}
}

// takeLocked takes a request off the waiting list; false if it was not on it.
func (p *Pairing) takeLocked(r *Request) bool {
	i := slices.Index(p.requests, r)
	if i < 0 {
		return false
	}
	p.requests = slices.Delete(p.requests, i, i+1)
	if p.warning == warnFull {
		p.warning = "" // there is room again
	}
	p.bumpLocked()
	return true
}

// expireLocked ends requests past their wait and forgets offers never
// revealed.
func (p *Pairing) expireLocked(now time.Time) {
	for id, o := range p.offers {
		if o.req == nil && now.Sub(o.created) > offerTTL {
			delete(p.offers, id)
		}
		if o.req != nil && now.Sub(o.req.Ends) > offerTTL {
			delete(p.offers, id) // its answer had time to be fetched
		}
	}
	for _, r := range slices.Clone(p.requests) {
		if now.After(r.Ends) {
			p.endRequestLocked(r, pairOutcome{refusal: "Nobody allowed this device on the computer in time. Try again, and allow it there."})
		}
	}
}

// Revoke unpairs a device.
func (p *Pairing) Revoke(id string) bool {
	p.mu.Lock()
	_, ok := p.devices[id]
	if ok {
		p.dropDeviceLocked(id)
		p.bumpLocked()
		p.saveLocked() // revoked for good: its secrets are forgotten
	}
	f := p.onRevoke
	p.mu.Unlock()
	if ok && f != nil {
		f(id)
	}
	return ok
}

// SetGrant changes a paired device's grant, as the person at the computer
// chose ('gatehouse devices grant'): the host asks GrantFor at each
// request, so its next one runs with it. The pairing's secrets are kept: the
// grant stays bound to them. A waiting reconnect of the device shows the
// new grant. None is refused: unpairing is Revoke.
func (p *Pairing) SetGrant(id string, g trust.Grant) bool {
	if g == trust.None {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.devices[id]
	if d == nil {
		return false
	}
	d.Grant = g
	for _, r := range p.requests {
		if r.Kind == KindReconnect && r.Device == id {
			r.Grant = g
		}
	}
	p.bumpLocked()
	p.saveLocked()
	return true
}

// dropDeviceLocked forgets a device, its sessions and its reconnects.
func (p *Pairing) dropDeviceLocked(id string) {
	delete(p.devices, id)
	delete(p.resumes, id)
	p.endSessionsLocked(id)
	for _, r := range slices.Clone(p.requests) {
		if r.Device == id {
			p.endRequestLocked(r, pairOutcome{refusal: msgNotPaired})
		}
	}
}

// GrantFor is the grant of a paired device whose session was agreed with
// its current secrets (the host's Grants).
func (p *Pairing) GrantFor(id, fp string) trust.Grant {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.devices[id]; d != nil && d.Fingerprint == fp {
		return d.Grant
	}
	return trust.None
}

// seen marks a device's request as its last: only one that opened with its
// session's key.
func (p *Pairing) seen(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.devices[id]; d != nil {
		d.LastSeen = time.Now()
	}
}

// junkAllowed reports whether the sender address from may still send a
// message that fails to open this minute. A message that opens is never
// asked about: the holder of a valid link or secret always gets through.
func (p *Pairing) junkAllowed(from netip.Addr, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.junk.allowed(from, now)
}

// failed charges a message that did not open to its sender address. Junk
// never replaces the link: it cannot pair, and replacing the link every
// time junk arrived from many addresses kept the real phone from pairing.
func (p *Pairing) failed(from netip.Addr, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.junk.charge(from, now)
}

// keep restores the devices kept from an earlier run and saves every
// change from now on. A kept device with malformed secrets or grant is left
// out (and so unpaired), never trusted.
func (p *Pairing) keep(k Keeper, st trust.LANState, port int, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keeper, p.port, p.log = k, port, log
	ids := map[string]int{}
	for _, d := range st.Devices {
		ids[d.ID]++
	}
	dropped := false
	for _, d := range st.Devices {
		why := ""
		switch {
		case ids[d.ID] > 1:
			why = "its id appears more than once (none of them is trusted)"
		case len(d.Stored) != len(rpc.Key{}) && len(d.Key) > 0:
			why = "it paired before pairing agreed its keys, so it must pair again"
		case len(d.Stored) != len(rpc.Key{}):
			why = "its stored secret is not 32 bytes"
		case d.Fingerprint == "":
			why = "it has no fingerprint"
		case d.Grant == trust.None:
			why = "it has no grant"
		case !validDeviceID(d.ID):
			why = "its id is not a LAN device's"
		case len(p.devices) >= MaxDevices:
			why = "3 devices are paired already"
		}
		if why != "" {
			log.Warn("a kept LAN device is left out and must pair again", "device", d.ID, "why", why)
			dropped = true
			continue
		}
		dev := &Device{ID: d.ID, Name: d.Name, Grant: d.Grant, Kind: d.Kind, Paired: d.Paired, LastSeen: d.LastSeen,
			Fingerprint: d.Fingerprint, Page: d.Page, origin: d.Origin, storedRun: d.StoredRun}
		copy(dev.stored[:], d.Stored)
		for _, s := range d.Spent {
			if len(s) == len(rpc.Key{}) && len(dev.spent) < maxSpent {
				var k rpc.Key
				copy(k[:], s)
				dev.spent = append(dev.spent, k)
			}
		}
		for _, t := range d.Tickets {
			if len(t.Secret) == len(rpc.Key{}) && t.ID != "" && len(dev.tickets) < maxTickets {
				tk := ticket{id: t.ID, used: t.Used}
				copy(tk.secret[:], t.Secret)
				dev.tickets = append(dev.tickets, tk)
			}
		}
		p.devices[d.ID] = dev
	}
	if st.Port != port || dropped {
		p.saveLocked()
	}
}

// validDeviceID is the shape pairing gives a LAN device's id.
func validDeviceID(id string) bool {
	return len(id) > 4 && len(id) <= 64 && id[:4] == "lan-" && printableID(id)
}

// printableID: ids travel in addresses and logs, and never hold '|'.
func printableID(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return id != ""
}

// saveLocked writes the devices and port for the next run.
func (p *Pairing) saveLocked() {
	if p.keeper == nil {
		return
	}
	st := trust.LANState{Port: p.port, Devices: []trust.LANDevice{}}
	for _, d := range p.devices {
		kd := trust.LANDevice{ID: d.ID, Name: d.Name, Grant: d.Grant, Kind: d.Kind, Origin: d.origin, Page: d.Page, Paired: d.Paired,
			LastSeen: d.LastSeen, Fingerprint: d.Fingerprint, Stored: append([]byte(nil), d.stored[:]...), StoredRun: d.storedRun}
		for _, s := range d.spent {
			kd.Spent = append(kd.Spent, append([]byte(nil), s[:]...))
		}
		for _, t := range d.tickets {
			kd.Tickets = append(kd.Tickets, trust.LANTicket{ID: t.id, Secret: append([]byte(nil), t.secret[:]...), Used: t.used})
		}
		st.Devices = append(st.Devices, kd)
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

// wait is how long a request waits for a decision.
func (p *Pairing) wait() time.Duration {
	if p.decisionWaitForTest > 0 {
		return p.decisionWaitForTest
	}
	return decisionWait
}

// errPairing is a refusal of a pairing step, with the status and code the
// page branches on and the sentence it shows.
type errPairing struct {
	status int
	code   string
	msg    string
}

func (e *errPairing) Error() string { return e.msg }

// offerLocked answers a device's first message: a handshake of its own,
// bounded per sender address and in all.
func (p *Pairing) offerLocked(o *offer) error {
	p.expireLocked(o.created)
	n, mine, device := 0, 0, 0
	for _, x := range p.offers {
		if x.req == nil {
			n++
			if x.from == o.from {
				mine++
			}
			if o.device != "" && x.device == o.device {
				device++
			}
		}
	}
	if n >= maxOffers || mine >= maxOffersPerAddr || device >= maxOffersPerAddr {
		return &errPairing{429, "busy", msgTooMany}
	}
	o.id = randomID(16)
	p.offers[o.id] = o
	return nil
}

// revealLocked makes a revealed handshake a waiting request, which the
// person at the computer sees with its code.
func (p *Pairing) revealLocked(o *offer, now time.Time) error {
	if o.req != nil {
		return nil // a repeated reveal: the request is there
	}
	p.expireLocked(now)
	mine := 0
	for _, r := range p.requests {
		if r.offer.from == o.from {
			mine++
		}
	}
	if len(p.requests) >= maxWaiting || mine >= maxWaitingPerAddr || o.device != "" && p.reconnectsLocked(o.device) >= maxReconnectsPerDevice {
		if len(p.requests) >= maxWaiting && p.warning != warnFull {
			p.warning = warnFull
			p.bumpLocked()
		}
		return &errPairing{429, "busy", msgWaitingFull}
	}
	r := &Request{ID: randomID(8), Code: o.hs.code(), Kind: KindPair, Name: o.name, From: o.from.String(), Page: o.page, At: now,
		Ends: now.Add(p.wait()), offer: o, done: make(chan struct{})}
	if o.device != "" {
		dev := p.devices[o.device]
		if dev == nil {
			return &errPairing{403, "unpaired", msgNotPaired}
		}
		r.Kind, r.Device, r.Grant, r.Name = KindReconnect, dev.ID, dev.Grant, dev.Name
	} else {
		r.Replaces = p.namedLocked(r.Name)
		if len(p.devices) >= MaxDevices && r.Replaces == "" {
			return &errPairing{409, "full", msgFull}
		}
	}
	o.req = r
	p.requests = append(p.requests, r)
	p.bumpLocked()
	return nil
}

// reconnectsLocked counts a device's waiting reconnects.
func (p *Pairing) reconnectsLocked(device string) int {
	n := 0
	for _, r := range p.requests {
		if r.Device == device {
			n++
		}
	}
	return n
}

// await waits for the person's decision on a request (or ctx).
func (p *Pairing) await(ctx context.Context, r *Request) (pairOutcome, bool) {
	timer := time.NewTimer(time.Until(r.Ends) + time.Second)
	defer timer.Stop()
	select {
	case <-r.done:
		return r.outcome, true
	case <-timer.C:
		p.mu.Lock()
		p.expireLocked(time.Now())
		p.mu.Unlock()
		select {
		case <-r.done:
			return r.outcome, true
		default:
			return pairOutcome{}, false
		}
	case <-ctx.Done():
		return pairOutcome{}, false
	}
}

// describe names a request for a log line.
func (r *Request) describe() string {
	return fmt.Sprintf("%s request %s from %s", r.Kind, r.ID, r.From)
}
