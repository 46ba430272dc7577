// Package lan serves devices on a Tailscale or private LAN address: the
// phone page, pairing by QR code, and sealed calls and events, through the
// same rpc host as every other transport.
//
// It listens on exactly one address of those kinds (or loopback), never a
// public one or all interfaces. Every body except the static page is sealed
// with XChaCha20-Poly1305: the hello with the link's key, calls and events
// with the device's own key. Pairings live in memory and end with the
// server. Nothing pairs without the person at the computer allowing it.
//
// Known limit: the page itself is plain HTTP. Sealing defeats a passive
// listener and replays, not someone who can change traffic on the network
// (ARP spoofing, a hostile hotspot), who could serve a changed page. Prefer
// Tailscale on networks you do not trust.
package lan

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/connlimit"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Body caps.
const (
	maxHelloBody = 16 << 10
	maxCallBody  = rpc.MaxFrame*4/3 + 1<<10 // a sealed frame in base64, and its wrapper
	maxEventsArg = 4 << 10
	streamQueue  = 64
	keepAlive    = 25 * time.Second
)

// Slow clients. A connection that sends headers and never its body, or
// never reads its answer, holds a descriptor and a goroutine: each phase
// has a deadline, and connlimit caps how many connections are open at once
// per client address and in total, so a flood from one address (about
// 20,000 slow connections once exhausted the descriptors) leaves room for
// everyone else. The deadlines are set per request with
// http.ResponseController rather than the server's ReadTimeout and
// WriteTimeout, which would also cut the long-lived event stream (and, for
// ReadTimeout, cancel a hello waiting 50 s for the person at the computer).
const (
	headerTimeout = 10 * time.Second // the request line and headers
	bodyTimeout   = 30 * time.Second // the whole request, body included (a frame of up to 1.4 MB on a slow phone)
	writeTimeout  = 30 * time.Second // each answer, and each write on the event stream
	idleTimeout   = 60 * time.Second // a kept-alive connection between requests
	// A paired page holds its event stream and at most 6 calls (a
	// browser's connections per host), gatehouse call a few more; 3 devices
	// may share an address behind a router.
	connsPerAddr = 32
	connsTotal   = 512
)

// csp lets the page load only itself: no inline script, no other origin;
// its web app manifest too, so a phone can install the page.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Sentences the page shows for refusals that cannot be sealed.
const (
	msgWrongHost   = "This page must be opened at the address the computer shows."
	msgTooMany     = "Too many pairing attempts. Wait a minute and scan the code again."
	msgOldLink     = "This pairing code is no longer valid. Scan the code on the computer again."
	msgNotPaired   = "This device is not paired with this computer. Scan the code there again."
	msgBadFrame    = "That request did not open."
	msgStopped     = "gatehouse stopped serving on this computer."
	msgTooLarge    = "That request is too large."
	msgBadRequest  = "That request is not valid."
	msgUnavailable = "That address serves only gatehouse's page."
)

// Options place the server.
type Options struct {
	Addr   netip.Addr
	Port   int // 0: any free port
	Kind   Kind
	Page   fs.FS // the page's files: index.html, app.js, style.css...
	Logger *slog.Logger
	// DecisionWaitForTest shortens the 50 s a hello waits.
	DecisionWaitForTest time.Duration
	// BodyTimeoutForTest shortens the 30 s a request has to arrive whole.
	BodyTimeoutForTest time.Duration
	// Keep, when set, keeps the port and the paired devices (with their
	// keys) across runs: a restart ends no pairing, and with Port 0 the
	// port chosen the first time is tried again, so a page's saved address
	// keeps working. Nil keeps them in memory only.
	Keep Keeper
}

// Keeper keeps the LAN state across runs; trust.Store is one.
type Keeper interface {
	LAN() trust.LANState
	LANProblem() error // why LAN read as none
	SaveLAN(trust.LANState) error
}

// Server serves one address.
type Server struct {
	o        Options
	pairing  *Pairing
	host     *rpc.Host
	hs       *http.Server
	l        net.Listener
	hostport string
	log      *slog.Logger

	mu      sync.Mutex
	streams map[string]*stream
	guards  map[string]*rpc.ReplayGuard // per device, for events openers
	closing bool
}

type stream struct {
	ch   chan string // sealed frames
	done chan struct{}
}

