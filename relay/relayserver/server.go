package relayserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/gatehouse/gatehouse/relay"
)

// HTTP limits.
const (
	maxSignInBody   = 256 << 10 // counted while streaming, chunked too
	maxAPIBody      = 16 << 10
	authPerIP       = 10  // sign-ins a minute from one address
	authOverall     = 300 // sign-ins a minute in all
	apiPerAccount   = 30  // authenticated calls a minute per account
	maxLimiterKeys  = 100_000
	maxDeviceName   = 64
	maxPlatformName = 32
	maxPushToken    = 4096
	dbWait          = 15 * time.Second  // one request's (or socket event's) database work
	tokenChecks     = 2 * apiPerAccount // a device's token checked against the database, a minute
)

// Sentences the relay answers with ({error}); never a cause.
const (
	msgSignIn       = "Sign in again."
	msgTooMany      = "Too many requests; try again in a minute."
	msgBadRequest   = "The request is not valid."
	msgKeyConflict  = "This device id is registered with a different key."
	msgDeviceLimit  = "This account already has 10 devices. Remove one to add this one."
	msgBadInvite    = "That invite code is unknown, used or expired."
	msgGitHub       = "GitHub did not accept this sign-in for this relay."
	msgNoProvider   = "This relay does not offer that sign-in."
	msgUnavailable  = "The relay could not do that just now; try again."
	msgNoDevice     = "No such device on this account."
	msgBadFrame     = "That frame is not valid."
	msgFrameRate    = "Too many frames; slow down."
	msgOrigin       = "The relay does not serve web pages."
	msgShuttingDown = "The relay is restarting."
	msgNoAddress    = "The relay could not tell where this request came from."
)

// Options configure a relay server.
type Options struct {
	Store  *Store
	Secret []byte // signs tokens; at least 32 bytes
	// GitHub, when set, offers GitHub sign-in beside invites.
	GitHub *GitHubApp
	Pusher Pusher // nil: notices are logged
	// NotifyWindow is how long notify frames are gathered (30 s).
	NotifyWindow time.Duration
	// ProxyHeader names a header (X-Forwarded-For) to which the proxies in
	// front of the relay append the peer each saw; it is read only when
	// the peer is loopback (the last proxy is on this machine). The
	// client's address is the ProxyHops'th element from the right of its
	// lines taken as one list; what is left of it the client wrote and is
	// never read, and a request without an address there is refused
	// (clientaddr.go).
	ProxyHeader string
	// ProxyHops is how many trusted proxies append to ProxyHeader (1 when
	// zero, at most 8). Each must be reachable only through the one before
	// it: a client that reaches an inner one directly writes the element
	// the outer one would have.
	ProxyHops int
	Logger    *slog.Logger
	// NowForTest replaces the clock (token times, rate limits).
	NowForTest func() time.Time
	// FrameLimitForTest replaces the per-socket frame rate (20/s, burst
	// 100), for the forwarding benchmark, which measures the relay rather
	// than its limit.
	FrameLimitForTest *FrameLimit
	// Node names this relay in its metrics and logs (default: the host's
	// name).
	Node string
	// Cluster, when set, joins this relay to other nodes over NATS; their
	// Store must be one database they share (PostgreSQL).
	Cluster *Cluster
}

// FrameLimit is a token bucket's rate (a second) and burst.
type FrameLimit struct{ Rate, Burst float64 }

// Server is a relay: sign-in, devices, tokens, presence and forwarding.
type Server struct {
	o        Options
	st       *Store
	sign     *signer
	hub      hub
	node     string
	shared   bool // limits are counted in the database, for every node
	m        *metrics
	log      *slog.Logger
	mux      *http.ServeMux
	upgrader websocket.Upgrader

	authIP, authAll, api, apiOwn, checks *keyedLimiter

	frames FrameLimit

	// firstLineForTest reads ProxyHeader's first line only, the rule
	// before clientaddr.go, so a test shows the forged address it counted.
	firstLineForTest bool
	noAddrLog        *keyedLimiter // one warning a minute about a proxy header without an address

	mu       sync.Mutex
	notify   map[string]*coalescer
	presents map[string]bool // accounts whose presence is being sent; true: send again after
	closing  bool
}

