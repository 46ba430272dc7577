package rpc

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/crypto/chacha20poly1305"
)

// Key is a 32-byte XChaCha20-Poly1305 key shared by a host and one device.
type Key [32]byte

// info binds derived keys to this protocol and its version.
const info = "gatehouse v1"

var errOpen = errors.New("rpc: frame does not open")

// PairKey derives the key a device and a host share through the relay:
// HKDF-SHA256 over X25519(mine, theirs), salted with both "id:publicKey"
// strings sorted and joined by "|" (public keys in standard base64). The
// seed salted with the ids alone; binding both public keys too, as age and
// HPKE do, ties the key to exactly these two keys. Ids never hold '|' or ':'.
func PairKey(mine *ecdh.PrivateKey, myID, theirID string, theirPublic []byte) (Key, error) {
	var k Key
	if strings.ContainsAny(myID, "|:") || strings.ContainsAny(theirID, "|:") || myID == theirID {
		return k, errors.New("rpc: device ids may not hold | or : and must differ")
	}
	pub, err := ecdh.X25519().NewPublicKey(theirPublic)
	if err != nil {
		return k, fmt.Errorf("rpc: peer key: %w", err)
	}
	shared, err := mine.ECDH(pub)
	if err != nil {
		return k, fmt.Errorf("rpc: x25519: %w", err)
	}
	parts := []string{
		myID + ":" + base64.StdEncoding.EncodeToString(mine.PublicKey().Bytes()),
		theirID + ":" + base64.StdEncoding.EncodeToString(theirPublic),
	}
	sort.Strings(parts)
	out, err := hkdf.Key(sha256.New, shared, []byte(strings.Join(parts, "|")), info, len(k))
	if err != nil {
		return k, err
	}
	copy(k[:], out)
	return k, nil
}

// Seal encrypts plaintext under key with additional data aad and returns
// base64(nonce24 || ciphertext): a fresh random 24-byte nonce every time.
func Seal(key Key, plaintext, aad []byte) string {
	var nonce [chacha20poly1305.NonceSizeX]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		panic("rpc: no randomness: " + err.Error())
	}
	return sealWithNonce(key, nonce, plaintext, aad)
}

// sealWithNonce is Seal with a given nonce: for test vectors only, since a
// nonce must never repeat under one key.
func sealWithNonce(key Key, nonce [chacha20poly1305.NonceSizeX]byte, plaintext, aad []byte) string {
	aead, _ := chacha20poly1305.NewX(key[:])
	bp := getBuf(len(nonce) + len(plaintext) + aead.Overhead())
	defer putBuf(bp)
	buf := append((*bp)[:0], nonce[:]...)
	buf = aead.Seal(buf, nonce[:], plaintext, aad)
	return base64.StdEncoding.EncodeToString(buf)
}

// bufs recycles the ciphertext buffers of Seal and Open: frames up to a
// few hundred KiB, allocated and cleared on every message otherwise.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func getBuf(n int) *[]byte {
	bp := bufs.Get().(*[]byte)
	if cap(*bp) < n {
		*bp = make([]byte, 0, n)
	}
	return bp
}

func putBuf(bp *[]byte) {
	if cap(*bp) <= 1<<20 { // keep no frame-sized buffer past a megabyte
		bufs.Put(bp)
	}
}

// Open decrypts a body made by Seal. Any change to the body or the
// additional data fails.
func Open(key Key, body string, aad []byte) ([]byte, error) {
	bp := getBuf(base64.StdEncoding.DecodedLen(len(body)))
	defer putBuf(bp)
	raw, err := base64.StdEncoding.Strict().AppendDecode((*bp)[:0], []byte(body))
	*bp = raw[:0]
	if err != nil || len(raw) < chacha20poly1305.NonceSizeX+chacha20poly1305.Overhead {
		return nil, errOpen
	}
	aead, _ := chacha20poly1305.NewX(key[:])
	ct := raw[chacha20poly1305.NonceSizeX:]
	plain, err := aead.Open(make([]byte, 0, len(ct)-chacha20poly1305.Overhead), raw[:chacha20poly1305.NonceSizeX], ct, aad)
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}

// RelayAAD is the additional data of a frame through the relay.
func RelayAAD(from, to string) []byte { return []byte(from + "|" + to) }

// LANAAD is the additional data of a frame on a LAN link: the device's id
// and which way the frame goes ("host" for requests, "device" for replies
// and events), so a reply can never be fed back as a request.
func LANAAD(deviceID, toward string) []byte { return []byte(deviceID + "|" + toward) }

// KeyCache remembers pair keys by (device id, public key), so a key change
// in presence derives a new key from the current one (X25519 and HKDF cost
// about 50 µs; a cached key nothing).
type KeyCache struct {
	mu   sync.Mutex
	mine *ecdh.PrivateKey
	myID string
	keys map[string]Key
}

// NewKeyCache makes a cache for this side's key pair and id.
func NewKeyCache(mine *ecdh.PrivateKey, myID string) *KeyCache {
	return &KeyCache{mine: mine, myID: myID, keys: map[string]Key{}}
}

// Get returns the pair key for a peer with the given public key.
func (c *KeyCache) Get(peerID string, peerPublic []byte) (Key, error) {
	id := peerID + "|" + base64.StdEncoding.EncodeToString(peerPublic)
	c.mu.Lock()
	k, ok := c.keys[id]
	c.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := PairKey(c.mine, c.myID, peerID, peerPublic)
	if err != nil {
		return k, err
	}
	c.mu.Lock()
	if len(c.keys) > 4096 {
		clear(c.keys) // a bound, never hit by a real account of ten devices
	}
	c.keys[id] = k
	c.mu.Unlock()
	return k, nil
}
