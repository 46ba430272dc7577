package lan

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
)

// Sessions. A device calls through a session it opened with a resume: a
// fresh X25519 exchange authenticated by its stored secret or by a ticket.
// Sessions live in this serve's memory only, so a frame recorded in one run
// opens nothing in the next; each open page has its own, so two tabs never
// take each other's event stream.
//
// Which secret may resume when:
//   - a ticket (held in the memory of a page that stayed open, or in
//     gatehouse call's owner-only file), always;
//   - the stored secret (a page's browser storage), only in the serve run
//     that gave it: whatever serves the page's address while serve is
//     stopped (another local user on the kept port, the same address on
//     another network) can read that storage, so after a restart a page
//     without a ticket reconnects, and the person at the computer allows it
//     by its code. The first ticket resume of a run gives the device a new
//     stored secret, so what was stored before the restart is spent.
const (
	maxSessionsPerDevice = 16             // open pages and calls of one device; the oldest goes first
	sessionIdle          = 12 * time.Hour // a session unused this long ends
	// maxTickets bounds the tickets kept per device: those of open sessions
	// always, then the most recently used. Twice the sessions, so that a
	// page left open keeps its ticket through any number of reloads in
	// other tabs (a red team's 17 reloads dropped it).
	maxTickets = 2 * maxSessionsPerDevice
	ticketLife = 30 * 24 * time.Hour
	// resumeAhead bounds how far ahead of this computer's clock a resume may
	// be stamped. A device stamps with this computer's clock (every answer
	// and clock refusal carries it), so a resume recorded before a restart
	// and stamped ahead of it cannot pass for one of the next run.
	resumeAhead = 2 * time.Second
	// maxSpent bounds the stored secrets a device had before: a page still
	// holding one is asked to reconnect, not told it is not paired.
	maxSpent = 4
)

// secureFor reports whether dev's stored secret was issued at this HTTPS
// origin, where no other program can read the page's storage. One issued
// over plain HTTP (before serve had its certificate) could have been read
// by a squatter then, and stays good for its run only.
//
// A device paired from another computer's page keeps its stored secret in
// that page's storage: secure only when that page is HTTPS too.
func (p *Pairing) secureFor(dev *Device) bool {
	return p.secure && dev.origin == p.base && (dev.Page == "" || strings.HasPrefix(dev.Page, "https://"))
}

type ticket struct {
	id     string
	secret rpc.Key
	used   time.Time
}

type session struct {
	id, device, fp string
	keys           sessionSecrets
	used           time.Time
	streams        int              // event streams open now: an open page's session goes last
	headers        *rpc.ReplayGuard // nonces of calls' authenticated headers
}

// resumeMsg is a resume's plaintext, and resumeAnswer its answer's.
type resumeMsg struct {
	Type  string `json:"type"` // "resume"
	PK    string `json:"pk"`   // the device's fresh X25519 key, base64url
	TS    int64  `json:"ts"`
	Nonce string `json:"nonce"`
}

type resumeAnswer struct {
	Type    string `json:"type"` // "session"
	Session string `json:"s"`
	PK      string `json:"pk"` // the computer's fresh X25519 key
	Re      string `json:"re"` // the resume's nonce: this answer is for it
	Grant   string `json:"grant"`
	Name    string `json:"name"`
	Device  string `json:"device"`
	// Rotate says the stored secret changed: the device derives the new one
	// from its ticket and Run (nextStored) and stores it in place of the old.
	Rotate bool   `json:"rotate,omitempty"`
	Run    string `json:"run,omitempty"`
	TS     int64  `json:"ts"`
	Nonce  string `json:"nonce"`
}

// resumeAAD binds a resume and its answer to the device, the secret that
// seals it, and their direction.
func resumeAAD(deviceID, mode, ticketID, toward string) []byte {
	return []byte("resume:" + deviceID + "|" + mode + "|" + ticketID + "|" + toward)
}

// Resume refusals, each with what the device does next.
var (
	errResumeUnpaired  = &errPairing{403, "unpaired", msgNotPaired}
	errResumeNoTicket  = &errPairing{409, "ticket", "That ticket is not known here."}
	errResumeRestarted = &errPairing{409, "restarted", msgRestarted}
	errResumeClock     = &errPairing{400, "clock", "That request was stamped at another time than this computer's clock."}
	errResumeBusy      = &errPairing{429, "busy", msgTooMany}
)