// New makes a relay server.
func New(o Options) (*Server, error) {
	sign, err := newSigner(o.Secret)
	if err != nil {
		return nil, err
	}
	if o.Store == nil {
		return nil, errors.New("relay: no store")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Pusher == nil {
		o.Pusher = LogPusher{o.Logger}
	}
	if o.NowForTest != nil {
		o.Store.now = o.NowForTest
	}
	if o.NotifyWindow == 0 {
		o.NotifyWindow = 30 * time.Second
	}
	if o.Node == "" {
		o.Node = nodeName()
	}
	if o.ProxyHops == 0 {
		o.ProxyHops = 1
	}
	if o.ProxyHops < 1 || o.ProxyHops > maxProxyHops {
		return nil, fmt.Errorf("relay: %d trusted proxy hops; 1 to %d are allowed", o.ProxyHops, maxProxyHops)
	}
	s := &Server{o: o, st: o.Store, sign: sign, node: o.Node, m: newMetrics(o.Node), log: o.Logger.With("node", o.Node),
		authIP: perMinute(authPerIP, maxLimiterKeys), authAll: perMinute(authOverall, 1),
		api: perMinute(apiPerAccount, maxLimiterKeys), apiOwn: perMinute(apiPerAccount, maxLimiterKeys),
		checks: perMinute(tokenChecks, maxLimiterKeys), noAddrLog: perMinute(1, 1),
		notify: map[string]*coalescer{}, presents: map[string]bool{}}
	s.hub = newLocalHub()
	if o.Cluster != nil {
		if s.hub, err = newNATSHub(s, *o.Cluster); err != nil {
			return nil, err
		}
		s.shared = true
	}
	s.frames = FrameLimit{frameRate, frameBurst}
	if o.FrameLimitForTest != nil {
		s.frames = *o.FrameLimitForTest
	}
	s.upgrader = websocket.Upgrader{
		ReadBufferSize:  readBuffer,
		WriteBufferPool: &sync.Pool{},
		WriteBufferSize: 16 << 10,
		CheckOrigin:     notFromAPage,
		// The answer to the upgrade is bounded too; after it the read
		// loop's deadline (idleWait) holds from the first frame on.
		HandshakeTimeout: handshakeTimeout,
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /v1/config", s.handleConfig)
	s.mux.HandleFunc("POST /v1/auth/{provider}", s.handleAuth)
	s.mux.HandleFunc("GET /v1/devices", s.authedOwn(s.handleDevices))
	s.mux.HandleFunc("DELETE /v1/devices/{id}", s.authedOwn(s.handleDeleteDevice))
	s.mux.HandleFunc("DELETE /v1/account", s.authedOwn(s.handleDeleteAccount))
	s.mux.HandleFunc("POST /v1/token", s.authedOwn(s.handleToken))
	s.mux.HandleFunc("POST /v1/push/devices", s.authed(s.handlePush))
	s.mux.HandleFunc("GET /v1/connect", s.authedOwn(s.handleConnect))
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	return s, nil
}

func (s *Server) now() time.Time {
	if s.o.NowForTest != nil {
		return s.o.NowForTest()
	}
	return time.Now()
}

// ServeHTTP serves the relay's API.
//
// Every request's database work has dbWait: a database that hangs (stopped,
// not down) would otherwise hold each request and its connection until it
// woke (found by the red team), past the 30 s the relay promises an answer
// in. A WebSocket's handler returns once the socket is up; the socket's
// own work has its own deadlines.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), dbWait)
	defer cancel()
	s.mux.ServeHTTP(w, r.WithContext(ctx))
}

// dbCtx is the deadline of database work a socket causes outside a
// request (presence, last seen, the host switch).
func dbCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), dbWait)
}

