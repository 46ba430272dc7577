package lan

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/rpc"
)

// Key agreement on the LAN link. Nothing secret ever travels, not even
// under the link's key: every key either side uses is derived from an
// X25519 exchange of fresh keys, so a listener who holds the link (a photo
// of the QR code) and records everything learns nothing it can open.
//
// Pairing (and reconnecting after a restart) is a handshake with a short
// authentication string, as Bluetooth's numeric comparison: the device
// sends its public key A; the computer answers its public key B with a
// commitment to a random nonce Nb; the device reveals its nonce Na; the
// computer reveals Nb. Both compute a six-digit code over the whole
// transcript and the person compares the two screens. Each side's code
// depends on a nonce the other side (or a man in the middle) had to fix
// before seeing it, so an active attacker who holds the link shows a
// different code except by a one-in-a-million chance per visible request.
// The link key (or, to reconnect, the device's stored secret) is the
// handshake's pre-shared key: it keeps those who lack it out altogether.
//
// After pairing, a device opens a session with a resume: a fresh X25519
// exchange authenticated by a secret the device holds (its stored secret,
// or a ticket from an earlier session). The session's keys come from that
// exchange, so a secret stolen later opens no recorded frame, and sessions
// live in memory only, so nothing recorded replays after a restart.
// docs/lan.md has the whole protocol and its threat model.

// Labels keep every derivation apart from every other.
const (
	labelHandshake  = "gatehouse lan handshake v2"
	labelCommit     = "gatehouse lan commit v2"
	labelTranscript = "gatehouse lan transcript v2"
	labelCode       = "gatehouse lan code v2"
	labelStored     = "gatehouse lan stored v2"
	labelDevice     = "gatehouse lan device v2"
	labelReconnect  = "gatehouse lan reconnect v2"
	labelResume     = "gatehouse lan resume v2"
	labelSession    = "gatehouse lan session v2"
	labelAuth       = "gatehouse lan auth v2"
	labelTicket     = "gatehouse lan ticket v2"
	labelNextStored = "gatehouse lan next stored v2"
)

// lp is the length-prefixed encoding every derivation hashes: each part as
// its length (4 bytes, big-endian) and its bytes, so no two lists of parts
// encode alike. web/src/agree.js encodes the same.
func lp(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += 4 + len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

func str(v string) []byte { return []byte(v) }

// derive is HKDF-SHA256 of ikm with salt, for the parts given as info.
func derive(ikm, salt []byte, info ...[]byte) rpc.Key {
	var k rpc.Key
	out, err := hkdf.Key(sha256.New, ikm, salt, string(lp(info...)), len(k))
	if err != nil {
		panic("lan: hkdf: " + err.Error()) // only for lengths HKDF cannot give
	}
	copy(k[:], out)
	return k
}

var errBadKey = errors.New("lan: not an X25519 public key")

// exchange is X25519(mine, theirs), refusing a peer key that is malformed or
// gives the all-zero secret (a low-order point).
func exchange(mine *ecdh.PrivateKey, theirs []byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(theirs)
	if err != nil {
		return nil, errBadKey
	}
	dh, err := mine.ECDH(pub)
	if err != nil {
		return nil, errBadKey
	}
	return dh, nil
}

func newX25519() *ecdh.PrivateKey {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		panic("lan: no randomness: " + err.Error())
	}
	return k
}

func random32() [32]byte {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return b
}

// handshake is one pairing or reconnecting exchange, as either side sees
// it. scope names what the pre-shared key belongs to ("link:ID" for a new
// device, "device:ID" for one reconnecting), name and kind are what the
// device said it is.
type handshake struct {
	scope, name, kind string
	psk               rpc.Key
	pkA, pkB          []byte
	commit            []byte
	na, nb            []byte
	dh                []byte
	key               rpc.Key // seals the reveal, the wait and the answer
}

// handshakeKey seals the handshake's later messages: only the two ends of
// this exchange (who hold a private key of it) and the pre-shared key have it.
func (h *handshake) handshakeKey() rpc.Key {
	return derive(h.dh, h.psk[:], str(labelHandshake), str(h.scope), h.pkA, h.pkB)
}

// commitment is the computer's commitment to its nonce.
func commitment(pkB, pkA, nb []byte) []byte {
	c := sha256.Sum256(lp(str(labelCommit), pkB, pkA, nb))
	return c[:]
}

// hostOffer is the computer's side after the device's first message: a
// fresh key pair and nonce, and the commitment it sends.
func hostOffer(scope string, psk rpc.Key, name, kind string, pkA []byte) (*handshake, error) {
	nb := random32()
	return hostOfferWith(scope, psk, name, kind, pkA, newX25519(), nb)
}

// hostOfferWith is hostOffer with the computer's key and nonce given (test
// vectors).
func hostOfferWith(scope string, psk rpc.Key, name, kind string, pkA []byte, b *ecdh.PrivateKey, nb [32]byte) (*handshake, error) {
	dh, err := exchange(b, pkA)
	if err != nil {
		return nil, err
	}
	h := &handshake{scope: scope, name: name, kind: kind, psk: psk, pkA: pkA, pkB: b.PublicKey().Bytes(), nb: nb[:], dh: dh}
	h.commit = commitment(h.pkB, pkA, h.nb)
	h.key = h.handshakeKey()
	return h, nil
}

