package rpc

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// Limits of the protocol, each the constant that enforces it.
const (
	// PageBudget bounds a reply's result JSON before packing.
	PageBudget = 180 << 10
	// MaxFrame bounds a sealed frame on the wire.
	MaxFrame = 256 << 10
	// MaxBatch bounds the calls in one batch.
	MaxBatch = 20
	// MaxIDs bounds the ids in one list (subscribe).
	MaxIDs = 500
)

// Device is who sent a request, as the transport identified it.
type Device struct {
	ID          string
	Fingerprint string // of the key the transport saw the device use
	// Desktop marks the person at the computer (gatehouse do --as desktop):
	// the desktop trust, and every method allowed.
	Desktop bool
	// present, when set, says whether the device is still where the
	// transport found it (relay presence, with the same key). It is asked
	// with the grant, at arrival and again when a queued request starts: a
	// device removed from the account meanwhile gets nothing run.
	present func() bool
	// frames: the transport carries binary frames (protocol 2) to this
	// device (WithFrames).
	frames bool
}

// WithFrames returns dev marked as reached by a transport that carries
// binary frames both ways (a LAN server, a relay that forwards them), so a
// request that announces ProtocolBinary may be answered with one.
func (d Device) WithFrames(ok bool) Device {
	d.frames = ok
	return d
}

// protocolOf is the protocol the host speaks to dev for req: binary only
// when both the device announced it and its transport carries it.
func (d Device) protocolOf(req Request) int {
	if d.frames && req.P >= ProtocolBinary {
		return ProtocolBinary
	}
	return ProtocolText
}

// Grants says what each device may do. trust.Store is one (relay devices,
// bound to their key fingerprints); LAN pairings and `gatehouse do` have
// their own.
type Grants interface {
	GrantFor(id, fingerprint string) trust.Grant
}

// HostOptions wire a host.
type HostOptions struct {
	Registry *Registry
	Targets  *Targets
	Grants   Grants
	// FullAccess reads the switch. It is read once when a request is
	// admitted, and the answer travels with the request.
	FullAccess func() bool
	// Log, when set, gets one line per request.
	Log *RequestLog
	// Events delivers an event to a device (the transport's job).
	Events  func(deviceID string, ev Event)
	Version string
	// Logger gets, once per request, the cause of every refusal (the error
	// chain, git's stderr) with the request's id: the device reads only the
	// sentence. Nil means slog.Default().
	Logger *slog.Logger
	// Remember, when set, records a worktree gatehouse made (kind, path,
	// parent id), or forgets one (path ""), in the state folder.
	Remember func(kind trust.TargetKind, id, path, parent string)
	// ClonesDir is where projects.clone puts a repository ("" refuses
	// clones).
	ClonesDir string
	// ProjectRuleOffForTest lets every method name a home or app-data
	// project below full, as only file reads refused it before, to show the
	// attack the rule in Call.Target stops.
	ProjectRuleOffForTest bool
}

// Host answers devices' requests: every transport (LAN, relay, do) ends here.
type Host struct {
	o      HostOptions
	lanes  laneSet
	once   *onceMemory
	guards sync.Map // device id -> *ReplayGuard
	subs   *subscriptions
	now    func() time.Time
	// orderedWait is how long a request may wait in the ordered lane
	// (orderedWait; tests shorten it).
	orderedWait time.Duration
	// started is when this host started: a request stamped before it was
	// recorded in an earlier run (the replay memory starts empty), so it is
	// refused, on every transport.
	started time.Time
	// beforeStartForTest accepts requests stamped before the host started,
	// as gatehouse did before, so a test shows a recording replayed across
	// a restart running, then refused.
	beforeStartForTest bool
}

// NewHost makes a host.
func NewHost(o HostOptions) *Host {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FullAccess == nil {
		o.FullAccess = func() bool { return false }
	}
	h := &Host{o: o, once: newOnceMemory(), now: time.Now, orderedWait: orderedWait, started: time.Now()}
	h.subs = newSubscriptions(h)
	return h
}

