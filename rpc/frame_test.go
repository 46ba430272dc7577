package rpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/crypto/chacha20poly1305"
)

func TestFrameRoundTripAndRefusals(t *testing.T) {
	k := testKey()
	aad := RelayAAD("phone-1", "host-1")
	plain := []byte(`{"type":"req"}`)
	f := SealFrame(k, plain, aad)
	if f[0] != FrameVersion || len(f) != len(plain)+1+24+16 {
		t.Fatalf("frame shape: % x", f[:4])
	}
	if got, err := OpenFrame(k, f, aad); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("round trip: %q %v", got, err)
	}
	// Every bound and every binding refuses with the one refusal of a bad
	// seal: another direction, another version, a flipped byte anywhere,
	// too short, too long, the key of another pair.
	other := k
	other[0] ^= 1
	long := append([]byte{FrameVersion}, make([]byte, MaxFrame)...)
	cases := map[string]struct {
		key   Key
		frame []byte
		aad   []byte
	}{
		"reversed direction": {k, f, RelayAAD("host-1", "phone-1")},
		"other key":          {other, f, aad},
		"version 1 byte":     {k, append([]byte{1}, f[1:]...), aad},
		"base64 text":        {k, []byte(Seal(k, plain, aad)), aad},
		"empty":              {k, nil, aad},
		"version only":       {k, []byte{FrameVersion}, aad},
		"nonce and no tag":   {k, f[:1+24+15], aad},
		"over MaxFrame":      {k, long, aad},
	}
	for i := range f {
		g := bytes.Clone(f)
		g[i] ^= 0x40
		cases["flipped byte "+strconv.Itoa(i)] = struct {
			key   Key
			frame []byte
			aad   []byte
		}{k, g, aad}
	}
	for name, c := range cases {
		if _, err := OpenFrame(c.key, c.frame, c.aad); !errors.Is(err, errOpen) {
			t.Errorf("%s: %v, want the bad-seal refusal", name, err)
		}
	}
}

// A protocol-1 parser never misreads a binary frame: base64 has no byte
// 0x02, so Open refuses it, and the JSON {f} a protocol-1 transport reads
// cannot hold it either.
func TestFrameRefusedByProtocol1Parser(t *testing.T) {
	k := testKey()
	aad := LANAAD("phone-1", "host")
	f := SealFrame(k, []byte(`{"type":"req"}`), aad)
	if _, err := Open(k, string(f), aad); !errors.Is(err, errOpen) {
		t.Fatalf("a protocol-1 Open read a binary frame: %v", err)
	}
}

// FuzzOpenFrame: no input panics; what opens is exactly what was sealed
// (the frame is not malleable: any other bytes refuse).
func FuzzOpenFrame(f *testing.F) {
	k := testKey()
	aad := RelayAAD("a", "b")
	sealed := sealFrameWithNonce(k, [24]byte{1, 2, 3}, []byte("hello"), aad) // the same in every fuzz worker
	f.Add(sealed, -1)
	f.Add([]byte{FrameVersion}, 0)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, in []byte, flip int) {
		plain, err := OpenFrame(k, in, aad)
		if err == nil && !bytes.Equal(in, sealed) {
			t.Fatalf("a frame not made by SealFrame opened: % x -> %q", in, plain)
		}
		if err != nil && !errors.Is(err, errOpen) {
			t.Fatalf("refusal %v is not the bad-seal refusal", err)
		}
		if flip >= 0 && flip < len(sealed)*8 {
			g := bytes.Clone(sealed)
			g[flip/8] ^= 1 << (flip % 8)
			if _, err := OpenFrame(k, g, aad); err == nil {
				t.Fatalf("bit %d flipped and the frame still opened", flip)
			}
		}
	})
}

// framePipe joins a Caller to a test host in memory. frames says whether
// the caller speaks protocol 2; hostFrames whether the host's transport
// carries binary frames (false: a host that answers as protocol 1 only, as
// a host before protocol 2 does). It counts each form both ways.
type framePipe struct {
	caller                         *Caller
	textIn, binIn, textOut, binOut atomic.Int64
}

