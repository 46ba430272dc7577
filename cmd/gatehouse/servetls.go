package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// lanTLS is serve's certificate for an HTTPS page address: a Tailscale
// name's, from `tailscale cert`. Over HTTPS no other program can serve the
// page's origin (it would need the certificate's key), which plain HTTP
// cannot promise (docs/lan.md, "Threat model"). The files are read again
// when they change, as tailscale renews the certificate every few months.
type lanTLS struct {
	certFile, keyFile string
	name              string // the name the certificate covers, which the page's address uses

	mu    sync.Mutex
	cert  *tls.Certificate
	stamp string // the files' sizes and times when cert was read
}

// loadLANTLS reads the certificate and key, refusing with a sentence one
// that cannot serve a page: unreadable, expired, or without a DNS name.
func loadLANTLS(certFile, keyFile string) (*lanTLS, error) {
	t := &lanTLS{certFile: certFile, keyFile: keyFile}
	cert, stamp, err := t.read()
	if err != nil {
		return nil, err
	}
	for _, n := range cert.Leaf.DNSNames {
		if !strings.Contains(n, "*") {
			t.name = n
			break
		}
	}
	if t.name == "" {
		return nil, fmt.Errorf("the certificate %s names no host (a DNS name without '*'); 'tailscale cert' makes one for this machine's Tailscale name", certFile)
	}
	t.cert, t.stamp = cert, stamp
	return t, nil
}

func (t *lanTLS) read() (*tls.Certificate, string, error) {
	stamp := ""
	for _, f := range []string{t.certFile, t.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, "", fmt.Errorf("the certificate: %w", err)
		}
		stamp += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	if fi, err := os.Stat(t.keyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
		// Whoever can read the key can pose as this page.
		return nil, "", fmt.Errorf("the key %s is readable by other users (mode %o); make it yours alone: chmod 600 %s", t.keyFile, fi.Mode().Perm(), t.keyFile)
	}
	cert, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("the certificate %s and key %s: %w", t.certFile, t.keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, "", err
		}
	}
	if time.Now().After(cert.Leaf.NotAfter) {
		return nil, "", fmt.Errorf("the certificate %s expired on %s; renew it ('tailscale cert')", t.certFile, cert.Leaf.NotAfter.Format(time.DateOnly))
	}
	if time.Now().Before(cert.Leaf.NotBefore) {
		return nil, "", fmt.Errorf("the certificate %s is not valid before %s, so browsers refuse it; check this computer's clock", t.certFile, cert.Leaf.NotBefore.Format(time.DateTime))
	}
	return &cert, stamp, nil
}

// get is the server's GetCertificate: the certificate, read again when its
// files changed (a renewal). A renewal that does not read keeps the last
// good one.
func (t *lanTLS) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	stamp := ""
	for _, f := range []string{t.certFile, t.keyFile} {
		if fi, err := os.Stat(f); err == nil {
			stamp += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if stamp != t.stamp {
		if cert, s, err := t.read(); err == nil && cert.Leaf.VerifyHostname(t.name) == nil {
			t.cert, t.stamp = cert, s
		}
	}
	if t.cert == nil {
		return nil, errors.New("no certificate")
	}
	return t.cert, nil
}

// config is the server's TLS configuration.
func (t *lanTLS) config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.get}
}
