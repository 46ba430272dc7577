package relayserver

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/gatehouse/gatehouse/relay"
)

// BenchmarkForward64KiB is the relay forwarding 64 KiB sealed bodies from
// one device to another through a real relay on loopback (a real socket
// each way, the sender's masking and the receiver's read included, all on
// this machine's cores), against the raw AEAD's seal+open of the same 64
// KiB in the same run: text is protocol 1's frame (the body in base64,
// 87 KiB on the wire), binary protocol 2's (relay/binary.go). MB/s counts
// the 64 KiB of plaintext each frame carries. Target: binary ≥ 0.5× the
// raw AEAD.
//
//	go test -run '^$' -bench Forward64KiB -benchtime 2000x -count 6 ./relay/relayserver/
func BenchmarkForward64KiB(b *testing.B) {
	const size = 64 << 10
	plain := make([]byte, size)
	_, _ = rand.Read(plain)
	b.Run("raw-aead", func(b *testing.B) {
		key := make([]byte, chacha20poly1305.KeySize)
		aead, _ := chacha20poly1305.NewX(key)
		nonce := make([]byte, chacha20poly1305.NonceSizeX)
		b.SetBytes(size)
		for b.Loop() {
			_, _ = rand.Read(nonce)
			ct := aead.Seal(nil, nonce, plain, nil)
			if _, err := aead.Open(nil, nonce, ct, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A sealed body's size: version, nonce, ciphertext and tag.
	sealed := make([]byte, 1+24+size+16)
	_, _ = rand.Read(sealed)
	r := startRelay(b, func(o *Options) { o.FrameLimitForTest = &FrameLimit{Rate: 1e9, Burst: 1e9} })
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsH, wsP := r.dial(host, true), r.dial(phone, false)
	next(b, wsH, "presence")
	next(b, wsP, "presence")
	b.Run("text", func(b *testing.B) {
		frame := []byte(`{"to":"` + host.profile.DeviceID + `","body":"` + base64.StdEncoding.EncodeToString(sealed[1:]) + `"}`)
		forward(b, wsP, wsH, websocket.TextMessage, frame, size)
	})
	b.Run("binary", func(b *testing.B) {
		frame := relay.AppendBinary(nil, "", host.profile.DeviceID, "", sealed)
		forward(b, wsP, wsH, websocket.BinaryMessage, frame, size)
	})
}

// forward sends frame from one socket and reads it at the other, b.N
// times, with at most a few frames in flight (more would only fill the
// receiver's queue and be undeliverable).
func forward(b *testing.B, from, to *websocket.Conn, typ int, frame []byte, size int64) {
	const window = 4
	b.SetBytes(size)
	got := make(chan error, 1)
	credit := make(chan struct{}, window)
	for range window {
		credit <- struct{}{}
	}
	b.ResetTimer()
	go func() {
		for range b.N {
			for {
				t, data, err := to.ReadMessage()
				if err != nil {
					got <- err
					return
				}
				if t == typ && len(data) > 1<<10 {
					break
				}
			}
			credit <- struct{}{}
		}
		got <- nil
	}()
	for range b.N {
		select {
		case <-credit:
		case err := <-got: // the receiver stopped early
			b.Fatalf("the receiving socket: %v", err)
		}
		if err := from.WriteMessage(typ, frame); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-got; err != nil {
		b.Fatalf("the receiving socket: %v", err)
	}
}