// ErrHostOptionsTaken refuses host options that already carry Grants or
// Events: on the LAN a device's grant is its pairing's and its events go to
// its stream, and replacing what a caller chose without a word would hide
// the mistake.
var ErrHostOptionsTaken = errors.New("lan: the host's grants and events are the LAN server's; leave them unset")

// listenKept listens on o's port, or with none named on the port kept
// from an earlier run, or when that one is taken on any free port.
func listenKept(o Options, keptPort int) (net.Listener, error) {
	if o.Port == 0 && keptPort > 0 && keptPort < 65536 {
		l, err := net.Listen("tcp", netip.AddrPortFrom(o.Addr, uint16(keptPort)).String())
		if err == nil {
			return l, nil
		}
		o.Logger.Warn("the port kept from the last run is taken; a new one is chosen, and pages paired before must open the new link once", "port", keptPort, "err", err)
	}
	return net.Listen("tcp", netip.AddrPortFrom(o.Addr, uint16(o.Port)).String())
}

// Listen opens the address and builds the host from ho (its Grants are the
// pairings', its event sink this server's). ho must leave Grants and Events
// unset (ErrHostOptionsTaken).
func Listen(o Options, ho rpc.HostOptions) (*Server, error) {
	if ho.Grants != nil || ho.Events != nil {
		return nil, ErrHostOptionsTaken
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var kept trust.LANState
	if o.Keep != nil {
		kept = o.Keep.LAN()
		if err := o.Keep.LANProblem(); err != nil {
			o.Logger.Warn("the kept LAN pairings could not be read, so every device must pair again; the file is kept as lan.json.damaged", "err", err)
		}
	}
	l, err := listenKept(o, kept.Port)
	if err != nil {
		return nil, err
	}
	l = connlimit.ListenShedding(l, connsPerAddr, connsTotal)
	s := &Server{o: o, l: l, hostport: l.Addr().String(), log: o.Logger, streams: map[string]*stream{}, guards: map[string]*rpc.ReplayGuard{}}
	s.pairing = newPairing("http://"+s.hostport+"/", o.Kind)
	if o.Keep != nil {
		s.pairing.keep(o.Keep, kept, l.Addr().(*net.TCPAddr).Port, o.Logger)
	}
	s.pairing.decisionWaitForTest = o.DecisionWaitForTest
	s.pairing.onRevoke = func(id string) { s.endStream(id, "unpaired"); s.host.Forget(id) }
	ho.Grants = s.pairing
	s.host = rpc.NewHost(ho)
	if err := s.host.AttachEvents(s.event); err != nil { // none is set: checked above
		_ = l.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rc/hello", s.handleHello)
	mux.HandleFunc("POST /rc/call", s.handleCall)
	mux.HandleFunc("GET /rc/events", s.handleEvents)
	mux.HandleFunc("GET /", s.handlePage)
	s.hs = &http.Server{Handler: s.guard(mux), ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
		MaxHeaderBytes: 16 << 10, ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
		// At the total cap the listener sheds the oldest connection that is
		// not doing authenticated work: these hooks tell it which are.
		ConnState: connlimit.ConnState, ConnContext: connlimit.WithConn}
	return s, nil
}

// Serve answers until Close.
func (s *Server) Serve() error {
	err := s.hs.Serve(s.l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Pairing is the link, the request and the devices.
func (s *Server) Pairing() *Pairing { return s.pairing }

// URL is the page's address (without the link's fragment).
func (s *Server) URL() string { return "http://" + s.hostport + "/" }

// Close tells every page that serving ended, then stops.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	ids := make([]string, 0, len(s.streams))
	for id := range s.streams {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.endStream(id, "ended")
	}
	err := s.hs.Shutdown(ctx)
	s.host.Close()
	return err
}

// guard checks Host and Origin (a page of another site, or a DNS name
// rebound to this address, is refused) and sets the headers every answer
// carries.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// The body must arrive within bodyTimeout of the headers; readBody
		// lifts the deadline once it has, and handleEvents for its stream.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTimeout()))
		if r.Host != s.hostport {
			fail(w, http.StatusMisdirectedRequest, msgWrongHost)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+s.hostport {
			fail(w, http.StatusForbidden, msgWrongHost)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyTimeout is how long a request has to arrive whole.
func (s *Server) bodyTimeout() time.Duration {
	if s.o.BodyTimeoutForTest > 0 {
		return s.o.BodyTimeoutForTest
	}
	return bodyTimeout
}

// writeSoon gives the answer about to be written writeTimeout to leave: a
// client that never reads cannot hold the handler.
func writeSoon(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
}

// bodyRead lifts the read deadline once the request is in: were it left,
// its expiry during a long call (a hello waiting for the person, a push)
// would cancel the request's context.
func bodyRead(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeSoon(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	name := path.Clean(r.URL.Path)
	if name == "/" {
		name = "/index.html"
	}
	if s.o.Page == nil || path.Dir(name) != "/" {
		fail(w, http.StatusNotFound, msgUnavailable)
		return
	}
	data, err := fs.ReadFile(s.o.Page, name[1:])
	if err != nil {
		fail(w, http.StatusNotFound, msgUnavailable)
		return
	}
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	writeSoon(w)
	_, _ = w.Write(data)
}

// readBody decodes a JSON body of at most max bytes.
func readBody(w http.ResponseWriter, r *http.Request, max int64, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, max))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			fail(w, http.StatusRequestEntityTooLarge, msgTooLarge)
		} else {
			fail(w, http.StatusBadRequest, msgBadRequest)
		}
		return false
	}
	bodyRead(w)
	return true
}

func sealed(w http.ResponseWriter, body string) {
	writeSoon(w)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"f": body})
}

