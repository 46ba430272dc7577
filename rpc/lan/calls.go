package lan

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/connlimit"
	"github.com/gatehouse/gatehouse/rpc"
)

// Calls and events, in a session: POST /rc/call?d=&s= with the sealed
// request as {f}, and GET /rc/events?d=&s=&f= for the sealed event stream.

// authHeader carries a call's proof of its session before its body is
// read: "ts.nonce.mac", the mac HMAC-SHA256 under the session's auth key.
// A call proven this way is never shed for unproven connections while its
// body (up to a few hundred KiB from a slow phone) is still arriving.
const authHeader = "X-Gatehouse-Auth"

// sessionAAD binds a frame to its device, session and direction ("host"
// for requests, "device" for replies and events, "events" for the stream's
// opener, so an opener cannot be fed back as a call).
func sessionAAD(deviceID, sessionID, toward string) []byte {
	return rpc.LANAAD(deviceID+"|"+sessionID, toward)
}

// callMAC is the mac of a call's auth header.
func callMAC(auth rpc.Key, deviceID, sessionID, ts, nonce string) string {
	m := hmac.New(sha256.New, auth[:])
	m.Write(lp(str("call"), str(deviceID), str(sessionID), str(ts), str(nonce)))
	return b64(m.Sum(nil)[:16])
}

// provenCall checks a call's auth header against its session. A header
// that proves the session but is stale or seen before is the device's own
// frame replayed: its kind is returned for the request log.
func provenCall(se *session, header string) (ok bool, refused string) {
	ts, rest, ok1 := strings.Cut(header, ".")
	nonce, mac, ok2 := strings.Cut(rest, ".")
	t, err := strconv.ParseInt(ts, 10, 64)
	if !ok1 || !ok2 || err != nil || len(nonce) < 16 || len(nonce) > 64 || !hmac.Equal([]byte(mac), []byte(callMAC(se.keys.auth, se.device, se.id, ts, nonce))) {
		return false, ""
	}
	switch err := se.headers.Check(t, nonce); {
	case err == nil:
		return true, ""
	case errors.Is(err, rpc.ErrBusy):
		return false, rpc.RefusedBusy
	case rpc.IsReplay(err):
		return false, rpc.RefusedReplay
	default:
		return false, rpc.RefusedStale
	}
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	d, sid := r.URL.Query().Get("d"), r.URL.Query().Get("s")
	se, ok := s.pairing.session(d, sid)
	switch {
	case !ok && !s.paired(d):
		refuse(w, errResumeUnpaired)
		return
	case !ok:
		refuse(w, &errPairing{401, "session", msgSessionGone})
		return
	case !s.pinnedTo(d, pageOf(r)):
		refuse(w, errOtherPage)
		return
	}
	if ok, refused := provenCall(se, r.Header.Get(authHeader)); !ok {
		if refused != "" {
			s.host.NoteRefused(rpc.Device{ID: d, Fingerprint: se.fp}, refused)
		}
		fail(w, http.StatusForbidden, msgBadFrame)
		return
	}
	if !s.o.callProvenLateForTest {
		connlimit.Working(r.Context()) // a session's call, proven before its body: never shed while it arrives
	}
	in, ok := readCall(w, r)
	if !ok {
		return
	}
	connlimit.Working(r.Context())
	dev := rpc.Device{ID: d, Fingerprint: se.fp}.WithFrames(true)
	out, _, err := s.host.HandleFrame(r.Context(), dev, se.keys.key, sessionAAD(d, sid, "host"), sessionAAD(d, sid, "device"), in)
	if err != nil {
		fail(w, http.StatusBadRequest, msgBadFrame)
		return
	}
	s.pairing.seen(d)
	if out.Binary {
		sealedFrame(w, out.Body)
		return
	}
	sealed(w, string(out.Body))
}

// frameType is the content type of a binary frame (protocol 2): a call's
// body is the frame itself, and so is the answer to a caller that
// announced protocol 2. Protocol 1 sends and gets {"f": base64}.
const frameType = "application/octet-stream"

// readCall reads a call's sealed request: a binary frame of at most
// rpc.MaxFrame bytes, or protocol 1's JSON {f}.
func readCall(w http.ResponseWriter, r *http.Request) (rpc.Frame, bool) {
	if r.Header.Get("Content-Type") != frameType {
		var in struct {
			F string `json:"f"`
		}
		ok := readBody(w, r, maxCallBody, &in)
		return rpc.Frame{Body: []byte(in.F)}, ok
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rpc.MaxFrame))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		fail(w, http.StatusRequestEntityTooLarge, msgTooLarge)
		return rpc.Frame{}, false
	case err != nil:
		fail(w, http.StatusBadRequest, msgBadRequest)
		return rpc.Frame{}, false
	}
	bodyRead(w)
	return rpc.Frame{Body: body, Binary: true}, true
}