// Shutdown drains the relay: from here on it refuses new sockets and
// /readyz fails (a load balancer stops sending it devices), every socket is
// closed with "going away", which a client takes as "reconnect after a
// short random wait" (relay.Client: spread over drainSpread, so that the
// devices of a node do not all land on the others in one instant), and the
// node leaves the cluster, whose other nodes forget its sockets at once.
// The caller stops the HTTP server (http.Server.Shutdown).
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.closing = true
	for _, c := range s.notify {
		c.stop()
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range s.hub.all() {
		wg.Go(func() { c.close(websocket.CloseGoingAway, msgShuttingDown) })
	}
	wg.Wait()
	s.hub.close()
}

// recheck closes every socket here whose device is no longer registered
// with the gen its token had: the wall behind the cluster's close messages,
// which a node cut off from NATS may have missed.
func (s *Server) recheck() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range s.hub.all() {
		gen, ok, err := s.st.Gen(ctx, c.account, c.device)
		if err != nil {
			s.log.Warn("checking sockets against the database", "err", err)
			return
		}
		if !ok || gen != c.gen {
			c.close(relay.CloseRevoked, "device revoked")
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

var ok = map[string]bool{"ok": true}

func (s *Server) handleConfig(w http.ResponseWriter, _ *http.Request) {
	cfg := map[string]any{"providers": []string{"invite"}}
	if s.o.GitHub != nil {
		cfg["providers"] = []string{"invite", "github"}
		cfg["github"] = map[string]string{"clientId": s.o.GitHub.ClientID}
	}
	writeJSON(w, http.StatusOK, cfg)
}

// handleHealth answers whether the process serves at all (liveness); the
// database is readiness's business.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ok)
}

// handleReady answers whether this node should be sent devices: not while
// it drains, nor while its database or (in a cluster) NATS is unreachable.
// The cause is logged, never answered.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	err := s.hub.ready()
	if err == nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		err = s.st.Ping(ctx)
		cancel()
	}
	switch {
	case closing:
		fail(w, http.StatusServiceUnavailable, msgShuttingDown)
	case err != nil:
		s.log.Warn("not ready", "err", err)
		fail(w, http.StatusServiceUnavailable, msgUnavailable)
	default:
		writeJSON(w, http.StatusOK, ok)
	}
}

// signIn is the body of POST /v1/auth/{provider}.
type signIn struct {
	Device      relay.Device `json:"device"`
	Invite      string       `json:"invite,omitempty"`
	GitHubToken string       `json:"githubToken,omitempty"`
}