// Close stops the host's watchers.
func (h *Host) Close() { h.subs.close() }

// Targets is the set of served folders.
func (h *Host) Targets() *Targets { return h.o.Targets }

// Registry is the host's method table.
func (h *Host) Registry() *Registry { return h.o.Registry }

// AddWorktree serves a worktree gatehouse made for a device, as a target of
// its own.
func (h *Host) AddWorktree(path, parent string) (*Target, error) {
	t, err := h.o.Targets.Add(path, trust.Worktree, parent)
	if err != nil {
		return nil, err
	}
	if h.o.Remember != nil {
		h.o.Remember(trust.Worktree, t.ID, t.Root.Path(), parent)
	}
	return t, nil
}

// ClonesDir is where projects.clone puts repositories.
func (h *Host) ClonesDir() string { return h.o.ClonesDir }

// AddClone serves a repository cloned for a device, from now on and after
// a restart.
func (h *Host) AddClone(path string) (*Target, error) {
	t, err := h.o.Targets.Add(path, trust.Clone, "")
	if err != nil {
		return nil, err
	}
	if h.o.Remember != nil {
		h.o.Remember(trust.Clone, t.ID, t.Root.Path(), "")
	}
	return t, nil
}

// RemoveWorktree stops serving a worktree that was removed.
func (h *Host) RemoveWorktree(id string) {
	h.o.Targets.Remove(id)
	if h.o.Remember != nil {
		h.o.Remember(trust.Worktree, id, "", "")
	}
}

// Forget drops a device's subscriptions: it left presence, was unpaired, or
// was revoked. Its replay guard stays, so its old frames stay refused.
func (h *Host) Forget(device string) { h.subs.forget(device) }

// Subscribe renews a device's subscription to targets' changes.
func (h *Host) Subscribe(device string, targets []*Target) { h.subs.subscribe(device, targets) }

// Call is what a handler knows about the request it answers.
type Call struct {
	Trust  trust.Trust // the desktop, or a phone with the switch as it was at admission
	Grant  trust.Grant
	Device Device
	host   *Host
	id     string // the request's, for the log
	// protocol is what host.hello answers this call: ProtocolBinary to a
	// device that announced it on a transport that carries binary frames,
	// else ProtocolText.
	protocol int
}

