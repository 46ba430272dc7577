package lan

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
)

// The device side of the LAN transport, for gatehouse call --lan and the
// tests: pair once through the link (the person at the computer allows the
// request whose code matches), then open a session for each run of calls.

// Paired is what a device keeps after pairing: the page's address, its id,
// its stored secret and its newest ticket. gatehouse call keeps it in an
// owner-only file (a page keeps the ticket in memory only).
type Paired struct {
	Base     string  `json:"base"` // http://addr:port/
	DeviceID string  `json:"deviceId"`
	Stored   rpc.Key `json:"stored"`
	TicketID string  `json:"ticketId,omitempty"`
	Ticket   rpc.Key `json:"ticket"`
	Grant    string  `json:"grant"`
}

// Link is a parsed pairing link.
type Link struct {
	Base string
	ID   string
	Key  rpc.Key
}

// ParseLink reads http://addr:port/#id.key (or https://name:port/#id.key).
func ParseLink(raw string) (Link, error) {
	u, err := url.Parse(raw)
	bad := fmt.Errorf("%q is not a gatehouse pairing link (http://address:port/#code)", raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Link{}, bad
	}
	id, key, ok := strings.Cut(u.Fragment, ".")
	raw32, kerr := base64.RawURLEncoding.DecodeString(key)
	if !ok || id == "" || kerr != nil || len(raw32) != 32 {
		return Link{}, bad
	}
	var l Link
	l.Base, l.ID = u.Scheme+"://"+u.Host+"/", id
	copy(l.Key[:], raw32)
	return l, nil
}

// Errors a device branches on.
var (
	// ErrRefused is a pairing the computer refused, with its sentence.
	ErrRefused = refusal.New(refusal.Refused, "pairing refused", "The computer did not pair this device.")
	// ErrNotPaired: the computer does not know this device (it was
	// unpaired, or its secret does not open there).
	ErrNotPaired = refusal.New(refusal.Refused, "not paired", msgNotPaired)
	// ErrRestarted: serve restarted and this device has no ticket: the
	// person at the computer must allow it again (Reconnect).
	ErrRestarted = refusal.New(refusal.Refused, "restarted", msgRestarted)
	// ErrMoved: the computer serves at another address than the device
	// paired at: pair again with its new link.
	ErrMoved = refusal.New(refusal.Refused, "moved", msgMoved)
	// errNoTicket: the ticket is not known there (too old, or forgotten):
	// resume with the stored secret.
	errNoTicket = errors.New("lan: ticket not known")
	// errAnswer: an answer that did not open with the key its request was
	// sealed with: not the computer this device paired with.
	errAnswer = errors.New("the computer's answer did not open")
)

// serverRefusal is an unsealed refusal: a status, the code a device
// branches on, the sentence, and the computer's clock.
type serverRefusal struct {
	status   int
	code     string
	sentence string
	now      int64
}

func (e *serverRefusal) Error() string { return e.sentence }

// client is the device's HTTP side, with the computer's clock learned from
// its refusals (a device whose clock is off stamps with the computer's).
type client struct {
	hc   *http.Client
	base string
	skew atomic.Int64 // ms to add to this device's clock
}

func (c *client) now() time.Time {
	return time.Now().Add(time.Duration(c.skew.Load()) * time.Millisecond)
}

// post sends a JSON body and returns the sealed "f" of the answer.
func (c *client) post(ctx context.Context, path string, body any, header http.Header) (string, error) {
	data, _ := json.Marshal(body)
	out, err := c.do(ctx, path, "application/json", data, header)
	if out.Binary {
		return "", errAnswer // only a call is answered with a binary frame
	}
	return string(out.Body), err
}