func (s *Server) handleAuth(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	// Per address first. The overall budget bounds only what each sign-in
	// costs outside the relay (a call to GitHub's API) and is charged only
	// for requests their own address allowed. An invite is checked against
	// its hash in the database, so it is bounded per address alone: a
	// flood from many addresses, each within its own budget, must not lock
	// out a person holding a valid code (found by the red team: 30
	// addresses spent the overall 300 a minute).
	provider := providerLabel(r.PathValue("provider"))
	addr, err := s.clientAddr(r)
	if err != nil {
		s.m.authFailures.WithLabelValues(provider, "no_address").Inc()
		if s.noAddrLog.allow("", now) {
			s.log.Warn("refusing a sign-in: check the proxy header and hops against the proxies in front",
				"err", err, "header", s.o.ProxyHeader, "hops", s.o.ProxyHops)
		}
		fail(w, http.StatusBadRequest, msgNoAddress)
		return
	}
	if !s.allow(w, r.Context(), s.authIP, "auth-ip", authPerIP, addr, now) {
		return
	}
	var in signIn
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSignInBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || !validDevice(in.Device) {
		s.m.authFailures.WithLabelValues(provider, "bad_request").Inc()
		fail(w, http.StatusBadRequest, msgBadRequest)
		return
	}
	var acct relay.Account
	var gen string
	switch {
	case provider == "invite" && in.Invite != "":
		acct, gen, err = s.st.RegisterInvite(r.Context(), in.Invite, in.Device)
	case provider == "github" && s.o.GitHub != nil && in.GitHubToken != "":
		if !s.allow(w, r.Context(), s.authAll, "auth-all", authOverall, "", now) {
			return
		}
		if acct, err = s.o.GitHub.check(r.Context(), in.GitHubToken); err == nil {
			gen, err = s.st.Register(r.Context(), acct, in.Device)
		}
	default:
		s.m.authFailures.WithLabelValues(provider, "no_provider").Inc()
		fail(w, http.StatusBadRequest, msgNoProvider)
		return
	}
	if status, msg, reason := signInRefusal(err); status != 0 {
		s.m.authFailures.WithLabelValues(provider, reason).Inc()
		if status >= 500 {
			s.log.Warn("sign-in failed", "provider", provider, "err", err)
		}
		fail(w, status, msg)
		return
	}
	s.log.Info("device signed in", "account", acct.ID, "device", in.Device.ID, "provider", provider)
	writeJSON(w, http.StatusOK, map[string]any{"token": s.token(acct.ID, in.Device.ID, gen), "account": acct})
	s.accountChanged(acct.ID)
}

// providerLabel is the provider a metric names: the path's value is the
// client's, and each new label value is a series the relay keeps for good.
func providerLabel(unsafeProvider string) string {
	if unsafeProvider == "invite" || unsafeProvider == "github" {
		return unsafeProvider
	}
	return "none"
}

// signInRefusal maps a sign-in error to its answer (status 0: none).
func signInRefusal(err error) (status int, msg, reason string) {
	switch {
	case err == nil:
		return 0, "", ""
	case errors.Is(err, ErrBadInvite):
		return http.StatusUnauthorized, msgBadInvite, "refused"
	case errors.Is(err, errGitHubRefused):
		return http.StatusUnauthorized, msgGitHub, "refused"
	case errors.Is(err, ErrKeyConflict):
		return http.StatusConflict, msgKeyConflict, "key_conflict"
	case errors.Is(err, ErrTooManyDevices):
		return http.StatusForbidden, msgDeviceLimit, "device_limit"
	}
	return http.StatusBadGateway, msgUnavailable, "unavailable"
}

func (s *Server) token(account, device, gen string) string {
	now := s.now()
	return s.sign.sign(relay.Claims{Account: account, Device: device, Issued: now.Unix(), Expires: now.Add(relay.TokenLife).Unix(), Gen: gen})
}