func newFramePipe(th *testHost, frames, hostFrames bool) *framePipe {
	p := &framePipe{}
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	dev := phone.WithFrames(hostFrames)
	answer := func(f Frame) {
		if f.Binary {
			p.binIn.Add(1)
		} else {
			p.textIn.Add(1)
		}
		var reply Frame
		var err error
		if hostFrames {
			reply, _, err = th.HandleFrame(context.Background(), dev, k, in, out, f)
		} else {
			var s string
			s, err = th.HandleSealed(context.Background(), phone, k, in, out, string(f.Body))
			reply = Frame{Body: []byte(s)}
		}
		if err != nil {
			return
		}
		if reply.Binary {
			p.binOut.Add(1)
			p.caller.DeliverFrame(reply.Body)
			return
		}
		p.textOut.Add(1)
		p.caller.Deliver(string(reply.Body))
	}
	o := CallerOptions{
		Seal: func(plain []byte) string { return Seal(k, plain, in) },
		Open: func(body string) ([]byte, error) { return Open(k, body, out) },
		Send: func(_ context.Context, _, body string) error {
			go answer(Frame{Body: []byte(body)})
			return nil
		},
	}
	if frames {
		o.Frames = &FrameOptions{
			Seal: func(plain []byte) ([]byte, error) { return SealFrame(k, plain, in), nil },
			Open: func(frame []byte) ([]byte, error) { return OpenFrame(k, frame, out) },
			Send: func(_ context.Context, _ string, frame []byte) error {
				go answer(Frame{Body: frame, Binary: true})
				return nil
			},
		}
	}
	p.caller = NewCaller(o)
	return p
}

func (p *framePipe) hello(t *testing.T) Hello {
	t.Helper()
	out, err := p.caller.Call(context.Background(), "host.hello", nil)
	var h Hello
	if err != nil || json.Unmarshal(out, &h) != nil {
		t.Fatalf("hello: %v", err)
	}
	return h
}

// Negotiation, all four ways: a protocol-2 caller and host switch to
// binary frames after host.hello; a protocol-1 caller against the new host,
// and a protocol-2 caller against a host that does not carry binary frames,
// keep protocol 1 exactly (not one binary frame either way).
func TestProtocolNegotiation(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	for _, c := range []struct {
		name               string
		frames, hostFrames bool
		want               int
	}{
		{"new caller, new host", true, true, ProtocolBinary},
		{"old caller, new host", false, true, ProtocolText},
		{"new caller, old host", true, false, ProtocolText},
		{"old caller, old host", false, false, ProtocolText},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newFramePipe(th, c.frames, c.hostFrames)
			if h := p.hello(t); h.Protocol != c.want {
				t.Fatalf("host.hello says protocol %d, want %d", h.Protocol, c.want)
			}
			for range 3 {
				if out, err := p.caller.Call(context.Background(), "test.slow", nil); err != nil || string(out) != `"slow"` {
					t.Fatalf("%s %v", out, err)
				}
			}
			if p.caller.Protocol() != c.want {
				t.Fatalf("caller speaks %d, want %d", p.caller.Protocol(), c.want)
			}
			if c.want == ProtocolText {
				if p.binIn.Load()+p.binOut.Load() != 0 {
					t.Fatalf("binary frames on a protocol-1 pairing: %d in, %d out", p.binIn.Load(), p.binOut.Load())
				}
				return
			}
			// The hello went as text (nothing known yet) and was answered in
			// binary, to its announcement; every call after it is binary.
			if p.textIn.Load() != 1 || p.binIn.Load() != 3 || p.textOut.Load() != 0 || p.binOut.Load() != 4 {
				t.Fatalf("text in %d, binary in %d, text out %d, binary out %d", p.textIn.Load(), p.binIn.Load(), p.textOut.Load(), p.binOut.Load())
			}
		})
	}
}