// do posts data as contentType and returns the answer's sealed frame: a
// binary frame (protocol 2) or the "f" of a JSON answer.
func (c *client) do(ctx context.Context, path, contentType string, data []byte, header http.Header) (rpc.Frame, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(data))
	if err != nil {
		return rpc.Frame{}, err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return rpc.Frame{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxCallBody))
	if err != nil {
		return rpc.Frame{}, err
	}
	if res.StatusCode == http.StatusOK && res.Header.Get("Content-Type") == frameType {
		return rpc.Frame{Body: raw, Binary: true}, nil
	}
	var out struct {
		F     string `json:"f"`
		Error string `json:"error"`
		Code  string `json:"code"`
		Now   int64  `json:"now"`
	}
	_ = json.Unmarshal(raw, &out)
	if res.StatusCode == http.StatusOK {
		return rpc.Frame{Body: []byte(out.F)}, nil
	}
	if out.Error == "" {
		out.Error = res.Status
	}
	if out.Code == "clock" && out.Now > 0 {
		// Stamp the next one a millisecond past the computer's clock: a
		// message stamped in the very millisecond serve started is refused.
		c.skew.Store(out.Now + 1 - time.Now().UnixMilli())
	}
	return rpc.Frame{}, &serverRefusal{status: res.StatusCode, code: out.Code, sentence: out.Error, now: out.Now}
}

// postFresh is post of a message stamped at send time, stamped again once
// with the computer's clock when it says the first stamp was off.
func (c *client) postFresh(ctx context.Context, path string, make func(now time.Time) any) (string, error) {
	out, err := c.post(ctx, path, make(c.now()), nil)
	var sr *serverRefusal
	if errors.As(err, &sr) && sr.code == "clock" {
		out, err = c.post(ctx, path, make(c.now()), nil)
	}
	return out, err
}

// Pair says hello through the link as a device of kind "cli" and waits (up
// to a minute) for the person at the computer; show gets the pair code the
// computer shows beside the request, which the person compares.
func Pair(ctx context.Context, hc *http.Client, l Link, name string, show func(code string)) (Paired, error) {
	c := &client{hc: hc, base: l.Base}
	ans, hs, err := c.handshake(ctx, "link:"+l.ID, l.Key, pairBody{P: l.ID}, name, show)
	if err != nil {
		return Paired{}, err
	}
	stored, _ := hs.outcome(ans.Device)
	return Paired{Base: l.Base, DeviceID: ans.Device, Stored: stored, Grant: ans.Grant}, nil
}

// Reconnect asks the computer to allow a paired device again after a
// restart left it without a ticket; show gets the code to compare.
func Reconnect(ctx context.Context, hc *http.Client, p Paired, name string, show func(code string)) (Paired, error) {
	c := &client{hc: hc, base: p.Base}
	ans, hs, err := c.handshake(ctx, "device:"+p.DeviceID, reconnectKey(p.Stored, p.DeviceID), pairBody{D: p.DeviceID}, name, show)
	if err != nil {
		return p, err
	}
	if ans.Device != p.DeviceID {
		return p, errAnswer
	}
	p.Stored, _ = hs.outcome(p.DeviceID)
	p.Grant, p.TicketID, p.Ticket = ans.Grant, "", rpc.Key{}
	return p, nil
}

// handshake runs the three steps of a pairing or a reconnect.
func (c *client) handshake(ctx context.Context, scope string, psk rpc.Key, first pairBody, name string, show func(string)) (pairAnswer, *handshake, error) {
	d := newDeviceStart(scope, psk, name, "cli")
	var offer pairAnswer
	err := c.pairMessage(ctx, psk, scope, first, &offer, func(now time.Time) pairMsg {
		return pairMsg{Type: "pair.start", Name: name, Kind: "cli", PK: b64(d.h.pkA), TS: now.UnixMilli(), Nonce: randomID(24)}
	})
	if err != nil {
		return offer, nil, err
	}
	pkB, err1 := base64.RawURLEncoding.DecodeString(offer.PK)
	commit, err2 := base64.RawURLEncoding.DecodeString(offer.C)
	if offer.Type != "pair.offer" || err1 != nil || err2 != nil || d.committed(pkB, commit) != nil {
		return offer, nil, errAnswer
	}
	var nonce pairAnswer
	step := pairBody{H: offer.H}
	err = c.pairMessage(ctx, d.h.key, offer.H, step, &nonce, func(now time.Time) pairMsg {
		return pairMsg{Type: "pair.reveal", Na: b64(d.h.na), TS: now.UnixMilli(), Nonce: randomID(24)}
	})
	if err != nil {
		return nonce, nil, err
	}
	nb, err := base64.RawURLEncoding.DecodeString(nonce.Nb)
	if nonce.Type != "pair.nonce" || err != nil || d.opened(nb) != nil {
		return nonce, nil, errAnswer
	}
	if show != nil {
		show(d.h.code())
	}
	var done pairAnswer
	err = c.pairMessage(ctx, d.h.key, offer.H, step, &done, func(now time.Time) pairMsg {
		return pairMsg{Type: "pair.wait", TS: now.UnixMilli(), Nonce: randomID(24)}
	})
	switch {
	case err != nil:
		return done, nil, err
	case done.Type != "paired":
		return done, nil, refusal.Errorf(ErrRefused, "%s", done.Error)
	}
	return done, d.h, nil
}

