package lan

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"time"

	"github.com/gatehouse/gatehouse/internal/connlimit"
	"github.com/gatehouse/gatehouse/rpc"
)

// The pairing handshake over HTTP: POST /rc/pair carries each step.
//
//	start   {p: linkID | d: deviceID, f}  sealed with the link key (a new
//	        device) or the device's reconnect key; answered with the
//	        computer's key and commitment
//	reveal  {h, f}  sealed with the handshake key; answered with the
//	        computer's nonce (both sides now show the code, and the
//	        person at the computer sees the request)
//	wait    {h, f}  sealed with the handshake key; answered when the
//	        person decides, or the request's wait ends
//
// Every answer is sealed with the key its request was sealed with and names
// the request's nonce, so it answers that request and no other.

// pairBody is a step's body.
type pairBody struct {
	P string `json:"p,omitempty"` // the link's id (start, new device)
	D string `json:"d,omitempty"` // the device's id (start, reconnect)
	H string `json:"h,omitempty"` // the handshake (reveal, wait)
	F string `json:"f"`
}

// pairMsg is every step's plaintext, device to computer.
type pairMsg struct {
	Type  string `json:"type"`           // pair.start, pair.reveal, pair.wait
	Name  string `json:"name,omitempty"` // start
	Kind  string `json:"kind,omitempty"` // start: page or cli
	PK    string `json:"pk,omitempty"`   // start: the device's X25519 key
	Na    string `json:"na,omitempty"`   // reveal: the device's nonce
	TS    int64  `json:"ts"`
	Nonce string `json:"nonce"`
}

// pairAnswer is every step's answer, computer to device.
type pairAnswer struct {
	Type   string `json:"type"`             // pair.offer, pair.nonce, paired, refused
	H      string `json:"h,omitempty"`      // offer: the handshake's id
	PK     string `json:"pk,omitempty"`     // offer: the computer's X25519 key
	C      string `json:"c,omitempty"`      // offer: the commitment to its nonce
	Nb     string `json:"nb,omitempty"`     // nonce: the computer's nonce
	Device string `json:"device,omitempty"` // paired
	Grant  string `json:"grant,omitempty"`  // paired
	Name   string `json:"name,omitempty"`   // paired
	Error  string `json:"error,omitempty"`  // refused: the sentence
	Re     string `json:"re"`               // the nonce of the message this answers
	TS     int64  `json:"ts"`
	Nonce  string `json:"nonce"`
}

// pairAAD binds a step to what its key belongs to and its direction.
func pairAAD(scope, toward string) []byte { return []byte("pair:" + scope + "|" + toward) }

// errClock refuses a message out of the 60 s window; the refusal carries
// the computer's clock, so a device whose clock is off stamps its next one
// with the computer's time.
var errClock = &errPairing{400, "clock", "That request was stamped at another time than this computer's clock."}

// fresh reports whether a message's stamp is inside the window.
func fresh(ts int64, now time.Time) bool {
	d := now.UnixMilli() - ts
	return d <= 60_000 && d >= -60_000
}

// refuse answers a refused step with its status, code and sentence, and
// the computer's clock.
func refuse(w http.ResponseWriter, e *errPairing) {
	writeSoon(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e.msg, "code": e.code, "now": time.Now().UnixMilli()})
}

// refused answers err, which is an *errPairing, or an internal failure.
func (s *Server) refused(w http.ResponseWriter, err error) {
	var e *errPairing
	if errors.As(err, &e) {
		refuse(w, e)
		return
	}
	s.log.Error("pairing step failed", "err", err)
	fail(w, http.StatusInternalServerError, msgBadRequest)
}

func (s *Server) handlePair(w http.ResponseWriter, r *http.Request) {
	from := remoteAddr(r)
	var in pairBody
	if !readBody(w, r, maxPairBody, &in) {
		s.pairing.failed(from, time.Now())
		return
	}
	switch {
	case in.H != "":
		s.pairStep(w, r, in)
	case in.P != "" || in.D != "":
		s.pairStart(w, r, in, from)
	default:
		s.junk(w, from)
	}
}