// helloAAD binds a hello and its answer to the link and their direction.
func helloAAD(linkID, toward string) []byte { return []byte("pair:" + linkID + "|" + toward) }

// Hello and its answer, the plaintexts sealed with the link key.
type hello struct {
	Type  string `json:"type"` // "hello"
	Name  string `json:"name"`
	TS    int64  `json:"ts"`
	Nonce string `json:"nonce"`
}

type helloAnswer struct {
	Type      string `json:"type"` // paired, refused
	DeviceID  string `json:"deviceId,omitempty"`
	DeviceKey string `json:"deviceKey,omitempty"` // base64url, 32 bytes
	Grant     string `json:"grant,omitempty"`
	Error     string `json:"error,omitempty"`
	TS        int64  `json:"ts"`
	Nonce     string `json:"nonce"`
}

func (s *Server) handleHello(w http.ResponseWriter, r *http.Request) {
	from := remoteAddr(r)
	var in struct {
		P string `json:"p"`
		F string `json:"f"`
	}
	if !readBody(w, r, maxHelloBody, &in) {
		s.pairing.failed(from, time.Now())
		return
	}
	linkID, key, guard := s.pairing.current()
	plain, err := rpc.Open(key, in.F, helloAAD(linkID, "host"))
	var h hello
	if in.P != linkID || err != nil || json.Unmarshal(plain, &h) != nil || h.Type != "hello" || guard.Check(h.TS, h.Nonce) != nil {
		s.junkHello(w, from)
		return
	}
	connlimit.Working(r.Context()) // opened with the link key: wait for the person
	name := cleanName(h.Name)
	code := PairCode(linkID, key, in.F)
	dev, refusal := s.pairing.hello(r.Context(), name, from.String(), code)
	ans := helloAnswer{Type: "refused", Error: refusal, TS: time.Now().UnixMilli(), Nonce: randomID(24)}
	if dev != nil {
		ans = helloAnswer{Type: "paired", DeviceID: dev.ID, DeviceKey: encodeKey(dev.key), Grant: dev.Grant.String(), TS: ans.TS, Nonce: ans.Nonce}
		s.log.Info("device paired", "device", dev.ID, "name", name, "grant", dev.Grant.String())
	}
	out, _ := json.Marshal(ans)
	sealed(w, rpc.Seal(key, out, helloAAD(linkID, "device")))
}

// junkHello answers a hello that did not open (or was replayed), charging
// it to its sender's budget: a sender over budget is told to wait.
func (s *Server) junkHello(w http.ResponseWriter, from netip.Addr) {
	now := time.Now()
	if !s.pairing.junkAllowed(from, now) {
		fail(w, http.StatusTooManyRequests, msgTooMany)
		return
	}
	s.pairing.failed(from, now)
	fail(w, http.StatusForbidden, msgOldLink)
}