// pairMessage sends one handshake step sealed with key under scope and
// opens its answer, which must name the step's nonce.
func (c *client) pairMessage(ctx context.Context, key rpc.Key, scope string, body pairBody, ans *pairAnswer, msg func(time.Time) pairMsg) error {
	var sent string
	out, err := c.postFresh(ctx, "rc/pair", func(now time.Time) any {
		m := msg(now)
		sent = m.Nonce
		plain, _ := json.Marshal(m)
		b := body
		b.F = rpc.Seal(key, plain, pairAAD(scope, "host"))
		return b
	})
	if err != nil {
		return refusalOf(err)
	}
	plain, err := rpc.Open(key, out, pairAAD(scope, "device"))
	if err != nil || json.Unmarshal(plain, ans) != nil || ans.Re != sent {
		return errAnswer
	}
	return nil
}

// refusalOf turns a refusal into the error a device branches on.
func refusalOf(err error) error {
	var sr *serverRefusal
	if !errors.As(err, &sr) {
		return err
	}
	switch {
	case sr.code == "unpaired" || sr.status == http.StatusForbidden && sr.sentence == msgNotPaired:
		return ErrNotPaired
	case sr.code == "restarted":
		return ErrRestarted
	case sr.code == "moved":
		return ErrMoved
	case sr.code == "ticket":
		return errNoTicket
	}
	return refusal.Errorf(ErrRefused, "%s", sr.sentence)
}

// Session is an open session with the computer.
type Session struct {
	c        *client
	deviceID string
	id       string
	keys     sessionSecrets
	Grant    string
}

// Resume opens a session for p: with its ticket when it has one (and,
// when the computer no longer knows that ticket, with its stored secret).
// p is updated with the session's ticket, and with a new stored secret when
// the computer gives one: save it before calling.
func Resume(ctx context.Context, hc *http.Client, p *Paired) (*Session, error) {
	c := &client{hc: hc, base: p.Base}
	if p.TicketID != "" {
		se, err := c.resume(ctx, p, modeTicket)
		if !errors.Is(err, errNoTicket) {
			return se, err
		}
	}
	return c.resume(ctx, p, modeStored)
}

