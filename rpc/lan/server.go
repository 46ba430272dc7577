// Package lan serves devices on a Tailscale or private LAN address: the
// phone page, pairing by QR code, and sealed calls and events, through the
// same rpc host as every other transport.
//
// It listens on exactly one address of those kinds (or loopback), never a
// public one or all interfaces. Nothing pairs without the person at the
// computer allowing the request whose code the device in their hand shows.
// No key ever travels, not even under the link's key: pairing agrees a
// device's secrets with an X25519 exchange and a compared code (agree.go);
// a device opens a session with a fresh exchange of its own (sessions.go),
// and every call, reply and event is sealed with that session's key
// (XChaCha20-Poly1305). Sessions live in memory, so nothing recorded
// replays after a restart; a page's stored secret is good only in the
// serve run that gave it, so whatever served the page's address while
// serve was stopped learned nothing it can use. Pairings are kept in the
// state folder (Options.Keep) and survive a restart.
//
// Known limit: the page itself is plain HTTP. Sealing defeats a passive
// listener and replays, not someone who can change traffic on the network
// (ARP spoofing, a hostile hotspot), who could serve a changed page. Prefer
// Tailscale on networks you do not trust. docs/lan.md has the protocol and
// its threat model.
package lan

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/connlimit"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Body caps.
const (
	maxPairBody   = 16 << 10
	maxResumeBody = 4 << 10
	maxCallBody   = rpc.MaxFrame*4/3 + 1<<10 // a sealed frame in base64, and its wrapper
	maxEventsArg  = 4 << 10
	streamQueue   = 64
	keepAlive     = 25 * time.Second
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
//
// It may connect to any http or https address: the page calls the other
// computers it paired with at their own addresses (computers.go), which
// this computer cannot name (a CSP has no private address ranges, and the
// person adds a computer by its link at any time). What runs is still only
// this page's own script, so what it connects to is what that script
// chooses, the computers in its storage; an injected script, which a wider
// connect-src would help carry data out, has nowhere to come from. Each
// computer answers only the page it pinned, and everything it answers is
// sealed with that device's keys.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' http: https:; manifest-src 'self'; " +
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
	msgFull        = "This computer already has 3 paired devices. Unpair one there first."
	msgWaitingFull = "Several devices are already waiting to be allowed on this computer. Try again in a minute."
	msgRestarted   = "gatehouse restarted on the computer since this device last reached it, so the computer must allow it again."
	msgMoved       = "This computer now serves at another address, so this device cannot reconnect here. Scan the code that gatehouse serve shows to pair again."
	msgSessionGone = "That session ended on the computer."
	msgPairGone    = "That pairing request is no longer waiting. Scan the code on the computer again."
)

// Options place the server.
type Options struct {
	Addr   netip.Addr
	Port   int // 0: any free port
	Kind   Kind
	Page   fs.FS // the page's files: index.html, app.js, style.css...
	Logger *slog.Logger
	// DecisionWaitForTest shortens the 50 s a request waits.
	DecisionWaitForTest time.Duration
	// BodyTimeoutForTest shortens the 30 s a request has to arrive whole.
	BodyTimeoutForTest time.Duration
	// TLS, when set, serves the page over HTTPS at Name (a name its
	// certificate covers, which resolves to Addr: a Tailscale name with the
	// certificate of `tailscale cert`). No other program can then serve the
	// page's origin, so a page's stored secret stays good across restarts.
	TLS  *tls.Config
	Name string
	// Keep, when set, keeps the port and the paired devices (with their
	// secrets) across runs: a restart ends no pairing, and with Port 0 the
	// port chosen the first time is tried again, so a page's saved address
	// keeps working. Nil keeps them in memory only.
	Keep Keeper

	storedAcrossRunsForTest bool // see Pairing.storedAcrossRunsForTest
	// originCheckOffForTest lets a device reconnect at another address than
	// it paired at, and leakStoredUnderLinkForTest puts the new device's
	// stored secret in the pairing answer sealed only with the link key, as
	// gatehouse did with the device key before keys were agreed: tests
	// prove each attack with them, then refused without.
	originCheckOffForTest      bool
	leakStoredUnderLinkForTest bool
	// callProvenLateForTest marks a call as proven work only once its body
	// is in, as gatehouse did before calls proved their session in a
	// header: a test shows a slow upload shed by a flood with it.
	callProvenLateForTest bool
	// See Pairing.pageCheckOffForTest and storedCrossForTest.
	pageCheckOffForTest bool
	storedCrossForTest  bool
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
	hostport string // what the page's address names: the Host every request must carry
	scheme   string // http, or https with Options.TLS
	log      *slog.Logger

	mu      sync.Mutex
	streams map[string]*stream // by session
	closing bool
}

