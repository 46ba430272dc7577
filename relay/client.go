package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gorilla/websocket"
)

// Client keeps one socket to the relay for a device (a host serving
// through the relay, or gatehouse call). It reconnects on its own:
// at once, then after 1 s, doubling to 60 s, each wait spread over
// 75-125 %; the backoff starts over only after a socket stayed up 30 s or
// after a wake. Close 4000 (a newer socket replaced this one) waits at
// least 60 s; 4001 (revoked) signs out, if the token that socket used is
// still the current one. Close 1001 (going away: the relay node is
// draining) reconnects after a random wait of up to 5 s, backoff started
// over: behind a load balancer that lands on another node, and the devices
// of a node spread their reconnects instead of arriving at once.
//
// It pings every 25 s; a socket with nothing received within 10 s of a
// ping, or a frame not written within 10 s, is dead. Every 2 s it compares
// the wall clock with the monotonic one, which stands still while the
// computer sleeps: a jump over 10 s means it slept, and it reconnects at
// once. At most 512 frames wait for the socket; past that Send fails at
// once.
//
// The token is checked at each connect and every 12 hours while a socket
// stays up, and refreshed when fewer than 7 days are left: a host connected
// for weeks keeps a valid token for its next reconnect. A failed refresh
// is left for the next check; a 401 follows the sign-out rule.

// Client timing (ClientOptions can shorten them for tests).
const (
	pingEvery     = 25 * time.Second
	deadAfter     = 10 * time.Second
	wakeCheck     = 2 * time.Second
	wakeJump      = 10 * time.Second
	stableAfter   = 30 * time.Second
	backoffMax    = 60 * time.Second
	replacedPause = 60 * time.Second
	drainSpread   = 5 * time.Second
	refreshEvery  = 12 * time.Hour
	maxWaiting    = 512
	presenceWait  = 10 * time.Second
)

// ErrQueueFull is Send's answer when 512 frames already wait.
var ErrQueueFull = refusal.New(refusal.Busy, "relay send queue full", "Too much is waiting to go to the relay.")

// ClientOptions wire a client.
type ClientOptions struct {
	Identity *Identity
	Host     bool // this device hosts (serve --relay)
	// OnFrame gets each frame another device sent: its id and sealed body.
	OnFrame func(from, body string)
	// OnBinary gets each binary frame another device sent (protocol 2's
	// sealed frame, binary.go): its id and body, which the callee owns.
	OnBinary func(from string, body []byte)
	// OnPresence gets the account's device list on connect and each change.
	OnPresence func([]Device)
	// OnUndeliverable gets the relay's word that a frame did not arrive.
	OnUndeliverable func(to, ref, reason string)
	HTTP            *http.Client // nil: a client with a 30 s timeout
	Logger          *slog.Logger
	// Timing, for tests: zero means the spec's value.
	PingEvery, DeadAfter, WakeCheck, BackoffUnit, RefreshEvery time.Duration
	// Now is the clock the token's expiry is compared with; nil: time.Now.
	Now func() time.Time
}

// Client is a reconnecting relay socket.
type Client struct {
	o    ClientOptions
	out  chan []byte
	kick chan struct{}

	mu        sync.Mutex
	presence  []Device
	connected chan struct{} // closed when the current socket's first presence arrived
	lastRecv  atomic.Int64  // unix nanoseconds of the last frame received
	binary    atomic.Bool   // the relay's last presence said it forwards binary frames
}