// deviceStart is the device's side before it sends its key: its key pair
// and nonce.
type deviceStart struct {
	h *handshake
	a *ecdh.PrivateKey
}

func newDeviceStart(scope string, psk rpc.Key, name, kind string) *deviceStart {
	return newDeviceStartWith(scope, psk, name, kind, newX25519(), random32())
}

// newDeviceStartWith is newDeviceStart with the device's key and nonce
// given (test vectors).
func newDeviceStartWith(scope string, psk rpc.Key, name, kind string, a *ecdh.PrivateKey, na [32]byte) *deviceStart {
	return &deviceStart{a: a, h: &handshake{scope: scope, name: name, kind: kind, psk: psk, pkA: a.PublicKey().Bytes(), na: na[:]}}
}

// committed takes the computer's key and commitment.
func (d *deviceStart) committed(pkB, commit []byte) error {
	dh, err := exchange(d.a, pkB)
	if err != nil {
		return err
	}
	if len(commit) != sha256.Size {
		return errors.New("lan: a commitment is 32 bytes")
	}
	d.h.pkB, d.h.commit, d.h.dh = pkB, commit, dh
	d.h.key = d.h.handshakeKey()
	return nil
}

// opened takes the computer's revealed nonce and checks it against the
// commitment: a computer (or a man in the middle) that chose its nonce
// after seeing the device's is caught here.
func (d *deviceStart) opened(nb []byte) error {
	if subtle.ConstantTimeCompare(commitment(d.h.pkB, d.h.pkA, nb), d.h.commit) != 1 {
		return errors.New("lan: the computer's nonce does not match its commitment")
	}
	d.h.nb = nb
	return nil
}

// transcript hashes everything both sides said, in order.
func (h *handshake) transcript() []byte {
	t := sha256.Sum256(lp(str(labelTranscript), str(h.scope), str(h.name), str(h.kind), h.pkA, h.pkB, h.commit, h.na, h.nb))
	return t[:]
}

// code is the six digits the person compares, as "123 456".
func (h *handshake) code() string {
	c := sha256.Sum256(lp(str(labelCode), h.transcript()))
	n := binary.BigEndian.Uint32(c[:4]) % 1_000_000
	return fmt.Sprintf("%03d %03d", n/1000, n%1000)
}

// outcome is what an allowed handshake gives the device named deviceID:
// its stored secret and the fingerprint its requests are logged under.
// Both sides derive them; neither is sent.
func (h *handshake) outcome(deviceID string) (stored rpc.Key, fingerprint string) {
	tr := h.transcript()
	stored = derive(h.dh, h.psk[:], str(labelStored), tr, str(deviceID))
	fp := sha256.Sum256(lp(str(labelDevice), tr, str(deviceID)))
	return stored, fmt.Sprintf("%x", fp[:16])
}

// reconnectKey seals a reconnect's first message: a key of the device's
// stored secret, kept apart from the secret's use in resumes.
func reconnectKey(stored rpc.Key, deviceID string) rpc.Key {
	return derive(stored[:], nil, str(labelReconnect), str(deviceID))
}

// Resume modes: by the secret the page stores, or by a ticket an earlier
// session left in memory (a page that stayed open, or gatehouse call's
// owner-only file).
const (
	modeStored = "stored"
	modeTicket = "ticket"
)

// resumeKey seals a resume and its answer under the device's secret for
// that mode (ticketID is "" for the stored secret).
func resumeKey(secret rpc.Key, mode, deviceID, ticketID string) rpc.Key {
	return derive(secret[:], nil, str(labelResume), str(mode), str(deviceID), str(ticketID))
}

// sessionSecrets are what one session's exchange gives both sides.
type sessionSecrets struct {
	key    rpc.Key // seals calls, replies and events
	auth   rpc.Key // authenticates a call's headers before its body is read
	ticket rpc.Key // resumes after a restart; never stored by the page
}

// sessionKeys derives a session's secrets from its X25519 exchange, salted
// with the secret that authenticated the resume.
func sessionKeys(dh []byte, secret rpc.Key, deviceID, sessionID string, pkE, pkH []byte) sessionSecrets {
	prk, err := hkdf.Extract(sha256.New, dh, secret[:])
	if err != nil {
		panic("lan: hkdf: " + err.Error())
	}
	ctx := func(label string) string { return string(lp(str(label), str(deviceID), str(sessionID), pkE, pkH)) }
	expand := func(label string) rpc.Key {
		var k rpc.Key
		out, err := hkdf.Expand(sha256.New, prk, ctx(label), len(k))
		if err != nil {
			panic("lan: hkdf: " + err.Error())
		}
		copy(k[:], out)
		return k
	}
	return sessionSecrets{key: expand(labelSession), auth: expand(labelAuth), ticket: expand(labelTicket)}
}

// nextStored is the stored secret a ticket gives a device at the first
// resume of a serve run: derived from the ticket (which only the device's
// open page holds), so the page derives it again if the answer that said so
// was lost, and whoever replays a recorded resume learns nothing of it.
func nextStored(ticket rpc.Key, deviceID, run string) rpc.Key {
	return derive(ticket[:], nil, str(labelNextStored), str(deviceID), str(run))
}