// resume opens a session for device d, whose frame is sealed under the
// secret mode names, asked from page ("" for this computer's own). It
// returns the sealed answer.
func (p *Pairing) resume(d, page, mode, ticketID, frame string, now time.Time) (string, *session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dev := p.devices[d]
	if dev == nil {
		return "", nil, errResumeUnpaired
	}
	if !p.pageAllowedLocked(dev, page) {
		return "", nil, errOtherPage
	}
	var secret rpc.Key
	var tk *ticket
	switch mode {
	case modeStored:
		if ticketID != "" {
			return "", nil, errResumeUnpaired
		}
		secret = dev.stored
		for _, old := range dev.spent {
			if p.opens(old, mode, d, frame) {
				// A stored secret spent by a change this page did not see
				// (another tab's, or an answer lost): the person allows it
				// again, as after a restart; it is not forgotten.
				return "", nil, errResumeRestarted
			}
		}
	case modeTicket:
		i := slices.IndexFunc(dev.tickets, func(t ticket) bool {
			return subtle.ConstantTimeCompare([]byte(t.id), []byte(ticketID)) == 1 && now.Sub(t.used) < ticketLife
		})
		if i < 0 {
			return "", nil, errResumeNoTicket
		}
		tk = &dev.tickets[i]
		secret = tk.secret
	default:
		return "", nil, errResumeUnpaired
	}
	k := resumeKey(secret, mode, d, ticketID)
	plain, err := rpc.Open(k, frame, resumeAAD(d, mode, ticketID, "host"))
	var m resumeMsg
	if err != nil || json.Unmarshal(plain, &m) != nil || m.Type != "resume" {
		if mode == modeTicket {
			return "", nil, errResumeNoTicket
		}
		return "", nil, errResumeUnpaired
	}
	// A resume stamped before this serve started was recorded in an earlier
	// run (while serve was stopped, by whatever answered at its address):
	// refused, as is one out of the window. The device re-stamps it with
	// this computer's clock, which the refusal tells it.
	if m.TS <= p.started.UnixMilli() || m.TS > now.Add(resumeAhead).UnixMilli() {
		return "", nil, errResumeClock
	}
	g := p.resumes[d]
	if g == nil {
		g = rpc.NewReplayGuard()
		p.resumes[d] = g
	}
	if err := g.Check(m.TS, m.Nonce); err != nil {
		if errors.Is(err, rpc.ErrBusy) {
			return "", nil, errResumeBusy
		}
		return "", nil, errResumeClock
	}
	if mode == modeStored && dev.storedRun != p.run && !p.secureFor(dev) && !p.storedAcrossRunsForTest {
		return "", nil, errResumeRestarted
	}
	if mode == modeStored && p.storedOnceLocked(dev) {
		// Only a stored secret the person's allowing just gave opens a
		// session, once: not one kept from an earlier run, nor one a
		// ticket's resume rotated (the page stores that one too).
		if !dev.storedFresh {
			return "", nil, errStoredOnce
		}
		dev.storedFresh = false
	}
	pkE, err := base64.RawURLEncoding.DecodeString(m.PK)
	if err != nil {
		return "", nil, errResumeUnpaired
	}
	e := newX25519()
	dh, err := exchange(e, pkE)
	if err != nil {
		return "", nil, errResumeUnpaired
	}
	sid := randomID(12)
	keys := sessionKeys(dh, secret, d, sid, pkE, e.PublicKey().Bytes())
	ans := resumeAnswer{Type: "session", Session: sid, PK: b64(e.PublicKey().Bytes()), Re: m.Nonce, Grant: dev.Grant.String(),
		Name: dev.Name, Device: d, TS: now.UnixMilli(), Nonce: randomID(24)}
	switch {
	case tk == nil || p.secure:
		// Over HTTPS no other program could read the page's storage: its
		// stored secret need not change (and changing it would send the
		// tabs that read it before the change to the person).
	case dev.storedRun != p.run:
		// The first ticket resume of this run: what was stored before the
		// restart is spent.
		dev.spent = append([]rpc.Key{dev.stored}, dev.spent...)[:min(len(dev.spent)+1, maxSpent)]
		dev.stored, dev.storedRun, dev.rotatedBy = nextStored(tk.secret, d, p.run), p.run, ticketID
		ans.Rotate, ans.Run = true, p.run
	case dev.rotatedBy == ticketID:
		// The same ticket again in this run: the answer that said so may
		// have been lost.
		ans.Rotate, ans.Run = true, p.run
	}
	if tk != nil {
		tk.used = now
	}
	se := &session{id: sid, device: d, fp: dev.Fingerprint, keys: keys, used: now, headers: rpc.NewReplayGuard()}
	p.addSessionLocked(se, now)
	dev.tickets = append(dev.tickets, ticket{id: sid, secret: keys.ticket, used: now})
	p.trimTicketsLocked(dev, now)
	dev.LastSeen = now
	p.saveLocked()
	out, _ := json.Marshal(ans)
	return rpc.Seal(k, out, resumeAAD(d, mode, ticketID, "device")), se, nil
}

