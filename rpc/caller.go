package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Caller is the device side of the protocol, for any transport: it seals
// requests, matches replies to calls by id, and applies to replies and
// events the same replay check the host applies to requests (a stale or
// repeated reply fails its call at once). It asks for packed replies.

// Sentences a device shows for calls that did not complete.
var (
	// ErrNoAnswer: no reply within the call's time, or the connection
	// dropped after the request left. It may have run.
	ErrNoAnswer = refusal.New(refusal.Internal, "no answer", "That computer did not answer in time.")
	// ErrStaleReply: the reply failed the replay check.
	ErrStaleReply = refusal.New(refusal.Internal, "stale reply", "That computer's reply was stale or repeated. Try again.")
	// ErrUnconfirmed: a once-method whose reply was lost twice (or could
	// not be retried safely).
	ErrUnconfirmed = refusal.New(refusal.Internal, "unconfirmed", "The computer did not confirm this, so it may have gone through. Check before trying again.")
	// ErrOffline: the transport could not deliver the request; it did not run.
	ErrOffline = refusal.New(refusal.Retry, "offline", "That computer is not connected.")
	// ErrNotSent: the request could not be sent; it did not run.
	ErrNotSent = refusal.New(refusal.Retry, "not sent", "The request could not be sent. Try again.")
)

// RemoteError is a refusal the host answered with. Code is the host's code
// as sent (a newer host may send one this device does not know); the
// sentence and kind are the refusal it unwraps to, read with
// refusal.Sentence and refusal.KindOf like any other.
type RemoteError struct {
	Code Code
	said *refusal.Error
}

func remoteError(code Code, sentence string) *RemoteError {
	return &RemoteError{Code: code, said: refusal.New(kindOf(code), "refused by the computer", sentence)}
}

func (e *RemoteError) Error() string { return string(e.Code) + ": " + e.said.Sentence() }
func (e *RemoteError) Unwrap() error { return e.said }

// CallerOptions wire a caller to a transport.
type CallerOptions struct {
	// CheckHost, when set, runs before each request is sealed: an error
	// (the host shows a key other than the one pinned) fails the call with
	// that error, and nothing is sealed or sent.
	CheckHost func() error
	// Seal seals a request's plaintext for the host.
	Seal func(plain []byte) string
	// Open opens a sealed body from the host.
	Open func(body string) ([]byte, error)
	// Send hands a sealed request to the transport; ref is its id.
	Send func(ctx context.Context, ref, body string) error
	// OnEvent gets the host's events (checkout.changed).
	OnEvent func(Event)
	// Frames, when set, lets the caller speak protocol 2 on this transport.
	Frames *FrameOptions
	// Now, for tests; nil means time.Now.
	Now func() time.Time
}

// FrameOptions carry binary frames (protocol 2, frame.go) for a caller:
// it announces ProtocolBinary in every request while Carries says the
// transport carries them, reads binary replies (DeliverFrame), and sends
// its own requests as binary frames once the host has shown it speaks
// protocol 2: a host.hello that says so, or a binary reply that opened.
type FrameOptions struct {
	// Carries reports whether the transport carries binary frames now (a
	// relay that says it forwards them); nil means always.
	Carries func() bool
	// Seal seals a request's plaintext for the host as a binary frame.
	Seal func(plain []byte) ([]byte, error)
	// Open opens a binary frame from the host.
	Open func(frame []byte) ([]byte, error)
	// Send hands a binary request frame to the transport; ref is its id.
	Send func(ctx context.Context, ref string, frame []byte) error
}

// Caller makes calls to one host.
type Caller struct {
	o      CallerOptions
	guard  *ReplayGuard
	skew   atomic.Int64 // ms to add to this device's clock, from the host's last stale refusal
	binary atomic.Bool  // the host showed it speaks protocol 2

	mu       sync.Mutex
	pending  map[string]chan callResult
	features map[string]bool // from host.hello; nil until asked
}

type callResult struct {
	res Response
	err error
}

// NewCaller makes a caller.
func NewCaller(o CallerOptions) *Caller {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Caller{o: o, guard: NewReplayGuard(), pending: map[string]chan callResult{}}
}

// Call sends method with params and waits for the answer until ctx ends.
// A host refusal is a *RemoteError with the host's sentence. A request the
// host refused as stale (this device's clock is off from the host's, or the
// host started after the request was stamped) did not run: it is stamped
// again once with the host's clock, which the refusal carries.
func (c *Caller) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if params == nil {
		raw = []byte("{}")
	}
	if c.o.CheckHost != nil {
		if err := c.o.CheckHost(); err != nil {
			return nil, err
		}
	}
	res, err := c.send(ctx, method, raw)
	if err == nil && res.OK && method == "host.hello" {
		c.learn(res.Result)
	}
	if err == nil && !res.OK && res.Code == CodeNotRun && res.Error == ErrStale.Sentence() && res.TS > 0 {
		c.skew.Store(res.TS + 1 - c.o.Now().UnixMilli()) // past the host's clock: a stamp in the millisecond it started is refused
		res, err = c.send(ctx, method, raw)
	}
	if err != nil {
		return nil, err
	}
	if !res.OK {
		return nil, remoteError(res.Code, res.Error)
	}
	return res.Result, nil
}

// send seals one request, stamped with this device's clock as the host's
// last refusal corrected it, and waits for its reply.
func (c *Caller) send(ctx context.Context, method string, params json.RawMessage) (Response, error) {
	ts := c.o.Now().UnixMilli() + c.skew.Load()
	req := Request{Type: "req", ID: newNonce(), Method: method, Params: params, TS: ts, Nonce: newNonce(), Z: 1}
	if c.carries() {
		req.P = ProtocolBinary
	}
	plain, _ := json.Marshal(req)
	ch := make(chan callResult, 1)
	c.mu.Lock()
	c.pending[req.ID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
	}()
	if err := c.post(ctx, req.ID, plain); err != nil {
		return Response{}, ErrNotSent
	}
	select {
	case r := <-ch:
		return r.res, r.err
	case <-ctx.Done():
		return Response{}, ErrNoAnswer
	}
}