// pairStart answers a device's first message with a handshake of the
// computer's own.
func (s *Server) pairStart(w http.ResponseWriter, r *http.Request, in pairBody, from netip.Addr) {
	now := time.Now()
	p := s.pairing
	p.mu.Lock()
	scope, device, link := "", "", ""
	var psks []rpc.Key // what the first message may be sealed with
	switch {
	case in.P != "" && in.D == "" && in.P == p.linkID:
		scope, psks, link = "link:"+p.linkID, []rpc.Key{p.linkKey}, p.linkID
	case in.D != "" && in.P == "" && p.devices[in.D] != nil:
		dev := p.devices[in.D]
		scope, device = "device:"+dev.ID, dev.ID
		psks = []rpc.Key{reconnectKey(dev.stored, dev.ID)}
		for _, old := range dev.spent { // a page that missed a change of its stored secret
			psks = append(psks, reconnectKey(old, dev.ID))
		}
		if !p.pageAllowedLocked(dev, pageOf(r)) {
			// Paired from another page: only that page may ask again.
			p.mu.Unlock()
			refuse(w, errOtherPage)
			return
		}
		if dev.origin != p.base && !s.o.originCheckOffForTest {
			// The device paired at another address: whatever answers there
			// now is not this serve, and may be relaying the page to it.
			p.mu.Unlock()
			refuse(w, &errPairing{409, "moved", msgMoved})
			return
		}
	}
	p.mu.Unlock()
	var psk rpc.Key
	var m pairMsg
	opened := false
	for _, k := range psks {
		if plain, err := rpc.Open(k, in.F, pairAAD(scope, "host")); err == nil && json.Unmarshal(plain, &m) == nil && m.Type == "pair.start" {
			psk, opened = k, true
			break
		}
	}
	if !opened {
		s.junk(w, from)
		return
	}
	if !fresh(m.TS, now) {
		refuse(w, errClock)
		return
	}
	pkA, err := base64.RawURLEncoding.DecodeString(m.PK)
	if err != nil {
		s.junk(w, from)
		return
	}
	kind := "page"
	if m.Kind == "cli" {
		kind = "cli"
	}
	// The code covers the name and kind as the device sent them (it computes
	// its own code over those); the person sees them cleaned.
	hs, err := hostOffer(scope, psk, m.Name, m.Kind, pkA)
	if err != nil {
		s.junk(w, from)
		return
	}
	o := &offer{hs: hs, from: from, link: link, device: device, created: now, name: cleanName(m.Name), kind: kind, page: pageOf(r)}
	p.mu.Lock()
	err = p.offerLocked(o)
	p.mu.Unlock()
	if err != nil {
		s.refused(w, err)
		return
	}
	ans := pairAnswer{Type: "pair.offer", H: o.id, PK: b64(hs.pkB), C: b64(hs.commit), Re: m.Nonce, TS: now.UnixMilli(), Nonce: randomID(24)}
	out, _ := json.Marshal(ans)
	sealed(w, rpc.Seal(psk, out, pairAAD(scope, "device")))
}

