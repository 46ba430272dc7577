package rpc

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/crypto/chacha20poly1305"
)

// BenchmarkSeal compares the envelope's seal+open (random nonce, base64,
// additional data) and the binary frame's (protocol 2: no base64) with the
// raw AEAD on the same bytes. Target: ≤ 1.2× for the binary frame.
func BenchmarkSeal(b *testing.B) {
	k := testKey()
	aad := RelayAAD("phone-1", "host-1")
	for _, size := range []int{1 << 10, 64 << 10} {
		pt := make([]byte, size)
		_, _ = rand.Read(pt)
		name := strconv.Itoa(size>>10) + "KiB"
		b.Run(name+"/raw-aead", func(b *testing.B) {
			aead, _ := chacha20poly1305.NewX(k[:])
			nonce := make([]byte, chacha20poly1305.NonceSizeX)
			b.SetBytes(int64(size))
			for b.Loop() {
				_, _ = rand.Read(nonce)
				ct := aead.Seal(nil, nonce, pt, aad)
				if _, err := aead.Open(nil, nonce, ct, aad); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/raw-aead+base64", func(b *testing.B) {
			// The floor the wire format sets: the same AEAD work plus the
			// base64 the body is carried in, and nothing else.
			aead, _ := chacha20poly1305.NewX(k[:])
			nonce := make([]byte, chacha20poly1305.NonceSizeX)
			b.SetBytes(int64(size))
			for b.Loop() {
				_, _ = rand.Read(nonce)
				body := base64.StdEncoding.EncodeToString(aead.Seal(nil, nonce, pt, aad))
				ct, _ := base64.StdEncoding.DecodeString(body)
				if _, err := aead.Open(nil, nonce, ct, aad); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/envelope", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := Open(k, Seal(k, pt, aad), aad); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/binary-frame", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := OpenFrame(k, SealFrame(k, pt, aad), aad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDispatch is the host's own cost for a trivial read method: the
// lookup, both access checks, the lane, the handler, the JSON of the reply.
func BenchmarkDispatch(b *testing.B) {
	reg := NewRegistry()
	_ = Register(reg, Method{Name: "test.ping", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
		func(ctx context.Context, c *Call, _ struct{}) (any, error) { return "pong", nil })
	g := &grantTable{g: map[string]trust.Grant{}}
	g.set(phone.ID, trust.View)
	h := NewHost(HostOptions{Registry: reg, Targets: NewTargets(fsguard.Options{}, gate.Options{}), Grants: g})
	defer h.Close()
	r := Request{Type: "req", ID: "1", Method: "test.ping", Params: json.RawMessage("{}"), TS: time.Now().UnixMilli(), Nonce: "nonce-nonce-nonce"}
	b.ReportAllocs()
	for b.Loop() {
		if res := h.Handle(context.Background(), phone, r); !res.OK {
			b.Fatal(res.Error)
		}
	}
}