// carries reports whether this caller may speak protocol 2 now.
func (c *Caller) carries() bool {
	f := c.o.Frames
	return f != nil && (f.Carries == nil || f.Carries())
}

// post seals and sends one request: as a binary frame once the host has
// shown it reads them, else as protocol 1's text.
func (c *Caller) post(ctx context.Context, ref string, plain []byte) error {
	if c.binary.Load() && c.carries() {
		frame, err := c.o.Frames.Seal(plain)
		if err != nil {
			return err
		}
		return c.o.Frames.Send(ctx, ref, frame)
	}
	return c.o.Send(ctx, ref, c.o.Seal(plain))
}

// learn reads host.hello's protocol: a host that answers ProtocolBinary
// to this caller's announcement reads binary frames.
func (c *Caller) learn(hello json.RawMessage) {
	var h struct {
		Protocol int `json:"protocol"`
	}
	if json.Unmarshal(hello, &h) == nil && h.Protocol >= ProtocolBinary && c.carries() {
		c.binary.Store(true)
	}
}

// Protocol is the protocol this caller sends in now.
func (c *Caller) Protocol() int {
	if c.binary.Load() && c.carries() {
		return ProtocolBinary
	}
	return ProtocolText
}

// CallOnce calls a once-method (git.commit, git.push...) under a sendId.
// When the reply is lost it sends once more under the same id, if the host
// dedupes (its hello lists sendId): a copy that did run answers from the
// host's memory. If that is lost too, or the host cannot dedupe, it fails
// with ErrUnconfirmed rather than risk running it twice. params must be a
// JSON object; the sendId is added to it. wait bounds each attempt.
func (c *Caller) CallOnce(ctx context.Context, method string, params map[string]any, wait time.Duration) (json.RawMessage, error) {
	dedupes := c.supports(ctx, "sendId")
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if dedupes {
		p["sendId"] = newNonce()
	}
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, wait)
		out, err := c.Call(actx, method, p)
		cancel()
		if !errors.Is(err, ErrNoAnswer) {
			return out, err // an answer, a refusal, or it never left
		}
		if !dedupes || attempt == 1 || ctx.Err() != nil {
			return nil, ErrUnconfirmed
		}
	}
}

// supports asks host.hello once for the host's features.
func (c *Caller) supports(ctx context.Context, feature string) bool {
	c.mu.Lock()
	f := c.features
	c.mu.Unlock()
	if f == nil {
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		raw, err := c.Call(hctx, "host.hello", nil)
		var h Hello
		if err != nil || json.Unmarshal(raw, &h) != nil {
			return false
		}
		f = map[string]bool{}
		for _, x := range h.Features {
			f[x] = true
		}
		c.mu.Lock()
		c.features = f
		c.mu.Unlock()
	}
	return f[feature]
}

// Deliver takes a sealed body the host sent: a reply or an event. Anything
// that does not open, is malformed, or fails the replay check is dropped; a
// dropped reply fails its call at once.
func (c *Caller) Deliver(body string) {
	sealed, err := c.o.Open(body)
	if err != nil {
		return
	}
	c.deliver(sealed, false)
}

// DeliverFrame is Deliver for a binary frame (protocol 2). A reply that
// opens shows the host speaks protocol 2: the caller's next requests go
// in binary frames too.
func (c *Caller) DeliverFrame(frame []byte) {
	if c.o.Frames == nil {
		return
	}
	sealed, err := c.o.Frames.Open(frame)
	if err != nil {
		return
	}
	c.deliver(sealed, true)
}

// deliver reads an opened body: a reply or an event.
func (c *Caller) deliver(sealed []byte, binary bool) {
	plain, err := Unpack(sealed)
	if err != nil {
		return
	}
	var kind struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(plain, &kind) != nil {
		return
	}
	switch kind.Type {
	case "res":
		res, err := ParseResponse(plain)
		if err != nil || c.guard.Check(res.TS, res.Nonce) != nil {
			c.finish(kind.ID, callResult{err: ErrStaleReply})
			return
		}
		if binary && c.carries() {
			c.binary.Store(true)
		}
		c.finish(res.ID, callResult{res: res})
	case "event":
		ev, err := ParseEvent(plain)
		if err != nil || c.guard.Check(ev.TS, ev.Nonce) != nil || c.o.OnEvent == nil {
			return
		}
		c.o.OnEvent(ev)
	}
}

// Undeliverable is the transport's word that a request never reached the
// host (ref "": every pending call): they fail as not run.
func (c *Caller) Undeliverable(ref string) {
	c.mu.Lock()
	var ids []string
	for id := range c.pending {
		if ref == "" || id == ref {
			ids = append(ids, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.finish(id, callResult{err: ErrOffline})
	}
}

// Lost is the transport's word that a request left but its reply will not
// come (the connection broke after the request was sent): the call fails
// as unanswered, which a once-method may retry under its sendId.
func (c *Caller) Lost(ref string) { c.finish(ref, callResult{err: ErrNoAnswer}) }

func (c *Caller) finish(id string, r callResult) {
	c.mu.Lock()
	ch := c.pending[id]
	c.mu.Unlock()
	if ch == nil {
		return // no such call, or it already ended: a late or repeated reply
	}
	select {
	case ch <- r:
	default:
	}
}
