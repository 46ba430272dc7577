package rpc

import (
	"crypto/rand"

	"golang.org/x/crypto/chacha20poly1305"
)

// Protocol 2: the binary frame. Protocol 1 carries a sealed body as
// base64(nonce || ciphertext) inside a JSON text frame; base64 costs more
// than the AEAD itself (BENCHMARKS.md, "Sealing and dispatch"). A binary
// frame carries the same sealed bytes as they are:
//
//	byte 0       FrameVersion (0x02)
//	bytes 1-24   the 24-byte random nonce
//	bytes 25-    XChaCha20-Poly1305 ciphertext and its 16-byte tag
//
// The seal is protocol 1's exactly: the same key, the same additional data
// (RelayAAD, LANAAD and the LAN's session binding: sender, receiver,
// session and direction), and the plaintext is the same envelope, whose ts
// and nonce the replay guard checks. Only the carrying differs, so a frame
// turned from one form into the other by someone in the middle opens to
// the same plaintext, which the replay guard has already seen: a downgrade
// to protocol 1 costs speed, never a guarantee. The version byte is outside
// the seal for that reason, and because a protocol-1 parser reads it as a
// byte base64 never holds, so it refuses the frame instead of misreading it.

// FrameVersion is the first byte of a binary frame.
const FrameVersion = 0x02

// Protocol versions a host and a device can speak.
const (
	// ProtocolText is base64 bodies in text frames: every client.
	ProtocolText = 1
	// ProtocolBinary adds binary frames, for a client that announces it.
	ProtocolBinary = 2
)

// frameOverhead is what a binary frame adds to its plaintext.
const frameOverhead = 1 + chacha20poly1305.NonceSizeX + chacha20poly1305.Overhead

// SealFrame encrypts plaintext under key with additional data aad into a
// binary frame, with a fresh random nonce.
func SealFrame(key Key, plaintext, aad []byte) []byte {
	out := make([]byte, 1+chacha20poly1305.NonceSizeX, len(plaintext)+frameOverhead)
	if _, err := rand.Read(out[1:]); err != nil {
		panic("rpc: no randomness: " + err.Error())
	}
	return sealFrameInto(key, out, plaintext, aad)
}

// sealFrameInto seals after the nonce that out (version byte and nonce
// long) holds.
func sealFrameInto(key Key, out, plaintext, aad []byte) []byte {
	out[0] = FrameVersion
	aead, _ := chacha20poly1305.NewX(key[:])
	return aead.Seal(out, out[1:], plaintext, aad)
}

// OpenFrame decrypts a binary frame made by SealFrame. A frame of another
// version, shorter than a nonce and a tag, longer than MaxFrame, or that
// fails to open gets the one refusal a bad seal gets (errOpen).
func OpenFrame(key Key, frame, aad []byte) ([]byte, error) {
	if len(frame) < frameOverhead || len(frame) > MaxFrame || frame[0] != FrameVersion {
		return nil, errOpen
	}
	nonce, ct := frame[1:1+chacha20poly1305.NonceSizeX], frame[1+chacha20poly1305.NonceSizeX:]
	aead, _ := chacha20poly1305.NewX(key[:])
	plain, err := aead.Open(make([]byte, 0, len(ct)-chacha20poly1305.Overhead), nonce, ct, aad)
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}

// Frame is a sealed body as a transport carries it: Binary, a protocol-2
// frame (SealFrame); otherwise protocol 1's base64 text (Seal).
type Frame struct {
	Body   []byte
	Binary bool
}

// sealAs seals plain as a frame of the given form.
func sealAs(binary bool, key Key, plain, aad []byte) Frame {
	if binary {
		return Frame{Body: SealFrame(key, plain, aad), Binary: true}
	}
	return Frame{Body: []byte(Seal(key, plain, aad))}
}

// openAny opens a frame of either form; each form is bounded to what
// MaxFrame allows on the wire.
func openAny(key Key, f Frame, aad []byte) ([]byte, error) {
	if f.Binary {
		return OpenFrame(key, f.Body, aad)
	}
	if len(f.Body) > MaxFrame*4/3+4 {
		return nil, errOpen
	}
	return Open(key, string(f.Body), aad)
}