// NewClient makes a client; Run connects it.
func NewClient(o ClientOptions) *Client {
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PingEvery == 0 {
		o.PingEvery = pingEvery
	}
	if o.DeadAfter == 0 {
		o.DeadAfter = deadAfter
	}
	if o.WakeCheck == 0 {
		o.WakeCheck = wakeCheck
	}
	if o.BackoffUnit == 0 {
		o.BackoffUnit = time.Second
	}
	if o.RefreshEvery == 0 {
		o.RefreshEvery = refreshEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Client{o: o, out: make(chan []byte, maxWaiting), kick: make(chan struct{}, 1), connected: make(chan struct{})}
}

// Send queues a sealed body for device to; ref is the request id it
// carries (events have none).
func (c *Client) Send(to, ref, body string) error {
	frame, _ := json.Marshal(SealedFrame{To: to, Body: body, Ref: ref})
	select {
	case c.out <- frame:
		return nil
	default:
		return ErrQueueFull
	}
}

// SendBinary queues a binary frame (binary.go) carrying body for device
// to; ref is the request id it carries (events have none). Send it only
// while Binary holds.
func (c *Client) SendBinary(to, ref string, body []byte) error {
	select {
	case c.out <- AppendBinary(make([]byte, 0, 3+len(to)+len(ref)+len(body)), "", to, ref, body):
		return nil
	default:
		return ErrQueueFull
	}
}

// Binary reports whether the relay forwards binary frames, as its last
// presence said (false before the first).
func (c *Client) Binary() bool { return c.binary.Load() }

// Presence is the account's device list as last received.
func (c *Client) Presence() []Device {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.presence
}

// WaitConnected connects at once if a backoff is being waited out (a user
// action) and waits up to 10 s for the socket's presence.
func (c *Client) WaitConnected(ctx context.Context) error {
	select {
	case c.kick <- struct{}{}:
	default:
	}
	c.mu.Lock()
	ch := c.connected
	c.mu.Unlock()
	t := time.NewTimer(presenceWait)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errNoPresence
	}
}

var errNoPresence = refusal.New(refusal.Retry, "no presence from the relay", "The relay did not answer in time.")

// backoff is the reconnect schedule.
type backoff struct {
	unit  time.Duration
	tries int
}

// next is the wait before the next attempt: none, then 1, 2, 4... up to 60
// units' worth of seconds, each spread over 75-125 %.
func (b *backoff) next() time.Duration {
	n := b.tries
	b.tries++
	if n == 0 {
		return 0
	}
	d := min(b.unit<<min(n-1, 6), b.unit*time.Duration(backoffMax/time.Second))
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

func (b *backoff) reset() { b.tries = 0 }

// Run keeps the socket up until ctx ends or the device is signed out
// (ErrSignedOut).
func (c *Client) Run(ctx context.Context) error {
	var b backoff
	b.unit = c.o.BackoffUnit
	for {
		wait := b.next()
		if !c.sleep(ctx, wait, true) {
			return ctx.Err()
		}
		if errors.Is(c.refresh(ctx), ErrSignedOut) {
			return ErrSignedOut
		}
		up, res := c.connectOnce(ctx)
		switch {
		case res.signedOut:
			return ErrSignedOut
		case ctx.Err() != nil:
			return ctx.Err()
		case up >= c.o.BackoffUnit*time.Duration(stableAfter/time.Second) || res.woke:
			b.reset()
		}
		if res.draining { // the node is going away: elsewhere, soon, not all at once
			b.reset()
			spread := c.o.BackoffUnit * time.Duration(drainSpread/time.Second)
			if !c.sleep(ctx, time.Duration(rand.Int64N(int64(spread))), true) {
				return ctx.Err()
			}
		}
		if res.replaced { // another socket of this device: do not fight it
			if !c.sleep(ctx, c.o.BackoffUnit*time.Duration(replacedPause/time.Second), false) {
				return ctx.Err()
			}
		}
	}
}

// refresh checks the token against the clock and refreshes it when fewer
// than 7 days are left (no network call otherwise).
func (c *Client) refresh(ctx context.Context) error {
	err := c.o.Identity.Refresh(ctx, c.o.HTTP, c.o.Now())
	if err != nil && !errors.Is(err, ErrSignedOut) {
		c.o.Logger.Debug("relay token refresh failed; trying again at the next check", "err", err)
	}
	return err
}

// sleep waits d, cut short by a kick (a user action) when kickable; false
// when ctx ended. The pause after a 4000 is not kickable: it is the least
// the client waits before it takes the socket back from a newer one.
func (c *Client) sleep(ctx context.Context, d time.Duration, kickable bool) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	kick := c.kick
	if !kickable {
		kick = nil
	}
	select {
	case <-t.C:
	case <-kick:
	case <-ctx.Done():
		return false
	}
	return true
}