// opens reports whether frame opens as a resume under secret.
func (p *Pairing) opens(secret rpc.Key, mode, d, frame string) bool {
	_, err := rpc.Open(resumeKey(secret, mode, d, ""), frame, resumeAAD(d, mode, "", "host"))
	return err == nil
}

// trimTicketsLocked keeps a device's tickets within maxTickets and their
// life: the tickets of its open sessions first (a page left open must come
// back after a restart, however often other tabs reload), then the most
// recently used.
func (p *Pairing) trimTicketsLocked(dev *Device, now time.Time) {
	dev.tickets = slices.DeleteFunc(dev.tickets, func(t ticket) bool { return now.Sub(t.used) >= ticketLife })
	live := func(t ticket) int {
		if se := p.sessions[t.id]; se != nil && se.device == dev.ID {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(dev.tickets, func(a, b ticket) int {
		if d := live(b) - live(a); d != 0 {
			return d
		}
		return b.used.Compare(a.used)
	})
	if len(dev.tickets) > maxTickets {
		dev.tickets = dev.tickets[:maxTickets]
	}
}

// addSessionLocked keeps a session, ending beyond maxSessionsPerDevice the
// device's least recently used one with no event stream open (a page that
// is open keeps its session however often other tabs reload), and any left
// idle.
func (p *Pairing) addSessionLocked(se *session, now time.Time) {
	var mine []*session
	for id, x := range p.sessions {
		if now.Sub(x.used) > sessionIdle {
			p.endSessionLocked(id)
			continue
		}
		if x.device == se.device {
			mine = append(mine, x)
		}
	}
	slices.SortFunc(mine, func(a, b *session) int {
		if d := a.streams - b.streams; d != 0 {
			return d // sessions without a stream go first
		}
		return a.used.Compare(b.used)
	})
	for len(mine) >= maxSessionsPerDevice {
		p.endSessionLocked(mine[0].id)
		mine = mine[1:]
	}
	p.sessions[se.id] = se
}

// session is device d's open session sid, while the device is paired with
// the secrets the session was agreed under.
func (p *Pairing) session(d, sid string) (*session, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	se := p.sessions[sid]
	dev := p.devices[d]
	if se == nil || se.device != d || dev == nil || dev.Fingerprint != se.fp {
		return nil, false
	}
	se.used = time.Now()
	return se, true
}

// sessionsOf lists device d's sessions.
func (p *Pairing) sessionsOf(d string) []*session {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*session
	for _, se := range p.sessions {
		if se.device == d {
			out = append(out, se)
		}
	}
	return out
}

// streaming counts an event stream opening (+1) or closing (-1) on a
// session.
func (p *Pairing) streaming(sid string, delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if se := p.sessions[sid]; se != nil {
		se.streams += delta
		se.used = time.Now()
	}
}

func (p *Pairing) endSessionsLocked(d string) {
	for id, se := range p.sessions {
		if se.device == d {
			p.endSessionLocked(id)
		}
	}
}

func (p *Pairing) endSessionLocked(id string) {
	delete(p.sessions, id)
	if p.onEnd != nil {
		go p.onEnd(id) // closes its stream; outside the lock
	}
}