func (c *client) resume(ctx context.Context, p *Paired, mode string) (*Session, error) {
	secret, ticketID := p.Stored, ""
	if mode == modeTicket {
		secret, ticketID = p.Ticket, p.TicketID
	}
	k := resumeKey(secret, mode, p.DeviceID, ticketID)
	var e *ecdh.PrivateKey
	var sent string
	// The address names the device, as the page's does: a computer answers
	// another origin's resume only for a device pinned to it.
	out, err := c.postFresh(ctx, "rc/resume?d="+url.QueryEscape(p.DeviceID), func(now time.Time) any {
		e = newX25519()
		sent = randomID(24)
		plain, _ := json.Marshal(resumeMsg{Type: "resume", PK: b64(e.PublicKey().Bytes()), TS: now.UnixMilli(), Nonce: sent})
		return resumeBody{D: p.DeviceID, M: mode, T: ticketID, F: rpc.Seal(k, plain, resumeAAD(p.DeviceID, mode, ticketID, "host"))}
	})
	if err != nil {
		return nil, refusalOf(err)
	}
	plain, err := rpc.Open(k, out, resumeAAD(p.DeviceID, mode, ticketID, "device"))
	var ans resumeAnswer
	if err != nil || json.Unmarshal(plain, &ans) != nil || ans.Type != "session" || ans.Re != sent || ans.Device != p.DeviceID {
		return nil, errAnswer
	}
	pkH, err := base64.RawURLEncoding.DecodeString(ans.PK)
	if err != nil {
		return nil, errAnswer
	}
	dh, err := exchange(e, pkH)
	if err != nil {
		return nil, errAnswer
	}
	keys := sessionKeys(dh, secret, p.DeviceID, ans.Session, e.PublicKey().Bytes(), pkH)
	if ans.Rotate && mode == modeTicket {
		p.Stored = nextStored(secret, p.DeviceID, ans.Run)
	}
	p.TicketID, p.Ticket, p.Grant = ans.Session, keys.ticket, ans.Grant
	return &Session{c: c, deviceID: p.DeviceID, id: ans.Session, keys: keys, Grant: ans.Grant}, nil
}

// Conn is a caller in a session.
type Conn struct {
	*rpc.Caller
	notPaired atomic.Bool
}

// Conn makes a caller in the session. It speaks protocol 2: each request
// announces it, and once the computer has shown it reads binary frames
// (an answer in one, or its host.hello) requests go as binary frames too.
func (se *Session) Conn() *Conn {
	c := &Conn{}
	in, out := sessionAAD(se.deviceID, se.id, "host"), sessionAAD(se.deviceID, se.id, "device")
	c.Caller = rpc.NewCaller(rpc.CallerOptions{
		Seal: func(plain []byte) string { return rpc.Seal(se.keys.key, plain, in) },
		Open: func(body string) ([]byte, error) { return rpc.Open(se.keys.key, body, out) },
		Now:  se.c.now,
		Send: func(ctx context.Context, ref, body string) error {
			data, _ := json.Marshal(map[string]string{"f": body})
			se.send(ctx, c, ref, "application/json", data)
			return nil
		},
		Frames: &rpc.FrameOptions{
			Seal: func(plain []byte) ([]byte, error) { return rpc.SealFrame(se.keys.key, plain, in), nil },
			Open: func(frame []byte) ([]byte, error) { return rpc.OpenFrame(se.keys.key, frame, out) },
			Send: func(ctx context.Context, ref string, frame []byte) error {
				se.send(ctx, c, ref, frameType, frame)
				return nil
			},
		},
	})
	return c
}

// send posts one sealed request and hands its answer, or what became of
// it, to c.
func (se *Session) send(ctx context.Context, c *Conn, ref, contentType string, data []byte) {
	go func() {
		out, err := se.c.do(ctx, se.callPath(), contentType, data, se.authHeader())
		var op *net.OpError
		var sr *serverRefusal
		switch {
		case err == nil && out.Binary:
			c.DeliverFrame(out.Body)
		case err == nil:
			c.Deliver(string(out.Body))
		case errors.As(err, &op) && op.Op == "dial":
			c.Undeliverable(ref) // it never reached the host
		case errors.As(err, &sr):
			c.notPaired.Store(errors.Is(refusalOf(err), ErrNotPaired))
			c.Undeliverable(ref) // refused before dispatch: it did not run
		default:
			c.Lost(ref) // it may have run
		}
	}()
}

func (se *Session) callPath() string {
	return "rc/call?d=" + url.QueryEscape(se.deviceID) + "&s=" + url.QueryEscape(se.id)
}

// authHeader proves the call's session before its body is sent.
func (se *Session) authHeader() http.Header {
	ts, nonce := strconv.FormatInt(se.c.now().UnixMilli(), 10), randomID(16)
	return http.Header{authHeader: {ts + "." + nonce + "." + callMAC(se.keys.auth, se.deviceID, se.id, ts, nonce)}}
}