// sealedFrame answers with a binary frame.
func sealedFrame(w http.ResponseWriter, frame []byte) {
	writeSoon(w)
	w.Header().Set("Content-Type", frameType)
	w.Header().Set("Content-Length", strconv.Itoa(len(frame)))
	_, _ = w.Write(frame)
}

// paired reports whether d is a paired device.
func (s *Server) paired(d string) bool {
	s.pairing.mu.Lock()
	defer s.pairing.mu.Unlock()
	return s.pairing.devices[d] != nil
}

// event seals a host event for each open stream of a device, each with its
// session's key.
func (s *Server) event(deviceID string, ev rpc.Event) {
	plain, err := json.Marshal(ev)
	if err != nil {
		return
	}
	for _, se := range s.pairing.sessionsOf(deviceID) {
		s.mu.Lock()
		st := s.streams[se.id]
		s.mu.Unlock()
		if st == nil {
			continue
		}
		select {
		case st.ch <- rpc.Seal(se.keys.key, plain, sessionAAD(deviceID, se.id, "device")):
		default: // a page that does not read its events loses some; status is re-read on demand
		}
	}
}

// endStream closes a session's stream; the stream says why as it ends.
func (s *Server) endStream(sessionID string) {
	s.mu.Lock()
	st := s.streams[sessionID]
	delete(s.streams, sessionID)
	s.mu.Unlock()
	if st != nil {
		close(st.done)
	}
}

// endDeviceStreams closes every stream of a device.
func (s *Server) endDeviceStreams(deviceID string) {
	s.mu.Lock()
	var ids []string
	for id, st := range s.streams {
		if st.device == deviceID {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.endStream(id)
	}
}

// online lists the devices with a stream open now.
func (s *Server) online() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, st := range s.streams {
		if !seen[st.device] {
			seen[st.device] = true
			out = append(out, st.device)
		}
	}
	return out
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, sid, f := q.Get("d"), q.Get("s"), q.Get("f")
	if len(d) > 200 || len(sid) > 200 || len(f) > maxEventsArg {
		fail(w, http.StatusRequestEntityTooLarge, msgTooLarge)
		return
	}
	se, ok := s.pairing.session(d, sid)
	switch {
	case !ok && !s.paired(d):
		refuse(w, errResumeUnpaired)
		return
	case !ok:
		refuse(w, &errPairing{401, "session", msgSessionGone})
		return
	case !s.pinnedTo(d, pageOf(r)):
		refuse(w, errOtherPage)
		return
	}
	// The opener takes the host's walk, as a call does: it opens, and is
	// refused stale, repeated or before the host started by the device's
	// one replay guard (rpc.Host.OpenEvents).
	if s.host.OpenEvents(rpc.Device{ID: d, Fingerprint: se.fp}, se.keys.key, sessionAAD(d, sid, "events"), f) != nil {
		fail(w, http.StatusBadRequest, msgBadFrame)
		return
	}
	if _, ok := w.(http.Flusher); !ok {
		fail(w, http.StatusInternalServerError, msgBadRequest)
		return
	}
	connlimit.Working(r.Context()) // a session's event stream
	st := &stream{device: d, ch: make(chan string, streamQueue), done: make(chan struct{})}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		fail(w, http.StatusServiceUnavailable, msgStopped)
		return
	}
	old := s.streams[sid]
	s.streams[sid] = st
	s.mu.Unlock()
	if old != nil {
		close(old.done) // one stream per session: the newer wins (another tab has a session of its own)
	}
	s.pairing.streaming(se.id, 1)
	defer s.pairing.streaming(se.id, -1)
	s.stream(w, r, se, st)
}

// stream writes a session's events until it ends, then its last word.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, se *session, st *stream) {
	bodyRead(w) // the stream lives as long as the session; each write has its own deadline
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
		_ = send("data: " + rpc.Seal(se.keys.key, end, sessionAAD(se.device, se.id, "device")) + "\n\n")
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
			closing, replaced := s.closing, s.streams[se.id] != nil && s.streams[se.id] != st
			s.mu.Unlock()
			switch {
			case replaced:
			case closing:
				last("ended")
			case !s.paired(se.device):
				last("unpaired")
			}
			return
		case <-r.Context().Done():
			s.mu.Lock()
			if s.streams[se.id] == st {
				delete(s.streams, se.id)
			}
			s.mu.Unlock()
			return
		}
	}
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
	if strings.TrimSpace(string(out)) == "" {
		return "a browser"
	}
	return string(out)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

var _ rpc.Grants = (*Pairing)(nil)
