// Package fakegithub is a local stand-in for GitHub's API that the real gh
// CLI talks to over TLS, so gatehouse's tests can run gh end to end without
// the network or anyone's sign-in.
//
// Start serves one signed-in user, "octo", as a GitHub Enterprise host on
// 127.0.0.1 with a fresh test certificate authority; Server.Env gives gh an
// environment that points at it and nothing of the real user's. The fake
// answers the GraphQL and REST calls gh 2.23 makes for the commands listed in
// the tests (lists, views, search, comment, diff, review, merge, create):
// GraphQL queries are parsed and answered with exactly the fields gh asks
// for, from the data in Server.Data.
//
// What a user must know about gh 2.23 against this fake:
//   - --repo takes "127.0.0.1:PORT/owner/name" (RepoFlag) or plain
//     "owner/name" (GH_HOST supplies the host). The URL form
//     "https://127.0.0.1:PORT/owner/name" loses its port in gh and dials :443.
//   - Env is a whole environment, not additions to os.Environ(); HOME is a
//     folder of the fake's (gh keeps its cache there), GH_CONFIG_DIR the
//     caller's.
//   - gh answers some requests without asking: "gh pr view N --json number"
//     sends nothing. Feature detection (Issue_fields, PullRequest_fields,
//     Repository_fields) is sent by some commands only, and gh caches it for
//     a day under HOME, so one Server sees it once.
//   - gh run inside a git checkout also runs git there (pr create warns about
//     uncommitted changes); the tests run it in an empty folder.
//
// Limits: it is a test fixture, not GitHub. Paging always answers one page,
// filters other than states and head/base branch are ignored, and any
// request it does not know gets a 404 and a line in the test log, so a gh
// upgrade that sends something new fails loudly instead of silently.
package fakegithub

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Login is the one signed-in user the fake serves.
const Login = "octo"

// Server is a running fake. Tests may change Data while holding Mu.
type Server struct {
	Host   string // "127.0.0.1:PORT": gh's GH_HOST (an Enterprise host)
	CAFile string // PEM of the test CA: gh trusts it through SSL_CERT_FILE
	Token  string // read-only: the fake checks every request against it
	Mu     sync.Mutex
	Data   *Data

	t        testing.TB
	home     string
	requests []Request  // guarded by Mu
	hold     *mergeHold // guarded by Mu
	arrived  *sync.Cond // on Mu: broadcast at each request
}

// mergeHold keeps merges waiting: reached is closed when the first merge
// arrives, release lets every merge go on.
type mergeHold struct {
	reached, release chan struct{}
	once             sync.Once
}

// HoldMerges makes every pull request merge wait before it changes
// anything, until release is called (or the test ends); reached is closed
// when the first merge is waiting, so a test waits for that state, never
// for a time.
func (s *Server) HoldMerges() (reached <-chan struct{}, release func()) {
	h := &mergeHold{reached: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	release = func() { once.Do(func() { close(h.release) }) }
	s.Mu.Lock()
	s.hold = h
	s.Mu.Unlock()
	s.t.Cleanup(release)
	return h.reached, release
}

func (s *Server) waitMergeHold() {
	s.Mu.Lock()
	h := s.hold
	s.Mu.Unlock()
	if h == nil {
		return
	}
	h.once.Do(func() { close(h.reached) })
	<-h.release
}

// Request is one request as the fake saw it.
type Request struct {
	Method    string
	Path      string         // URL path, without the query
	Operation string         // GraphQL operation name, or the first word of the query
	Variables map[string]any // GraphQL variables, nil for REST
}

// Start runs the fake on 127.0.0.1 with a fresh test certificate authority
// and stops it when t ends. It serves one signed-in user "octo" (token
// s.Token) and the data in s.Data, which tests may change under s.Mu.
func Start(t testing.TB) *Server {
	t.Helper()
	dir := t.TempDir()
	cert, caPEM, err := newCertificates()
	if err != nil {
		t.Fatalf("fakegithub: certificates: %v", err)
	}
	s := &Server{CAFile: filepath.Join(dir, "ca.pem"), Token: "gho_fake" + randomHex(8),
		Data: DefaultData(), t: t, home: filepath.Join(dir, "home")}
	s.arrived = sync.NewCond(&s.Mu)
	if err := os.WriteFile(s.CAFile, caPEM, 0o600); err != nil {
		t.Fatalf("fakegithub: %v", err)
	}
	if err := os.Mkdir(s.home, 0o700); err != nil {
		t.Fatalf("fakegithub: %v", err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	// Set before serving: handlers read it, and gh's requests reach them
	// through another process, which the race detector cannot follow.
	s.Host = ts.Listener.Addr().String()
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return s
}

// Env is the whole environment gh needs to use the fake, and nothing from
// the real user: HOME and GH_CONFIG_DIR are temporary folders, so gh never
// reads ~/.config/gh, and the token is only the fake's.
func (s *Server) Env(configDir string) []string {
	return []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + s.home,
		"GH_HOST=" + s.Host,
		"GH_ENTERPRISE_TOKEN=" + s.Token,
		"SSL_CERT_FILE=" + s.CAFile,
		"GH_CONFIG_DIR=" + configDir,
		"GH_PROMPT_DISABLED=1",
		"GH_NO_UPDATE_NOTIFIER=1",
		"GH_SPINNER_DISABLED=1",
		"NO_COLOR=1",
		"GH_PAGER=cat",
		"PAGER=cat",
		"GIT_TERMINAL_PROMPT=0",
		"LANG=C.UTF-8",
	}
}

// Requests returns every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RepoFlag is the --repo value gh accepts for a repository on this host:
// "127.0.0.1:PORT/owner/name".
func (s *Server) RepoFlag(nameWithOwner string) string {
	return s.Host + "/" + nameWithOwner
}

func (s *Server) url(path string) string {
	return "https://" + s.Host + "/" + path
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "token "+s.Token {
		s.record(Request{Method: r.Method, Path: r.URL.Path})
		writeJSON(w, http.StatusUnauthorized, map[string]any{
			"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
		return
	}
	w.Header().Set("X-Oauth-Scopes", "repo, read:org, workflow, gist")
	if r.URL.Path == "/api/graphql" && r.Method == http.MethodPost {
		s.serveGraphQL(w, r)
		return
	}
	s.serveREST(w, r)
}

func (s *Server) record(req Request) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.requests = append(s.requests, req)
	s.arrived.Broadcast()
}

// WaitFor waits until the requests so far satisfy done: a test waits for
// a state (two merges arrived), never for a time.
func (s *Server) WaitFor(done func([]Request) bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for !done(s.requests) {
		s.arrived.Wait()
	}
}

// unknown answers what the fake does not know with GitHub's 404 and says so in
// the test log, so a new request from gh is found at once.
func (s *Server) unknown(w http.ResponseWriter, what string) {
	s.t.Logf("fakegithub: unknown request: %s", what)
	writeJSON(w, http.StatusNotFound, map[string]any{
		"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
}

func newCertificates() (tls.Certificate, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fakegithub test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}