type stream struct {
	device string
	ch     chan string // sealed frames
	done   chan struct{}
}

// ErrHostOptionsTaken refuses host options that already carry Grants or
// Events: on the LAN a device's grant is its pairing's and its events go to
// its stream, and replacing what a caller chose without a word would hide
// the mistake.
var ErrHostOptionsTaken = errors.New("lan: the host's grants and events are the LAN server's; leave them unset")

// ErrKeptPortTaken: the port paired pages saved is held by another program.
// serve does not move on: whatever holds the page's address is that page's
// origin, and could be pretending to be gatehouse to the phones (a moved
// serve would leave it the origin for good).
var ErrKeptPortTaken = refusal.New(refusal.Refused, "kept port taken",
	"the address your paired pages saved is taken by another program, which could be pretending to be gatehouse to them (docs/lan.md, \"Threat model\"): stop it, or serve on another port with --port N (pages paired before then pair again through the new link)")

// listenKept listens on o's port, or with none named on the port kept from
// an earlier run (refusing, ErrKeptPortTaken, when another program holds
// it), or on any free port the first time.
func listenKept(o Options, keptPort int) (net.Listener, error) {
	if o.Port == 0 && keptPort > 0 && keptPort < 65536 {
		addr := netip.AddrPortFrom(o.Addr, uint16(keptPort)).String()
		l, err := net.Listen("tcp", addr)
		if err != nil {
			o.Logger.Warn("the kept port is taken", "addr", addr, "err", err)
			return nil, refusal.Errorf(ErrKeptPortTaken, "the address your paired pages saved, %s, is taken by another program, which could be pretending to be gatehouse to them (docs/lan.md, \"Threat model\"): stop it, or serve on another port with --port N (pages paired before then pair again through the new link)", addr)
		}
		return l, nil
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
	s := &Server{o: o, l: l, hostport: l.Addr().String(), scheme: "http", log: o.Logger, streams: map[string]*stream{}}
	if o.TLS != nil {
		if o.Name == "" {
			_ = l.Close()
			return nil, errors.New("lan: serving HTTPS needs the name the certificate covers")
		}
		s.l = tls.NewListener(l, o.TLS)
		s.hostport = net.JoinHostPort(o.Name, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		s.scheme = "https"
	}
	s.pairing = newPairing(s.URL(), o.Kind)
	s.pairing.secure = o.TLS != nil
	s.pairing.log = o.Logger
	if o.Keep != nil {
		s.pairing.keep(o.Keep, kept, l.Addr().(*net.TCPAddr).Port, o.Logger)
	}
	s.pairing.decisionWaitForTest = o.DecisionWaitForTest
	s.pairing.storedAcrossRunsForTest = o.storedAcrossRunsForTest
	s.pairing.pageCheckOffForTest, s.pairing.storedCrossForTest = o.pageCheckOffForTest, o.storedCrossForTest
	s.pairing.onRevoke = func(id string) { s.endDeviceStreams(id); s.host.Forget(id) }
	s.pairing.onEnd = s.endStream
	ho.Grants = s.pairing
	s.host = rpc.NewHost(ho)
	if err := s.host.AttachEvents(s.event); err != nil { // none is set: checked above
		_ = l.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rc/pair", s.handlePair)
	mux.HandleFunc("POST /rc/resume", s.handleResume)
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
func (s *Server) URL() string { return s.scheme + "://" + s.hostport + "/" }

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
		s.endStream(id)
	}
	err := s.hs.Shutdown(ctx)
	s.host.Close()
	return err
}

// guard checks Host and Origin (a DNS name rebound to this address is
// refused; another origin reaches only what computers.go lets it) and sets the headers every answer
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
		if o := r.Header.Get("Origin"); o != "" && o != s.scheme+"://"+s.hostport {
			// Another computer's page (computers.go), or refused.
			if r = s.cross(w, r, o); r == nil {
				return
			}
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