// validDevice checks what a device says of itself.
func validDevice(d relay.Device) bool {
	key, err := base64.StdEncoding.DecodeString(d.PublicKey)
	if err != nil || len(key) != 32 || !relay.ValidDeviceID(d.ID) {
		return false
	}
	if n := utf8.RuneCountInString(d.Name); n == 0 || n > maxDeviceName || !utf8.ValidString(d.Name) {
		return false
	}
	for _, r := range d.Name {
		if unicode.IsControl(r) {
			return false
		}
	}
	if d.Platform == "" || len(d.Platform) > maxPlatformName {
		return false
	}
	for i := 0; i < len(d.Platform); i++ {
		if c := d.Platform[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// authed checks the bearer token (its MAC, expiry, and that its device is
// still registered with the same gen) and the account's call rate.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, relay.Claims)) http.HandlerFunc {
	return s.authedBy(false, h)
}

// authedOwn is authed with the caller's own budget (30 a minute per
// device) instead of the account's: listing the devices, removing one,
// deleting the account, refreshing the token and connecting must not be
// held up by another device of the account spending the account's calls
// (found by the red teams: a stolen phone calling GET /v1/devices in a loop
// kept its owner's DELETE at 429, then the owner's list, which is how the
// owner finds the id to remove).
func (s *Server) authedOwn(h func(http.ResponseWriter, *http.Request, relay.Claims)) http.HandlerFunc {
	return s.authedBy(true, h)
}

func (s *Server) authedBy(own bool, h func(http.ResponseWriter, *http.Request, relay.Claims)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		c, err := s.sign.verify(token, s.now())
		if !found || err != nil {
			s.m.authFailures.WithLabelValues("token", "invalid").Inc()
			fail(w, http.StatusUnauthorized, msgSignIn)
			return
		}
		// A validly signed token costs a database read; a device's reads are
		// bounded here first, so a removed device's token (which stays
		// signed) cannot turn into unbounded queries (red team: 2,700 a
		// second from one thread).
		if !s.checks.allow(c.Account+"/"+c.Device, s.now()) {
			s.m.rateLimited.WithLabelValues("api").Inc()
			fail(w, http.StatusTooManyRequests, msgTooMany)
			return
		}
		gen, ok, err := s.st.Gen(r.Context(), c.Account, c.Device)
		if err != nil { // never "sign in again" for a database that did not answer
			s.log.Warn("checking a token against the database", "err", err)
			fail(w, http.StatusServiceUnavailable, msgUnavailable)
			return
		}
		if !ok || gen != c.Gen {
			s.m.authFailures.WithLabelValues("token", "revoked").Inc()
			fail(w, http.StatusUnauthorized, msgSignIn)
			return
		}
		limiter, what, key := s.api, "api", c.Account
		if own {
			limiter, what, key = s.apiOwn, "api-own", c.Account+"/"+c.Device
		}
		if !s.allow(w, r.Context(), limiter, what, apiPerAccount, key, s.now()) {
			return
		}
		h(w, r, c)
	}
}

// devices lists an account's devices with who is online.
func (s *Server) devices(ctx context.Context, account string) ([]relay.Device, error) {
	list, err := s.st.Devices(ctx, account)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Online = s.hub.online(account, list[i].ID)
	}
	return list, nil
}

