package lan

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Several computers. A person with a desktop and a laptop keeps one page:
// the page served at computer A's address pairs with computer B too, and
// calls B at B's own address, cross-origin. B answers another origin only
// where the page needs it, and only for the page that paired:
//
//   - a pairing start through B's link from any http or https origin: the
//     link's key protects it as before, and the page's origin is pinned to
//     the device the person allows (the request shows it, and so does
//     gatehouse devices);
//   - a paired device's reconnect, resume, calls and events only when the
//     request's Origin is the origin it was pinned to; a device paired at
//     B's own page is refused from every other origin, and one paired from
//     A's page is refused from B's own page, a third site and another port;
//   - a preflight for exactly the methods and headers the page uses, from
//     an origin that may send the request it announces.
//
// Every accepted answer names the origin (never *), and the Host check
// (DNS rebinding) is the same for every request. A cross-origin device's
// stored secret is in A's storage, which whatever serves A's address while
// A's serve is stopped can read while B keeps running: over plain HTTP it
// opens one session, the one right after the person allowed the device,
// and never again, nor does one a ticket's resume rotated (sessions.go's
// rule for a page of B's own is "good for this run", which B's run cannot
// vouch for when the page is A's).
// docs/lan.md, "Several computers", has the threat model.

// msgOtherPage refuses a paired device's request from another origin than
// the page it paired from.
const msgOtherPage = "This device was paired from another page, so this computer does not answer it here. Open the page you paired it from, or pair this one with the code on the computer."

// msgStoredOnce asks a device paired from another computer's page to be
// allowed again after that page lost its ticket (it was reloaded).
const msgStoredOnce = "This page was reloaded since it last reached this computer, which it reaches from another computer's page, so the person at this computer must allow it again."

var (
	errOtherPage  = &errPairing{409, "page", msgOtherPage}
	errStoredOnce = &errPairing{409, "restarted", msgStoredOnce}
)

// The methods and headers the page's cross-origin requests use.
const (
	corsMethods = "POST"
	corsHeaders = "Content-Type, X-Gatehouse-Auth"
	corsMaxAge  = "600"
)

// crossPaths are the paths another origin may reach, with the method of
// the request itself.
var crossPaths = map[string]string{"/rc/pair": "POST", "/rc/resume": "POST", "/rc/call": "POST", "/rc/events": "GET"}

type pageKey struct{}

// pageOf is the origin of the page a request came from when that is
// another computer's page, "" for this computer's own page (or a client
// that names none, as gatehouse call).
func pageOf(r *http.Request) string {
	p, _ := r.Context().Value(pageKey{}).(string)
	return p
}

// validOrigin reports whether o is an http or https origin and nothing
// more: no path, user, query or fragment ("null", a file page's, is none).
func validOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery && u.Scheme+"://"+u.Host == o && len(o) <= 300
}

// cross answers or admits a request from another origin: it returns the
// request to serve (its context names the page), or nil when it answered
// (a preflight, or a refusal).
func (s *Server) cross(w http.ResponseWriter, r *http.Request, origin string) *http.Request {
	method, ok := crossPaths[r.URL.Path]
	if !ok || !validOrigin(origin) {
		fail(w, http.StatusForbidden, msgWrongHost)
		return nil
	}
	if r.Method == http.MethodOptions {
		s.preflight(w, r, origin, method)
		return nil
	}
	if r.Method != method {
		fail(w, http.StatusForbidden, msgWrongHost)
		return nil
	}
	// A POST the page sends is JSON, or a call's binary frame, which a
	// browser asks about first (its preflight, above). A "simple" one
	// (text/plain, a form) was never asked about; and only a pairing start
	// reaches a device not pinned to the origin.
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	asked := ct == "application/json" || ct == frameType && r.URL.Path == "/rc/call"
	if method == "POST" && !asked ||
		r.URL.Path != "/rc/pair" && !s.pinnedTo(r.URL.Query().Get("d"), origin) {
		fail(w, http.StatusForbidden, msgOtherPage)
		return nil
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	return r.WithContext(context.WithValue(r.Context(), pageKey{}, origin))
}

// preflight answers a browser's question before a cross-origin POST: yes
// only for the page's own method and headers, and only from an origin that
// may send it (any page for a pairing start, whose link key decides; the
// pinned page of the device the address names for a resume or call).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request, origin, method string) {
	ok := method == "POST" && r.Header.Get("Access-Control-Request-Method") == "POST"
	for _, name := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "", "content-type", "x-gatehouse-auth":
		default:
			ok = false
		}
	}
	if ok && r.URL.Path != "/rc/pair" {
		ok = s.pinnedTo(r.URL.Query().Get("d"), origin)
	}
	if !ok {
		fail(w, http.StatusForbidden, msgOtherPage)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		// A page at a private address calling one more private (Chrome's
		// private network access): the origin was checked above.
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	writeSoon(w)
	w.WriteHeader(http.StatusNoContent)
}

// pinnedTo reports whether device d may be reached from page ("" for this
// computer's own page).
func (s *Server) pinnedTo(d, page string) bool {
	p := s.pairing
	p.mu.Lock()
	defer p.mu.Unlock()
	dev := p.devices[d]
	return dev != nil && p.pageAllowedLocked(dev, page)
}

// pageAllowedLocked reports whether a request from page may act for dev.
func (p *Pairing) pageAllowedLocked(dev *Device, page string) bool {
	return dev.Page == page || p.pageCheckOffForTest
}

// storedOnceLocked reports whether dev's stored secret opens one session
// only: a device paired from another computer's page over plain HTTP,
// whose storage whatever serves that address can read while this serve
// runs on.
func (p *Pairing) storedOnceLocked(dev *Device) bool {
	return dev.Page != "" && !strings.HasPrefix(dev.Page, "https://") && !p.storedCrossForTest
}
