package lan

import (
	"crypto/ecdh"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/rpc"
)

var updateVectors = flag.Bool("update", false, "rewrite testdata/agree-vectors.json")

// fixedKey is an X25519 private key of the bytes start, start+1, ...
func fixedKey(t *testing.T, start byte) *ecdh.PrivateKey {
	t.Helper()
	b := make([]byte, 32)
	for i := range b {
		b[i] = start + byte(i)
	}
	k, err := ecdh.X25519().NewPrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func filled(b byte) [32]byte {
	var k [32]byte
	for i := range k {
		k[i] = b
	}
	return k
}

// agreeVectors computes every derivation of agree.go from fixed inputs.
// testdata/agree-vectors.json holds them; web/test/agree.test.mjs checks
// the page derives the same from the same inputs.
func agreeVectors(t *testing.T) map[string]string {
	t.Helper()
	var psk rpc.Key
	for i := range psk {
		psk[i] = byte(i)
	}
	const scope, name, kind, deviceID, sessionID = "link:L1", "Chrome on Android (4f2a)", "page", "lan-TEST", "sid-1"
	d := newDeviceStartWith(scope, psk, name, kind, fixedKey(t, 1), filled(0x11))
	h, err := hostOfferWith(scope, psk, name, kind, d.h.pkA, fixedKey(t, 33), filled(0x22))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.committed(h.pkB, h.commit); err != nil {
		t.Fatal(err)
	}
	h.na = d.h.na
	if err := d.opened(h.nb); err != nil {
		t.Fatal(err)
	}
	if d.h.code() != h.code() || d.h.key != h.key {
		t.Fatalf("the two sides differ: %s %s", d.h.code(), h.code())
	}
	stored, fp := h.outcome(deviceID)
	e, hk := fixedKey(t, 65), fixedKey(t, 97)
	dh, err := exchange(e, hk.PublicKey().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ks := sessionKeys(dh, stored, deviceID, sessionID, e.PublicKey().Bytes(), hk.PublicKey().Bytes())
	ticket := filled(0x33)
	x := func(b []byte) string { return hex.EncodeToString(b) }
	rk := resumeKey(stored, modeStored, deviceID, "")
	tk := resumeKey(ticket, modeTicket, deviceID, "tk1")
	rc := reconnectKey(stored, deviceID)
	ns := nextStored(ticket, deviceID, "run-1")
	return map[string]string{
		"psk": x(psk[:]), "scope": scope, "name": name, "kind": kind, "deviceId": deviceID, "sessionId": sessionID,
		"a": x(fixedKey(t, 1).Bytes()), "b": x(fixedKey(t, 33).Bytes()), "na": x(h.na), "nb": x(h.nb),
		"e": x(e.Bytes()), "h": x(hk.Bytes()), "ticket": x(ticket[:]),
		"pkA": x(h.pkA), "pkB": x(h.pkB), "commit": x(h.commit), "handshakeKey": x(h.key[:]), "transcript": x(h.transcript()),
		"code": h.code(), "stored": x(stored[:]), "fingerprint": fp, "reconnectKey": x(rc[:]),
		"resumeKeyStored": x(rk[:]), "resumeKeyTicket": x(tk[:]),
		"sessionKey": x(ks.key[:]), "sessionAuth": x(ks.auth[:]), "sessionTicket": x(ks.ticket[:]), "nextStored": x(ns[:]),
		"callMAC": callMAC(ks.auth, deviceID, sessionID, "1700000000000", "nonce-abc"),
	}
}

// The derivations are fixed by their inputs: a change to any of them (the
// page's or the computer's) fails here or in web/test/agree.test.mjs.
func TestAgreeVectors(t *testing.T) {
	got := agreeVectors(t)
	const file = "testdata/agree-vectors.json"
	if *updateVectors {
		data, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want map[string]string
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for k, v := range got {
		if want[k] != v {
			t.Errorf("%s = %s, the vectors say %s (go test ./rpc/lan -run TestAgreeVectors -update rewrites them, on purpose only)", k, v, want[k])
		}
	}
}

// mitm is a man in the middle who holds the link: it plays the computer to
// the phone and the phone to the computer, with keys of its own.
type mitm struct {
	toPhone *handshake   // its offer to the phone
	toHost  *deviceStart // its start toward the computer
}

// A man in the middle who holds the link (a photo of the QR code) and
// relays the handshake shows the phone one code and the computer another:
// the person sees them differ and denies.
func TestAManInTheMiddleShowsAnotherCode(t *testing.T) {
	psk := randomKey()
	const scope = "link:L"
	for i := range 20 {
		phone := newDeviceStart(scope, psk, "phone", "page")
		var m mitm
		var err error
		if m.toPhone, err = hostOffer(scope, psk, "phone", "page", phone.h.pkA); err != nil {
			t.Fatal(err)
		}
		m.toHost = newDeviceStart(scope, psk, "phone", "page")
		host, err := hostOffer(scope, psk, "phone", "page", m.toHost.h.pkA)
		if err != nil {
			t.Fatal(err)
		}
		if err := phone.committed(m.toPhone.pkB, m.toPhone.commit); err != nil {
			t.Fatal(err)
		}
		if err := m.toHost.committed(host.pkB, host.commit); err != nil {
			t.Fatal(err)
		}
		m.toPhone.na, host.na = phone.h.na, m.toHost.h.na
		if err := phone.opened(m.toPhone.nb); err != nil {
			t.Fatal(err)
		}
		if phone.h.code() == host.code() {
			t.Fatalf("round %d: the phone and the computer show the same code %s", i, host.code())
		}
		if phone.h.key == host.key {
			t.Fatal("the relayed handshakes agreed one key")
		}
	}
}

// Why the computer commits to its nonce: without the commitment, a man in
// the middle who learned the code the computer shows picks its nonce toward
// the phone after seeing the phone's, and steers the phone's code to it
// (three digits here in about a thousand tries; all six in about a million,
// a second of work). With the commitment the phone refuses a nonce that was
// not committed before it revealed its own.
func TestTheCommitmentStopsSteering(t *testing.T) {
	psk := randomKey()
	const scope = "link:L"
	// The man in the middle completes the computer's side first.
	toHost := newDeviceStart(scope, psk, "phone", "page")
	host, err := hostOffer(scope, psk, "phone", "page", toHost.h.pkA)
	if err != nil {
		t.Fatal(err)
	}
	host.na = toHost.h.na
	target := host.code()[:3]
	// Then the phone: an offer whose commitment binds nothing it will reveal.
	phone := newDeviceStart(scope, psk, "phone", "page")
	fake, err := hostOffer(scope, psk, "phone", "page", phone.h.pkA)
	if err != nil {
		t.Fatal(err)
	}
	if err := phone.committed(fake.pkB, fake.commit); err != nil {
		t.Fatal(err)
	}
	tries := 0
	var steered []byte
	for ; tries < 200_000; tries++ {
		nb := random32()
		phone.h.nb = nb[:] // as a phone that took any nonce would
		if phone.h.code()[:3] == target {
			steered = nb[:]
			break
		}
	}
	if steered == nil {
		t.Fatalf("no steered nonce in %d tries", tries)
	}
	t.Logf("without the commitment, the phone's code was steered to the computer's first three digits %s in %d tries", target, tries+1)
	phone.h.nb = nil
	if err := phone.opened(steered); err == nil {
		t.Fatal("the phone took a nonce its commitment did not bind")
	}
}