func (s *Server) handleDevices(w http.ResponseWriter, r *http.Request, c relay.Claims) {
	list, err := s.devices(r.Context(), c.Account)
	if err != nil {
		fail(w, http.StatusInternalServerError, msgUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": list})
}

func (s *Server) handleDeleteDevice(w http.ResponseWriter, r *http.Request, c relay.Claims) {
	id := r.PathValue("id")
	if !relay.ValidDeviceID(id) { // no such id can be registered; never a database error
		fail(w, http.StatusNotFound, msgNoDevice)
		return
	}
	found, err := s.st.DeleteDevice(r.Context(), c.Account, id)
	switch {
	case err != nil:
		s.log.Warn("removing a device", "err", err)
		fail(w, http.StatusInternalServerError, msgUnavailable)
		return
	case !found:
		fail(w, http.StatusNotFound, msgNoDevice)
		return
	}
	s.hub.closeDevice(c.Account, id, relay.CloseRevoked, "device revoked")
	s.log.Info("device revoked", "account", c.Account, "device", id, "by", c.Device)
	writeJSON(w, http.StatusOK, ok)
	s.accountChanged(c.Account)
}

func (s *Server) handleDeleteAccount(w http.ResponseWriter, r *http.Request, c relay.Claims) {
	list, err := s.st.Devices(r.Context(), c.Account)
	if err == nil {
		err = s.st.DeleteAccount(r.Context(), c.Account)
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, msgUnavailable)
		return
	}
	for _, d := range list { // on every node
		s.hub.closeDevice(c.Account, d.ID, relay.CloseRevoked, "signed out")
	}
	for _, sock := range s.hub.sockets(c.Account) { // one that signed in meanwhile is refused at its next call
		sock.close(relay.CloseRevoked, "signed out")
	}
	s.mu.Lock()
	if n := s.notify[c.Account]; n != nil {
		n.stop()
		delete(s.notify, c.Account)
	}
	s.mu.Unlock()
	s.log.Info("account deleted", "account", c.Account)
	writeJSON(w, http.StatusOK, ok)
}

func (s *Server) handleToken(w http.ResponseWriter, _ *http.Request, c relay.Claims) {
	writeJSON(w, http.StatusOK, map[string]string{"token": s.token(c.Account, c.Device, c.Gen)})
}

func (s *Server) handlePush(w http.ResponseWriter, r *http.Request, c relay.Claims) {
	var in struct {
		Platform string `json:"platform"`
		Token    string `json:"token"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || (in.Platform != "ios" && in.Platform != "android") ||
		in.Token == "" || len(in.Token) > maxPushToken || strings.ContainsFunc(in.Token, unicode.IsControl) {
		fail(w, http.StatusBadRequest, msgBadRequest)
		return
	}
	if err := s.st.AddPushToken(r.Context(), c.Account, c.Device, in.Platform, in.Token); err != nil {
		fail(w, http.StatusInternalServerError, msgUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, ok)
}

func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request, c relay.Claims) {
	if !notFromAPage(r) {
		fail(w, http.StatusForbidden, msgOrigin)
		return
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		fail(w, http.StatusServiceUnavailable, msgShuttingDown)
		return
	}
	host := r.URL.Query().Get("host") == "1"
	ws, err := s.upgrader.Upgrade(readAhead(w), r, nil)
	if err != nil {
		return // the upgrader answered
	}
	ws.SetReadLimit(relay.MaxFrame)
	sock := &conn{s: s, ws: ws, account: c.Account, device: c.Device, gen: c.Gen, id: randomText(10)}
	if err := s.st.SetHost(r.Context(), c.Account, c.Device, host); err != nil {
		s.log.Error("set host", "err", err)
	} else {
		s.hub.changed(c.Account) // the other nodes' presence shows the host flag
	}
	s.m.connections.Inc()
	if old := s.hub.join(sock); old != nil {
		old.close(relay.CloseReplaced, "replaced by a newer socket")
	}
	s.log.Debug("device connected", "account", c.Account, "device", c.Device, "host", host)
	go sock.readLoop() // the handler returns: net/http's per-request state is freed
	s.presenceSoon(c.Account)
}

// notFromAPage reports that a request comes from no web page: the relay
// serves no page (serving one would let its operator change the code that
// holds the keys), so a request with an Origin is a page of some site
// reaching in with a person's cookies or token.
func notFromAPage(r *http.Request) bool { return r.Header.Get("Origin") == "" }

// leave is called once per socket when its read loop ends.
func (s *Server) leave(c *conn) {
	s.m.connections.Dec()
	if s.hub.leave(c) {
		ctx, cancel := dbCtx()
		_ = s.st.Seen(ctx, c.account, c.device)
		cancel()
		s.presenceSoon(c.account)
	}
}

// accountChanged sends the account's presence here and has every other
// node send it to its own sockets of the account.
func (s *Server) accountChanged(account string) {
	s.presenceSoon(account)
	s.hub.changed(account)
}

// allow checks a per-minute limit: here first (cheap, and it bounds what
// one node asks of the database), then, when several nodes share the
// accounts, in the database, so that the limit holds across nodes. It
// answers the refusal itself and reports whether to go on.
func (s *Server) allow(w http.ResponseWriter, ctx context.Context, l *keyedLimiter, what string, limit int, key string, now time.Time) bool {
	metric := strings.SplitN(what, "-", 2)[0]
	if !l.allow(key, now) {
		s.m.rateLimited.WithLabelValues(metric).Inc()
		fail(w, http.StatusTooManyRequests, msgTooMany)
		return false
	}
	if !s.shared {
		return true
	}
	// The key is hashed: the database's key is bounded, whatever a
	// limiter counts by.
	sum := sha256.Sum256([]byte(key))
	allowed, err := s.st.Hit(ctx, what+":"+hex.EncodeToString(sum[:16]), limit, time.Minute)
	switch {
	case err != nil:
		s.log.Warn("counting a shared limit", "err", err)
		fail(w, http.StatusServiceUnavailable, msgUnavailable)
		return false
	case !allowed:
		s.m.rateLimited.WithLabelValues(metric).Inc()
		fail(w, http.StatusTooManyRequests, msgTooMany)
		return false
	}
	return true
}

// presenceSoon sends the account's presence from one goroutine per
// account: changes that arrive while it runs make it run once more, so
// frames never overtake each other and the last one sent is current.
func (s *Server) presenceSoon(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, running := s.presents[account]; running {
		s.presents[account] = true
		return
	}
	s.presents[account] = false
	go func() {
		for {
			s.presence(account)
			s.mu.Lock()
			if !s.presents[account] {
				delete(s.presents, account)
				s.mu.Unlock()
				return
			}
			s.presents[account] = false
			s.mu.Unlock()
		}
	}()
}

// presence sends every socket of the account the device list.
func (s *Server) presence(account string) {
	ctx, cancel := dbCtx()
	defer cancel()
	list, err := s.devices(ctx, account)
	if err != nil {
		s.log.Error("presence", "err", err)
		return
	}
	frame := relay.NewPresence(list)
	for _, c := range s.hub.sockets(account) {
		c.sendJSON(frame)
	}
}

// handleFrame routes one frame a device sent. It reads the routing fields
// only; the body is copied through as it came.
func (s *Server) handleFrame(c *conn, b []byte) {
	if string(b) == "ping" {
		s.m.frames.WithLabelValues("ping").Inc()
		if c.rate.allow(s.now(), s.frames.Rate, s.frames.Burst) {
			p := getFrame()
			*p = append(*p, "pong"...)
			c.send(p)
		}
		return
	}
	f, err := relay.ParseDeviceFrame(b)
	if !c.rate.allow(s.now(), s.frames.Rate, s.frames.Burst) {
		s.m.rateLimited.WithLabelValues("frames").Inc()
		if err == nil && f.To != "" && relay.ValidDeviceID(f.To) && relay.ValidRef(f.Ref) {
			s.m.undeliverble.WithLabelValues("rate").Inc()
			c.sendJSON(relay.NewUndeliverable(f.To, f.Ref, relay.ReasonRate))
		} else {
			c.sendJSON(relay.NewError(msgFrameRate))
		}
		return
	}
	if err != nil {
		s.m.dropped.WithLabelValues("bad_frame").Inc()
		c.sendJSON(relay.NewError(msgBadFrame))
		return
	}
	if f.Kind != relay.KindSealed {
		s.m.frames.WithLabelValues("control").Inc()
		s.control(c, f.Kind, b)
		return
	}
	if !relay.ValidDeviceID(f.To) || !relay.ValidRef(f.Ref) || f.Body == nil || f.To == c.device {
		s.m.dropped.WithLabelValues("bad_frame").Inc()
		c.sendJSON(relay.NewError(msgBadFrame))
		return
	}
	s.m.frames.WithLabelValues("forwarded").Inc()
	s.forward(c, f.To, f.Ref, func(out []byte) []byte { return relay.AppendForward(out, c.device, f.To, f.Body) })
}

// handleBinary routes one binary frame a device sent (relay/binary.go): the
// same rate, and the same checks of to and ref, as a text frame, a from
// left empty for the relay to fill, and the body copied through unread.
// A binary frame is never a control frame.
func (s *Server) handleBinary(c *conn, b []byte) {
	f, err := relay.ParseBinaryFrame(b)
	valid := err == nil && f.From == "" && relay.ValidDeviceID(f.To) && relay.ValidRef(f.Ref) && f.To != c.device
	if !c.rate.allow(s.now(), s.frames.Rate, s.frames.Burst) {
		s.m.rateLimited.WithLabelValues("frames").Inc()
		if valid {
			s.m.undeliverble.WithLabelValues("rate").Inc()
			c.sendJSON(relay.NewUndeliverable(f.To, f.Ref, relay.ReasonRate))
		} else {
			c.sendJSON(relay.NewError(msgFrameRate))
		}
		return
	}
	if !valid {
		s.m.dropped.WithLabelValues("bad_frame").Inc()
		c.sendJSON(relay.NewError(msgBadFrame))
		return
	}
	s.m.frames.WithLabelValues("forwarded").Inc()
	s.forward(c, f.To, f.Ref, func(out []byte) []byte { return relay.AppendBinary(out, c.device, f.To, "", f.Body) })
}

// forward delivers a frame from c to device to (carrying ref), which build
// writes into a pooled buffer, or tells c it could not.
func (s *Server) forward(c *conn, to, ref string, build func([]byte) []byte) {
	if !s.hub.online(c.account, to) {
		s.m.undeliverble.WithLabelValues("offline").Inc()
		c.sendJSON(relay.NewUndeliverable(to, ref, relay.ReasonOffline))
		return
	}
	out := getFrame()
	*out = build(*out)
	switch s.hub.deliver(c, to, ref, out) {
	case offline: // gone since
		s.m.undeliverble.WithLabelValues("offline").Inc()
		c.sendJSON(relay.NewUndeliverable(to, ref, relay.ReasonOffline))
	case queueFull: // the target reads too slowly
		s.m.undeliverble.WithLabelValues("rate").Inc()
		c.sendJSON(relay.NewUndeliverable(to, ref, relay.ReasonRate))
	}
}

// controlHandlers read the control frames a device may send, one handler
// per kind; each decodes its (small, at most relay.MaxControl) frame fully
// and checks its bounds. Any other kind is refused.
var controlHandlers = map[relay.Kind]func(*Server, *conn, []byte){
	relay.KindHost:   (*Server).onHost,
	relay.KindNotify: (*Server).onNotify,
}

// control hands a control frame to its kind's handler.
func (s *Server) control(c *conn, kind relay.Kind, b []byte) {
	h := controlHandlers[kind]
	if h == nil {
		c.sendJSON(relay.NewError(msgBadFrame))
		return
	}
	h(s, c, b)
}

// onHost records whether the socket serves, and tells the account.
func (s *Server) onHost(c *conn, b []byte) {
	f, err := relay.DecodeHost(b)
	if err != nil {
		c.sendJSON(relay.NewError(msgBadFrame))
		return
	}
	ctx, cancel := dbCtx()
	defer cancel()
	if err := s.st.SetHost(ctx, c.account, c.device, *f.Enabled); err == nil {
		s.accountChanged(c.account)
	}
}

// onNotify counts a push notice for the account's phones.
func (s *Server) onNotify(c *conn, b []byte) {
	f, err := relay.DecodeNotify(b)
	if err != nil {
		c.sendJSON(relay.NewError(msgBadFrame))
		return
	}
	s.coalescer(c.account).add(f.Body.Kind, f.Body.Count, s.now())
}

func (s *Server) coalescer(account string) *coalescer {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notify[account]
	if n == nil {
		n = &coalescer{window: s.o.NotifyWindow, fire: func(w, f int) { s.push(account, w, f) }}
		s.notify[account] = n
	}
	return n
}

// push sends one generic notice to every phone of the account.
func (s *Server) push(account string, waiting, finished int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tokens, err := s.st.PushTokens(ctx, account)
	if err != nil {
		s.log.Error("push tokens", "err", err)
		return
	}
	title, msg := noticeText(waiting, finished)
	for _, t := range tokens {
		n := Notice{Platform: t.Platform, Token: t.Token, Title: title, Message: msg, Waiting: waiting, Finished: finished}
		if err := s.o.Pusher.Push(ctx, n); err != nil {
			s.log.Warn("push failed", "platform", t.Platform, "err", err)
		}
	}
}