type outcome struct {
	signedOut, replaced, woke, draining bool
}

// connectOnce runs one socket until it ends and says how long it was up.
func (c *Client) connectOnce(ctx context.Context) (time.Duration, outcome) {
	var res outcome
	token, err := c.o.Identity.Token()
	if err != nil {
		return 0, outcome{signedOut: true}
	}
	u, err := CheckURL(c.o.Identity.Profile().URL)
	if err != nil {
		return 0, res
	}
	wsURL := *u
	wsURL.Scheme = map[string]string{"https": "wss", "http": "ws", "wss": "wss", "ws": "ws"}[u.Scheme]
	wsURL.Path = strings.TrimSuffix(u.Path, "/") + "/v1/connect"
	wsURL.RawQuery = "host=0"
	if c.o.Host {
		wsURL.RawQuery = "host=1"
	}
	d := websocket.Dialer{HandshakeTimeout: 15 * time.Second, ReadBufferSize: 4 << 10, WriteBufferSize: 16 << 10}
	ws, resp, err := d.DialContext(ctx, wsURL.String(), http.Header{"Authorization": {"Bearer " + token}})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			if out, _ := c.o.Identity.SignOutIf(token); out {
				return 0, outcome{signedOut: true}
			}
		}
		c.o.Logger.Debug("relay connect failed", "err", err)
		return 0, res
	}
	ws.SetReadLimit(MaxFrame)
	select { // a kick made while connecting is spent
	case <-c.kick:
	default:
	}
	start := time.Now()
	c.lastRecv.Store(start.UnixNano())
	sockCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var woke atomic.Bool
	pings := make(chan struct{}, 1)
	wg.Go(func() { c.writeLoop(sockCtx, ws, pings, cancel) })
	wg.Go(func() { c.watch(sockCtx, ws, pings, cancel, &woke) })
	var revoked atomic.Bool
	wg.Go(func() { c.refreshWhileUp(sockCtx, ws, cancel, &revoked) })
	code := c.readLoop(ws)
	cancel()
	ws.Close()
	wg.Wait()
	if revoked.Load() {
		res.signedOut = true
	}
	c.mu.Lock()
	c.connected = make(chan struct{})
	c.mu.Unlock()
	res.woke = woke.Load()
	switch code {
	case CloseReplaced:
		res.replaced = true
	case websocket.CloseGoingAway:
		res.draining = true
	case CloseRevoked:
		if out, _ := c.o.Identity.SignOutIf(token); out {
			res.signedOut = true
		}
	}
	return time.Since(start), res
}

// refreshWhileUp checks the token every RefreshEvery while the socket is
// up; a refresh the relay refused with 401 (signed out) cuts the socket.
func (c *Client) refreshWhileUp(ctx context.Context, ws *websocket.Conn, dead context.CancelFunc, signedOut *atomic.Bool) {
	t := time.NewTicker(c.o.RefreshEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if errors.Is(c.refresh(ctx), ErrSignedOut) {
				signedOut.Store(true)
				dead()
				ws.Close()
				return
			}
		}
	}
}

// readLoop delivers frames until the socket ends, and returns its close
// code (0 when it just broke).
func (c *Client) readLoop(ws *websocket.Conn) int {
	for {
		typ, data, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			return 0
		}
		c.lastRecv.Store(time.Now().UnixNano())
		if typ == websocket.BinaryMessage {
			c.onBinary(data)
			continue
		}
		c.handle(data)
	}
}

// clientHandlers read the frames a relay sends, one handler per kind; a
// kind not listed (a newer relay's) is ignored.
var clientHandlers = map[Kind]func(*Client, []byte){
	KindSealed:        (*Client).onSealed,
	KindPresence:      (*Client).onPresence,
	KindUndeliverable: (*Client).onUndeliverable,
	KindError:         (*Client).onError,
}

func (c *Client) handle(data []byte) {
	if string(data) == "pong" {
		return
	}
	kind, err := FrameKind(data)
	if err != nil {
		return
	}
	if h := clientHandlers[kind]; h != nil {
		h(c, data)
	}
}