// pairStep answers a reveal or a wait, sealed with the handshake's key.
func (s *Server) pairStep(w http.ResponseWriter, r *http.Request, in pairBody) {
	now := time.Now()
	from := remoteAddr(r)
	p := s.pairing
	p.mu.Lock()
	p.expireLocked(now)
	o := p.offers[in.H]
	p.mu.Unlock()
	if o == nil {
		refuse(w, &errPairing{410, "gone", msgPairGone})
		return
	}
	if o.page != pageOf(r) && !p.pageCheckOffForTest {
		refuse(w, errOtherPage) // the handshake goes on from the page that began it
		return
	}
	plain, err := rpc.Open(o.hs.key, in.F, pairAAD(o.id, "host"))
	var m pairMsg
	if err != nil || json.Unmarshal(plain, &m) != nil {
		s.junk(w, from)
		return
	}
	if !fresh(m.TS, now) {
		refuse(w, errClock)
		return
	}
	p.mu.Lock()
	replayed := o.seen[m.Nonce] || len(o.seen) >= 64
	if !replayed {
		if o.seen == nil {
			o.seen = map[string]bool{}
		}
		o.seen[m.Nonce] = true
	}
	p.mu.Unlock()
	if replayed {
		s.junk(w, from)
		return
	}
	ans := pairAnswer{Re: m.Nonce}
	switch m.Type {
	case "pair.reveal":
		na, err := base64.RawURLEncoding.DecodeString(m.Na)
		if err != nil || len(na) != 32 {
			s.junk(w, from)
			return
		}
		p.mu.Lock()
		if o.hs.na == nil {
			o.hs.na = na
		}
		same := string(o.hs.na) == string(na)
		if same {
			err = p.revealLocked(o, now)
		}
		p.mu.Unlock()
		switch {
		case !same:
			s.junk(w, from) // a second reveal with another nonce: the first stands
			return
		case err != nil:
			s.refused(w, err)
			return
		}
		ans.Type, ans.Nb = "pair.nonce", b64(o.hs.nb)
		s.log.Info("pair request waiting", "request", o.req.describe(), "code", o.req.Code)
	case "pair.wait":
		p.mu.Lock()
		req := o.req
		p.mu.Unlock()
		if req == nil {
			refuse(w, &errPairing{410, "gone", msgPairGone})
			return
		}
		connlimit.Working(r.Context()) // a request the handshake proved: wait for the person
		out, decided := p.await(r.Context(), req)
		switch {
		case !decided && r.Context().Err() != nil:
			return // the device went away; it may wait again
		case !decided:
			ans.Type, ans.Error = "refused", "Nobody allowed this device on the computer in time. Try again, and allow it there."
		case out.device == nil:
			ans.Type, ans.Error = "refused", out.refusal
		default:
			ans.Type, ans.Device, ans.Grant, ans.Name = "paired", out.device.ID, out.device.Grant.String(), out.device.Name
			s.log.Info("device paired", "device", out.device.ID, "name", out.device.Name, "grant", out.device.Grant.String(), "kind", req.Kind)
		}
	default:
		s.junk(w, from)
		return
	}
	ans.TS, ans.Nonce = time.Now().UnixMilli(), randomID(24)
	out, _ := json.Marshal(ans)
	if ans.Type == "paired" && s.o.leakStoredUnderLinkForTest && o.link != "" {
		stored, _ := o.hs.outcome(ans.Device)
		writeSoon(w)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"f": rpc.Seal(o.hs.key, out, pairAAD(o.id, "device")),
			"k": rpc.Seal(o.hs.psk, stored[:], pairAAD(o.hs.scope, "device"))})
		return
	}
	sealed(w, rpc.Seal(o.hs.key, out, pairAAD(o.id, "device")))
}

// junk answers a message that did not open, charging it to its sender's
// budget: a sender over budget is told to wait.
func (s *Server) junk(w http.ResponseWriter, from netip.Addr) {
	now := time.Now()
	if !s.pairing.junkAllowed(from, now) {
		fail(w, http.StatusTooManyRequests, msgTooMany)
		return
	}
	s.pairing.failed(from, now)
	fail(w, http.StatusForbidden, msgOldLink)
}

// resumeBody is a resume's body.
type resumeBody struct {
	D string `json:"d"`
	M string `json:"m"`           // stored or ticket
	T string `json:"t,omitempty"` // the ticket's id
	F string `json:"f"`
}

func (s *Server) handleResume(w http.ResponseWriter, r *http.Request) {
	from := remoteAddr(r)
	var in resumeBody
	if !readBody(w, r, maxResumeBody, &in) {
		s.pairing.failed(from, time.Now())
		return
	}
	if q := r.URL.Query().Get("d"); q != "" && q != in.D {
		fail(w, http.StatusBadRequest, msgBadRequest) // the address names the device its preflight was asked for
		return
	}
	out, _, err := s.pairing.resume(in.D, pageOf(r), in.M, in.T, in.F, time.Now())
	if err != nil {
		var e *errPairing
		if errors.As(err, &e) && e == errResumeUnpaired {
			if !s.pairing.junkAllowed(from, time.Now()) {
				fail(w, http.StatusTooManyRequests, msgTooMany)
				return
			}
			s.pairing.failed(from, time.Now())
		}
		s.refused(w, err)
		return
	}
	sealed(w, out)
}
