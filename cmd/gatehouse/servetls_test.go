package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a certificate for names valid until notAfter, and its
// key, as 'tailscale cert' writes NAME.crt and NAME.key.
func writeCert(t *testing.T, dir string, names []string, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "x"}, DNSNames: names,
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "m.crt"), filepath.Join(dir, "m.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// The page's certificate: its name is the first DNS name without a
// wildcard; one expired or naming no host is refused with a sentence; a
// renewal written over the files is served from the next handshake.
func TestLANCertificate(t *testing.T) {
	dir := t.TempDir()
	c, k := writeCert(t, dir, []string{"*.tail1234.ts.net", "laptop.tail1234.ts.net"}, time.Now().Add(24*time.Hour))
	tl, err := loadLANTLS(c, k)
	if err != nil || tl.name != "laptop.tail1234.ts.net" {
		t.Fatalf("load: %v %+v", err, tl)
	}
	first, _ := tl.get(&tls.ClientHelloInfo{})
	c2, k2 := writeCert(t, t.TempDir(), []string{"laptop.tail1234.ts.net"}, time.Now().Add(48*time.Hour))
	for _, f := range [][2]string{{c2, c}, {k2, k}} {
		data, _ := os.ReadFile(f[0])
		if err := os.WriteFile(f[1], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	future := time.Now().Add(time.Minute)
	_ = os.Chtimes(c, future, future) // a renewal within the same clock tick still shows
	renewed, _ := tl.get(&tls.ClientHelloInfo{})
	if renewed == first || !renewed.Leaf.NotAfter.After(first.Leaf.NotAfter) {
		t.Fatal("the renewed certificate was not served")
	}
	c3, k3 := writeCert(t, t.TempDir(), []string{"laptop.tail1234.ts.net"}, time.Now().Add(-time.Hour))
	if _, err := loadLANTLS(c3, k3); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired certificate: %v", err)
	}
	c4, k4 := writeCert(t, t.TempDir(), []string{"*.tail1234.ts.net"}, time.Now().Add(time.Hour))
	if _, err := loadLANTLS(c4, k4); err == nil || !strings.Contains(err.Error(), "names no host") {
		t.Fatalf("a certificate naming no host: %v", err)
	}
	c5, k5 := writeCert(t, t.TempDir(), []string{"laptop.tail1234.ts.net"}, time.Now().Add(time.Hour))
	if err := os.Chmod(k5, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadLANTLS(c5, k5); err == nil || !strings.Contains(err.Error(), "readable by other users") {
		t.Fatalf("a key others can read: %v", err)
	}
}