// onSealed hands a device's sealed body to the caller.
func (c *Client) onSealed(data []byte) {
	f, err := DecodeSealed(data)
	if err == nil && c.o.OnFrame != nil {
		c.o.OnFrame(f.From, f.Body)
	}
}

// onBinary hands a device's binary frame to the caller. The relay fills
// from; a frame without one did not come through the relay's forwarding.
func (c *Client) onBinary(data []byte) {
	f, err := ParseBinaryFrame(data)
	if err == nil && f.From != "" && c.o.OnBinary != nil {
		c.o.OnBinary(f.From, f.Body)
	}
}

// onPresence keeps the account's device list; the first one means
// connected.
func (c *Client) onPresence(data []byte) {
	f, err := DecodePresence(data)
	if err != nil {
		return
	}
	c.binary.Store(f.Frames >= FramesBinary)
	c.mu.Lock()
	c.presence = f.Devices
	select {
	case <-c.connected:
	default:
		close(c.connected)
	}
	c.mu.Unlock()
	if c.o.OnPresence != nil {
		c.o.OnPresence(f.Devices)
	}
}

// onUndeliverable tells the caller a frame it sent did not arrive.
func (c *Client) onUndeliverable(data []byte) {
	f, err := DecodeUndeliverable(data)
	if err == nil && c.o.OnUndeliverable != nil {
		c.o.OnUndeliverable(f.To, f.Ref, f.Reason)
	}
}

// onError logs the relay's refusal of a frame.
func (c *Client) onError(data []byte) {
	if f, err := DecodeError(data); err == nil {
		c.o.Logger.Warn("the relay refused a frame", "error", f.Error)
	}
}

// writeLoop writes queued frames and pings (the socket's one writer), each
// within the write deadline; a frame that cannot be written in time means
// the socket is dead.
func (c *Client) writeLoop(ctx context.Context, ws *websocket.Conn, pings <-chan struct{}, dead context.CancelFunc) {
	for {
		var frame []byte
		select {
		case <-ctx.Done():
			ws.Close() // ends the read loop too
			return
		case <-pings:
			frame = []byte("ping")
		case frame = <-c.out:
		}
		_ = ws.SetWriteDeadline(time.Now().Add(c.o.DeadAfter))
		typ := websocket.TextMessage
		if IsBinary(frame) {
			typ = websocket.BinaryMessage
		}
		if err := ws.WriteMessage(typ, frame); err != nil {
			dead()
			ws.Close()
			return
		}
	}
}

// watch pings, declares the socket dead when nothing arrives within
// DeadAfter of a ping, and watches for sleep: each cuts the socket so Run
// reconnects.
func (c *Client) watch(ctx context.Context, ws *websocket.Conn, pings chan<- struct{}, dead context.CancelFunc, woke *atomic.Bool) {
	ping := time.NewTicker(c.o.PingEvery)
	defer ping.Stop()
	wake := time.NewTicker(c.o.WakeCheck)
	defer wake.Stop()
	answer := time.NewTimer(time.Hour)
	answer.Stop()
	last := time.Now()
	var pinged int64 // the unanswered ping's time, 0 when none waits
	cut := func() {
		dead()
		ws.Close()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-wake.C:
			if slept(last, now) {
				woke.Store(true)
				cut()
				return
			}
			last = now
		case <-ping.C:
			if pinged != 0 {
				continue // the last ping's answer is still awaited
			}
			pinged = time.Now().UnixNano()
			select {
			case pings <- struct{}{}:
			default:
			}
			answer.Reset(c.o.DeadAfter)
		case <-answer.C:
			if c.lastRecv.Load() < pinged {
				cut()
				return
			}
			pinged = 0
		}
	}
}

// slept reports whether the computer slept between two readings of
// time.Now: the monotonic clock stands still in sleep and the wall clock
// does not, so wall minus monotonic is the time asleep. (Round(0) drops the
// monotonic reading.)
func slept(last, now time.Time) bool {
	return asleep(now.Round(0).Sub(last.Round(0)), now.Sub(last))
}

// asleep: the wall clock moved more than wakeJump further than the
// monotonic one.
func asleep(wall, mono time.Duration) bool { return wall-mono > wakeJump }