// A request that comes in a binary frame is answered in one, and its
// host.hello says protocol 2, even if it did not announce it: the frame
// shows the caller reads them. One that announces protocol 2 to a
// transport without binary frames gets protocol 1.
func TestHelloProtocolFollowsTransport(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	ask := func(dev Device, p int, binary bool) (Frame, Hello) {
		req := Request{Type: "req", ID: newNonce(), Method: "host.hello", Params: json.RawMessage(`{}`), TS: th.now().UnixMilli(), Nonce: newNonce(), P: p}
		plain, _ := json.Marshal(req)
		reply, _, err := th.HandleFrame(context.Background(), dev, k, in, out, sealAs(binary, k, plain, in))
		if err != nil {
			t.Fatal(err)
		}
		opened, err := openAny(k, reply, out)
		res, err2 := ParseResponse(opened)
		var h Hello
		if err != nil || err2 != nil || json.Unmarshal(res.Result, &h) != nil {
			t.Fatalf("reply: %v %v", err, err2)
		}
		return reply, h
	}
	if r, h := ask(phone.WithFrames(false), ProtocolBinary, false); r.Binary || h.Protocol != ProtocolText {
		t.Fatalf("no frames on the transport: binary %v, protocol %d", r.Binary, h.Protocol)
	}
	if r, h := ask(phone.WithFrames(true), 0, false); r.Binary || h.Protocol != ProtocolText {
		t.Fatalf("nothing announced: binary %v, protocol %d", r.Binary, h.Protocol)
	}
	if r, h := ask(phone.WithFrames(true), ProtocolBinary, false); !r.Binary || h.Protocol != ProtocolBinary {
		t.Fatalf("announced: binary %v, protocol %d", r.Binary, h.Protocol)
	}
	if r, h := ask(phone.WithFrames(false), 0, true); !r.Binary || h.Protocol != ProtocolBinary {
		t.Fatalf("came binary: binary %v, protocol %d", r.Binary, h.Protocol)
	}
}

// A downgrade changes nothing a seal guarantees: both forms seal the same
// bytes under the same additional data, so a binary request that someone in
// the middle turns into protocol 1's base64 (or the reverse) opens to the
// same request (shown first), which the replay guard has already seen: the
// copy is answered NOT_RUN.
func TestDowngradeIsAReplay(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	req := Request{Type: "req", ID: "r1", Method: "test.slow", Params: json.RawMessage(`{}`), TS: th.now().UnixMilli(), Nonce: newNonce(), P: ProtocolBinary}
	plain, _ := json.Marshal(req)
	bin := SealFrame(k, plain, in)
	text := base64.StdEncoding.EncodeToString(bin[1:]) // the middle's downgrade: same nonce, same ciphertext
	if got, err := Open(k, text, in); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the two forms do not carry the same seal: %v", err)
	}
	first, _, err := th.HandleFrame(context.Background(), phone.WithFrames(true), k, in, out, Frame{Body: bin, Binary: true})
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := th.HandleFrame(context.Background(), phone.WithFrames(true), k, in, out, Frame{Body: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	resOf := func(f Frame) Response {
		o, err := openAny(k, f, out)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseResponse(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := resOf(first); !r.OK {
		t.Fatalf("first: %+v", r)
	}
	if r := resOf(second); r.OK || r.Code != CodeNotRun {
		t.Fatalf("the downgraded copy ran: %+v", r)
	}
	// The nonce the AEAD used is the frame's, in both forms.
	if !bytes.Equal(bin[1:1+chacha20poly1305.NonceSizeX], mustB64(t, text)[:chacha20poly1305.NonceSizeX]) {
		t.Fatal("nonce differs")
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sealFrameWithNonce is SealFrame with a given nonce: for test vectors
// only, since a nonce must never repeat under one key.
func sealFrameWithNonce(key Key, nonce [chacha20poly1305.NonceSizeX]byte, plaintext, aad []byte) []byte {
	out := make([]byte, 1+len(nonce), len(plaintext)+frameOverhead)
	copy(out[1:], nonce[:])
	return sealFrameInto(key, out, plaintext, aad)
}