// Target looks up a served target for this call.
func (c *Call) Target(id string) (*Target, error) {
	if !printable(id, 1, 64) {
		return nil, ErrNoTarget
	}
	t, ok := c.host.o.Targets.Get(id)
	if !ok {
		return nil, ErrNoTarget
	}
	// A project that is the home folder or above, or that touches
	// gatehouse's own state or config folder, is served only at full, for
	// every method: only file reads refused it, and git.stage then git.diff
	// showed lan.json (every device's secret) to a control phone, which then
	// called as the full device; git.discard deleted the request log and
	// the pairings, or rewrote the settings file.
	if err := t.Root.AllowedFor(c.Grant); err != nil && !c.host.o.ProjectRuleOffForTest {
		return nil, err
	}
	// A worktree holds what its project tracks: a worktree of a home folder
	// kept in git showed that home's files, and a copy of lan.json
	// committed there, to a control phone. It is refused as its project is.
	if t.Parent != "" && !c.host.o.ProjectRuleOffForTest {
		if p, ok := c.host.o.Targets.Get(t.Parent); ok {
			if err := p.Root.AllowedFor(c.Grant); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// Host is the host answering the call.
func (c *Call) Host() *Host { return c.host }

// common are the params the dispatcher reads itself before the handler: the
// target (for the sendId key) and the sendId.
type common struct {
	Target string `json:"target"`
	SendID string `json:"sendId"`
}

// HandleSealed is a transport's entry for protocol 1: it opens a sealed
// request frame with key and aadIn, checks it is fresh, answers it, and
// seals the response with aadOut. A frame that does not open, is packed,
// or is not a request gets no answer at all (an error, and ""): an answer
// would need a key or an id it may not have. A frame that opens but is
// stale or repeated is answered NOT_RUN ("… stale or repeated, so it did
// not run"), and one over the device's nonce memory BUSY: the sender
// proved the key, and its call fails at once instead of waiting out its
// time. HandleFrame is the same walk for a frame of either protocol.
func (h *Host) HandleSealed(ctx context.Context, dev Device, key Key, aadIn, aadOut []byte, body string) (string, error) {
	out, _, err := h.handleFrame(ctx, dev.WithFrames(false), key, aadIn, aadOut, Frame{Body: []byte(body)})
	return string(out.Body), err
}

// HandleFrame is HandleSealed for a frame of either protocol (frame.go),
// that also returns the request's id (the relay frame carrying the reply
// names it as its ref). The reply is a binary frame when the request came
// in one, or announced ProtocolBinary (Request.P) to a transport that
// carries binary frames to dev (Device.WithFrames); otherwise base64 text,
// as every protocol-1 client reads.
func (h *Host) HandleFrame(ctx context.Context, dev Device, key Key, aadIn, aadOut []byte, in Frame) (reply Frame, ref string, err error) {
	return h.handleFrame(ctx, dev, key, aadIn, aadOut, in)
}

func (h *Host) handleFrame(ctx context.Context, dev Device, key Key, aadIn, aadOut []byte, in Frame) (reply Frame, ref string, err error) {
	req, err := openRequest(key, aadIn, in)
	if err != nil {
		return Frame{}, "", err
	}
	if in.Binary {
		dev.frames = true // it came in one: this transport carries them
		req.P = max(req.P, ProtocolBinary)
	}
	res := h.fresh(ctx, dev, req)
	out, err := json.Marshal(res)
	if err != nil {
		return Frame{}, "", err
	}
	if req.Z == 1 {
		out = pack(out)
	}
	return sealAs(dev.protocolOf(req) == ProtocolBinary, key, out, aadOut), req.ID, nil
}

// openRequest is the walk's first step for every frame a device sends, a
// call (HandleFrame) or the LAN event stream's opener (OpenEvents): the
// frame is bounded, opens under key with aad, is not packed (requests
// never are), and parses as a request (parseRequest).
func openRequest(key Key, aad []byte, in Frame) (Request, error) {
	plain, err := openAny(key, in, aad)
	if err != nil {
		return Request{}, err
	}
	if len(plain) == 0 || plain[0] != '{' {
		return Request{}, errPacked
	}
	return parseRequest(plain)
}

// fresh is the replay step of a call: checkFresh, then the call is
// handled, or answered with the refusal.
func (h *Host) fresh(ctx context.Context, dev Device, req Request) Response {
	if err := h.checkFresh(dev, req); err != nil {
		return h.errorResponse(dev, req, err)
	}
	return h.Handle(ctx, dev, req)
}

// checkFresh is the replay step for every opened request, a call or an
// event stream's opener: refused when it is stale, repeated or one too many
// (counted in the request log, aggregated per device and minute), with
// ErrBusy or an error wrapping ErrStale. One guard per device holds the
// nonces of both. A request stamped before this host started is stale: the
// replay memory does not outlive a run, so without this a frame recorded
// before a restart (by the relay, or anyone on the path) would run again
// within its 60 s window. A device whose clock runs behind learns the
// host's from the refusal (Caller).
func (h *Host) checkFresh(dev Device, req Request) error {
	err := h.guard(dev.ID).Check(req.TS, req.Nonce)
	if err == nil && req.TS < h.started.UnixMilli() && !h.beforeStartForTest {
		err = errBeforeStart
	}
	switch err {
	case nil:
		return nil
	case errBusy:
		h.noteRefused(dev, RefusedBusy)
		return ErrBusy
	case errReplay:
		h.noteRefused(dev, RefusedReplay)
	default:
		h.noteRefused(dev, RefusedStale)
	}
	return fmt.Errorf("%w: %w", ErrStale, err)
}

// noteRefused counts a request refused before dispatch in the request log.
func (h *Host) noteRefused(dev Device, kind string) {
	if h.o.Log == nil {
		return
	}
	id := dev.ID
	if dev.Desktop {
		id = "desktop"
	}
	if err := h.o.Log.Refused(id, dev.Fingerprint, kind); err != nil {
		h.o.Logger.Error("request log", "err", err)
	}
}

// NoteRefused counts, in the request log, a request of dev that its
// transport refused before the host saw it (kind is RefusedStale,
// RefusedReplay or RefusedBusy): the LAN transport's replayed call headers.
func (h *Host) NoteRefused(dev Device, kind string) { h.noteRefused(dev, kind) }

func (h *Host) guard(device string) *ReplayGuard {
	g, _ := h.guards.LoadOrStore(device, NewReplayGuard())
	return g.(*ReplayGuard)
}

// Handle answers one opened, fresh request from dev.
func (h *Host) Handle(ctx context.Context, dev Device, req Request) Response {
	start := h.now()
	var p common
	if depth, _, _ := scanJSON(req.Params); depth <= MaxDepth {
		_ = json.Unmarshal(req.Params, &p) // a bad one is refused by the method's own decoder
	}
	result, err := h.dispatch(ctx, dev, req, p)
	res := h.respond(dev, req, result, err)
	h.logRequest(dev, req.Method, p.Target, res, h.now().Sub(start))
	return res
}

// dispatch runs the checks in order and the handler.
func (h *Host) dispatch(ctx context.Context, dev Device, req Request, p common) ([]byte, error) {
	m, ok := h.o.Registry.Lookup(req.Method)
	if !ok {
		return nil, ErrUnknownMethod
	}
	c := h.newCall(dev, req.ID)
	c.protocol = dev.protocolOf(req)
	if _, err := h.admit(c, m); err != nil {
		return nil, err
	}
	if p.SendID != "" && (!m.Once || !printable(p.SendID, 1, maxSendID)) {
		return nil, ErrBadParams
	}
	if m.Once && p.SendID != "" {
		return h.runOnce(ctx, c, m, req, onceKey{dev.ID, m.Name, p.Target, p.SendID})
	}
	return h.runInLane(ctx, c, m, req.Params)
}

// newCall starts a call from dev: the switch is read here, once per
// request, and travels with it (docs/policy.md); a batch's calls share it.
func (h *Host) newCall(dev Device, id string) *Call {
	c := &Call{Trust: trust.Desktop(), Device: dev, host: h, id: id}
	if !dev.Desktop {
		c.Trust = trust.Phone(h.o.FullAccess())
	}
	return c
}

// admit is the one admission step, for a single call and for each call in a
// batch: the device still present (relay devices), its grant read once and
// held against m's scope, and, for a method behind the switch, the switch
// the call carries. It runs at arrival and again when the request leaves
// its lane (the device may have been removed from the account, revoked or
// re-keyed meanwhile); the grant it returns is the one the handler runs
// with, so the grant checked is the grant used.
func (h *Host) admit(c *Call, m *Method) (trust.Grant, error) {
	dev := c.Device
	if dev.Desktop {
		return trust.Full, nil
	}
	if dev.present != nil && !dev.present() {
		return trust.None, ErrNotPresent
	}
	g := h.o.Grants.GrantFor(dev.ID, dev.Fingerprint)
	switch {
	case g == trust.None:
		return g, ErrNoGrant
	case !g.Allows(m.Scope):
		return g, accessError(m.Scope.String())
	case m.Switch != "" && !c.Trust.FullAccess():
		return g, switchError(m.Switch)
	}
	return g, nil
}

// runInLane waits for a slot in m's lane, re-checks access, and runs m.
func (h *Host) runInLane(ctx context.Context, c *Call, m *Method, params json.RawMessage) ([]byte, error) {
	release, ok := h.lanes.of(c.Device.ID).acquire(ctx, m, h.orderedWait)
	if !ok {
		return nil, ErrNotRun
	}
	defer release()
	return h.run(ctx, c, m, params)
}

// run admits the call again as it starts, and runs the handler with the
// grant it was admitted with, bounded by the caller's wait.
func (h *Host) run(ctx context.Context, c *Call, m *Method, params json.RawMessage) ([]byte, error) {
	g, err := h.admit(c, m)
	if err != nil {
		return nil, err
	}
	c.Grant = g
	ctx, cancel := context.WithTimeout(ctx, m.wait())
	defer cancel()
	result, err := m.run(ctx, c, params)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	if len(out) > PageBudget {
		return nil, ErrTooLarge
	}
	return out, nil
}

// runOnce runs a once-method keyed by its sendId: the first answer is
// remembered; a repeat answers it, waiting while the first runs; if the
// first fails, a waiter runs it itself. An expired queued copy whose sendId
// is known waits for the first's answer instead of NOT_RUN.
func (h *Host) runOnce(ctx context.Context, c *Call, m *Method, req Request, k onceKey) ([]byte, error) {
	for {
		e, first := h.once.begin(k)
		if !first {
			select {
			case <-e.done:
				if e.ok {
					return e.result, nil
				}
				continue // the first failed: run it ourselves
			case <-ctx.Done():
				return nil, ErrNotRun
			}
		}
		release, ok := h.lanes.of(c.Device.ID).acquire(ctx, m, h.orderedWait)
		if !ok {
			h.once.finish(k, e, nil, false)
			return nil, ErrNotRun
		}
		out, err := h.run(ctx, c, m, req.Params)
		release()
		h.once.finish(k, e, out, err == nil)
		return out, err
	}
}

func (h *Host) respond(dev Device, req Request, result []byte, err error) Response {
	if err != nil {
		return h.errorResponse(dev, req, err)
	}
	return Response{Type: "res", ID: req.ID, OK: true, Result: result, TS: h.now().UnixMilli(), Nonce: newNonce()}
}

// errorResponse is where every refused request's reply is built, so its
// cause is logged here, once: the device gets the sentence only.
func (h *Host) errorResponse(dev Device, req Request, err error) Response {
	code, sentence := codeOf(err)
	h.logRefusal(dev, req.ID, req.Method, code, err)
	return Response{Type: "res", ID: req.ID, OK: false, Error: sentence, Code: code, TS: h.now().UnixMilli(), Nonce: newNonce()}
}

// logRefusal writes a refusal's cause to the host's log with the request's
// id. A failure with no sentence of its own is an error; a refusal is a
// warning (serve shows warnings); a stale, repeated or over-budget frame is
// debug only, since a flood of them is counted per minute in the request log
// instead.
func (h *Host) logRefusal(dev Device, id, method string, code Code, err error) {
	level := slog.LevelWarn
	switch {
	case code == CodeInternal:
		level = slog.LevelError
	case errors.Is(err, ErrStale), errors.Is(err, ErrBusy):
		level = slog.LevelDebug
	}
	device := dev.ID
	if dev.Desktop {
		device = "desktop"
	}
	if !printable(method, 1, maxMethod) {
		method = "?" // a batch's inner method names are the device's, unchecked
	}
	h.o.Logger.Log(context.Background(), level, "request refused",
		"id", id, "device", device, "method", method, "code", string(code), "cause", err.Error())
}

func (h *Host) logRequest(dev Device, method, target string, res Response, took time.Duration) {
	code := "OK"
	if !res.OK {
		code = string(res.Code)
	}
	h.logLine(dev, method, target, code, took, 0)
}

// newNonce is 24 random bytes in base64url: 32 printable characters.
func newNonce() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("rpc: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Emit sends an event to one device through the transport.
func (h *Host) emit(deviceID, name string, data any) {
	sink := h.subs.eventSink()
	if sink == nil {
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return
	}
	sink(deviceID, Event{Type: "event", Name: name, Data: raw, TS: h.now().UnixMilli(), Nonce: newNonce()})
}