// remoteAddr is the request's sender address, IPv4 in IPv6 unmapped.
func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// cleanName keeps a device's self-description short and printable.
func cleanName(n string) string {
	out := make([]rune, 0, 64)
	for _, r := range n {
		if len(out) == 64 {
			break
		}
		if r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return "a browser"
	}
	return string(out)
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var in struct {
		D string `json:"d"`
		F string `json:"f"`
	}
	if !readBody(w, r, maxCallBody, &in) {
		return
	}
	key, ok := s.pairing.device(in.D)
	if !ok {
		fail(w, http.StatusForbidden, msgNotPaired)
		return
	}
	connlimit.Working(r.Context()) // a paired device's call: never shed while it runs
	dev := rpc.Device{ID: in.D, Fingerprint: trust.Fingerprint(key[:])}
	out, err := s.host.HandleSealed(r.Context(), dev, key, rpc.LANAAD(in.D, "host"), rpc.LANAAD(in.D, "device"), in.F)
	if err != nil {
		fail(w, http.StatusBadRequest, msgBadFrame)
		return
	}
	s.pairing.seen(in.D)
	sealed(w, out)
}

// event seals a host event for a device with an open stream.
func (s *Server) event(deviceID string, ev rpc.Event) {
	key, ok := s.pairing.device(deviceID)
	if !ok {
		return
	}
	plain, err := json.Marshal(ev)
	if err != nil {
		return
	}
	s.mu.Lock()
	st := s.streams[deviceID]
	s.mu.Unlock()
	if st == nil {
		return
	}
	select {
	case st.ch <- rpc.Seal(key, plain, rpc.LANAAD(deviceID, "device")):
	default: // a page that does not read its events loses some; status is re-read on demand
	}
}

// endStream sends a stream its last word (ended or unpaired) and closes it.
func (s *Server) endStream(deviceID, kind string) {
	s.mu.Lock()
	st := s.streams[deviceID]
	delete(s.streams, deviceID)
	delete(s.guards, deviceID)
	s.mu.Unlock()
	if st == nil {
		return
	}
	close(st.done)
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	d, f := r.URL.Query().Get("d"), r.URL.Query().Get("f")
	if len(d) > 200 || len(f) > maxEventsArg {
		fail(w, http.StatusRequestEntityTooLarge, msgTooLarge)
		return
	}
	key, ok := s.pairing.device(d)
	if !ok {
		fail(w, http.StatusForbidden, msgNotPaired)
		return
	}
	plain, err := rpc.Open(key, f, rpc.LANAAD(d, "host"))
	var opener struct {
		Type   string `json:"type"`
		Method string `json:"method"`
		TS     int64  `json:"ts"`
		Nonce  string `json:"nonce"`
	}
	if err != nil || json.Unmarshal(plain, &opener) != nil || opener.Type != "req" || opener.Method != "events" || s.eventsGuard(d).Check(opener.TS, opener.Nonce) != nil {
		fail(w, http.StatusBadRequest, msgBadFrame)
		return
	}
	_, ok = w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, msgBadRequest)
		return
	}
	connlimit.Working(r.Context()) // a paired page's event stream
	st := &stream{ch: make(chan string, streamQueue), done: make(chan struct{})}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		fail(w, http.StatusServiceUnavailable, msgStopped)
		return
	}
	old := s.streams[d]
	s.streams[d] = st
	s.mu.Unlock()
	if old != nil {
		close(old.done) // one stream per device: the newer wins
	}
	bodyRead(w) // the stream lives as long as the pairing; each write has its own deadline
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(text string) error {
		writeSoon(w)
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
		return http.NewResponseController(w).Flush()
	}
	if send("") != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	last := func(kind string) {
		end, _ := json.Marshal(map[string]any{"type": kind, "ts": time.Now().UnixMilli(), "nonce": randomID(24)})
		_ = send("data: " + rpc.Seal(key, end, rpc.LANAAD(d, "device")) + "\n\n")
	}
	for {
		select {
		case body := <-st.ch:
			if send("data: "+body+"\n\n") != nil {
				return
			}
		case <-tick.C:
			if send(": keep-alive\n\n") != nil {
				return
			}
		case <-st.done:
			s.mu.Lock()
			closing, replaced := s.closing, s.streams[d] != nil && s.streams[d] != st
			s.mu.Unlock()
			_, stillPaired := s.pairing.device(d)
			switch {
			case replaced:
			case closing:
				last("ended")
			case !stillPaired:
				last("unpaired")
			}
			return
		case <-r.Context().Done():
			s.mu.Lock()
			if s.streams[d] == st {
				delete(s.streams, d)
			}
			s.mu.Unlock()
			return
		}
	}
}

func (s *Server) eventsGuard(d string) *rpc.ReplayGuard {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guards[d]
	if g == nil {
		g = rpc.NewReplayGuard()
		s.guards[d] = g
	}
	return g
}

func encodeKey(k rpc.Key) string { return b64(k[:]) }
