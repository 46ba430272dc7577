package lan

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// testCert is a certificate for name, as `tailscale cert` gives one for a
// machine's Tailscale name, and the pool that trusts it.
func testCert(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// httpsClient trusts pool and finds name at 127.0.0.1, as a phone on the
// tailnet finds the machine's name.
func httpsClient(t *testing.T, pool *x509.CertPool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
		}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: time.Minute, Transport: tr}
}

// Served over HTTPS at a name its certificate covers (a Tailscale name), no
// other program can serve the page's origin: the squatter on the kept port
// has no certificate for the name, so the phone opens nothing of its, and a
// page's stored secret stays good across restarts (a page reloaded after a
// restart comes back by itself, no code asked).
func TestOverHTTPSAStoredSecretOutlivesARestart(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	store := newStore(t)
	cert, pool := testCert(t, "laptop.tail1234.ts.net")
	keep := func(o *Options) {
		o.Keep, o.Name = store, "laptop.tail1234.ts.net"
		o.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	f, stop := serveRepo(t, repo, keep)
	f.hc = httpsClient(t, pool)
	if !strings.HasPrefix(f.srv.Pairing().Link(), "https://laptop.tail1234.ts.net:") {
		t.Fatalf("the link: %s", f.srv.Pairing().Link())
	}
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.call(t, p, "host.hello", nil); err != nil {
		t.Fatal(err)
	}
	addr := f.srv.l.Addr().String()
	storage := Paired{Base: p.Base, DeviceID: p.DeviceID, Stored: p.Stored}
	stop()

	// The squatter can listen on the port, but cannot be the origin.
	rec, leave := squatter(t, addr)
	if _, err := Resume(context.Background(), f.hc, &storage); err == nil || errors.Is(err, ErrNotPaired) {
		t.Fatalf("a resume to the squatter over HTTPS: %v", err)
	}
	leave()
	if n := len(rec.recording()); n != 0 {
		t.Fatalf("the squatter read %d requests over HTTPS", n)
	}

	f, _ = serveRepo(t, repo, keep)
	f.hc = httpsClient(t, pool)
	reloaded := storage
	if _, err := f.call(t, &reloaded, "host.hello", nil); err != nil {
		t.Fatalf("a page reloaded after a restart, over HTTPS: %v", err)
	}
}
