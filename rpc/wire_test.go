package rpc

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata files from the code")

// vectors are the sealing test vectors another implementation (the page)
// checks itself against: fixed keys and nonces, so every byte is fixed.
type vectors struct {
	PairKey struct {
		HostID, HostPrivate, HostPublic       string
		DeviceID, DevicePrivate, DevicePublic string
		Key                                   string
	}
	// Seal: Body is protocol 1's base64 text, Frame (hex) the binary frame
	// of protocol 2: the same nonce and ciphertext after the version byte.
	Seal []struct {
		Key, Nonce, Plaintext, AAD, Body, Frame string
	}
	Packed struct {
		Plaintext string
		Frame     string // base64 of "z" + raw deflate
	}
}

func makeVectors(t *testing.T) vectors {
	var v vectors
	hostPriv, _ := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{0x11}, 32))
	devPriv, _ := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{0x22}, 32))
	k, err := PairKey(hostPriv, "host-a", "phone-b", devPriv.PublicKey().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	k2, err := PairKey(devPriv, "phone-b", "host-a", hostPriv.PublicKey().Bytes())
	if err != nil || k2 != k {
		t.Fatal("the two sides derive different keys")
	}
	b64 := base64.StdEncoding.EncodeToString
	v.PairKey.HostID, v.PairKey.HostPrivate, v.PairKey.HostPublic = "host-a", b64(hostPriv.Bytes()), b64(hostPriv.PublicKey().Bytes())
	v.PairKey.DeviceID, v.PairKey.DevicePrivate, v.PairKey.DevicePublic = "phone-b", b64(devPriv.Bytes()), b64(devPriv.PublicKey().Bytes())
	v.PairKey.Key = hex.EncodeToString(k[:])
	for i, pt := range []string{`{"type":"req","id":"1","method":"host.hello","params":{},"ts":1700000000000,"nonce":"aaaaaaaaaaaaaaaa"}`, "", "é"} {
		var nonce [24]byte
		for j := range nonce {
			nonce[j] = byte(i*24 + j)
		}
		aad := string(RelayAAD("phone-b", "host-a"))
		if i == 2 {
			aad = string(LANAAD("dev-1", "host"))
		}
		v.Seal = append(v.Seal, struct{ Key, Nonce, Plaintext, AAD, Body, Frame string }{
			hex.EncodeToString(k[:]), hex.EncodeToString(nonce[:]), pt, aad, sealWithNonce(k, nonce, []byte(pt), []byte(aad)),
			hex.EncodeToString(sealFrameWithNonce(k, nonce, []byte(pt), []byte(aad)))})
	}
	big := `{"type":"res","id":"1","ok":true,"result":{"text":"` + strings.Repeat("abc ", 600) + `"},"ts":1,"nonce":"bbbbbbbbbbbbbbbb"}`
	v.Packed.Plaintext, v.Packed.Frame = big, b64(pack([]byte(big)))
	return v
}

func TestVectors(t *testing.T) {
	v := makeVectors(t)
	got, _ := json.MarshalIndent(v, "", "  ")
	if *update {
		if err := os.WriteFile("testdata/vectors.json", append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got)) {
		t.Fatal("the code no longer reproduces testdata/vectors.json (run with -update only if the format changed on purpose)")
	}
	// And the vectors open.
	for _, s := range v.Seal {
		var k Key
		kb, _ := hex.DecodeString(s.Key)
		copy(k[:], kb)
		pt, err := Open(k, s.Body, []byte(s.AAD))
		frame, _ := hex.DecodeString(s.Frame)
		pt2, err2 := OpenFrame(k, frame, []byte(s.AAD))
		if err != nil || string(pt) != s.Plaintext || err2 != nil || string(pt2) != s.Plaintext {
			t.Fatalf("vector does not open: %v %v", err, err2)
		}
	}
}

func testKey() Key {
	var k Key
	copy(k[:], bytes.Repeat([]byte{7}, 32))
	return k
}

func TestSealRefusesEveryChange(t *testing.T) {
	k := testKey()
	body := Seal(k, []byte(`{"x":1}`), []byte("a|b"))
	raw, _ := base64.StdEncoding.DecodeString(body)
	for i := range raw {
		for _, bit := range []byte{1, 0x80} {
			mod := append([]byte{}, raw...)
			mod[i] ^= bit
			if _, err := Open(k, base64.StdEncoding.EncodeToString(mod), []byte("a|b")); err == nil {
				t.Fatalf("a flipped bit at %d opened", i)
			}
		}
	}
	for _, aad := range []string{"b|a", "a|b ", ""} {
		if _, err := Open(k, body, []byte(aad)); err == nil {
			t.Fatalf("opened with aad %q", aad)
		}
	}
	first, second := Seal(k, []byte("x"), nil), Seal(k, []byte("x"), nil)
	if first == second {
		t.Fatal("two seals share a nonce")
	}
	for _, bad := range []string{"", "!!!", base64.StdEncoding.EncodeToString(make([]byte, 30)), body + "=", " " + body} {
		if _, err := Open(k, bad, []byte("a|b")); err == nil {
			t.Fatalf("%q opened", bad)
		}
	}
}

func FuzzOpen(f *testing.F) {
	k := testKey()
	f.Add(Seal(k, []byte(`{"a":1}`), []byte("x")), "x")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, body, aad string) {
		pt, err := Open(k, body, []byte(aad))
		if err == nil {
			// Whatever opens must seal back to a body that opens to it.
			again, err := Open(k, Seal(k, pt, []byte(aad)), []byte(aad))
			if err != nil || !bytes.Equal(again, pt) {
				t.Fatal("round trip failed")
			}
		}
	})
}

func FuzzSealRoundTrip(f *testing.F) {
	f.Add([]byte("hello"), []byte("a|b"))
	f.Fuzz(func(t *testing.T, pt, aad []byte) {
		k := testKey()
		got, err := Open(k, Seal(k, pt, aad), aad)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestPairKeyRefusesSeparatorsInIDs(t *testing.T) {
	p, _ := ecdh.X25519().GenerateKey(nil)
	q, _ := ecdh.X25519().GenerateKey(nil)
	for _, ids := range [][2]string{{"a|b", "c"}, {"a", "c:d"}, {"a", "a"}} {
		if _, err := PairKey(p, ids[0], ids[1], q.PublicKey().Bytes()); err == nil {
			t.Errorf("PairKey(%q, %q) accepted", ids[0], ids[1])
		}
	}
	if _, err := PairKey(p, "a", "b", []byte("short")); err == nil {
		t.Error("a malformed peer key was accepted")
	}
	// Binding the public keys: the same ids with another key give another key.
	r, _ := ecdh.X25519().GenerateKey(nil)
	k1, _ := PairKey(p, "a", "b", q.PublicKey().Bytes())
	k2, _ := PairKey(p, "a", "b", r.PublicKey().Bytes())
	if k1 == k2 {
		t.Fatal("the pair key does not depend on the peer's key")
	}
}

func TestReplayGuard(t *testing.T) {
	g := NewReplayGuard()
	now := time.Now()
	g.now = func() time.Time { return now }
	ms := now.UnixMilli()
	if err := g.Check(ms, "nonce-0000000001"); err != nil {
		t.Fatal(err)
	}
	if err := g.Check(ms, "nonce-0000000001"); err != errReplay {
		t.Fatalf("replay: %v", err)
	}
	if err := g.Check(ms-61_000, "nonce-0000000002"); err != errStale {
		t.Fatalf("stale: %v", err)
	}
	if err := g.Check(ms+61_000, "nonce-0000000003"); err != errStale {
		t.Fatalf("future: %v", err)
	}
	for i := 0; i < maxSeen-1; i++ {
		if err := g.Check(ms, "n"+strings.Repeat("x", 15)+string(rune('a'+i%26))+itoa(i)); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if err := g.Check(ms, "one-more-nonce-xx"); err != errBusy {
		t.Fatalf("full set: %v (a nonce must never be forgotten while it could be replayed)", err)
	}
	// A minute later the old nonces have left the window and are forgotten.
	now = now.Add(61 * time.Second)
	if err := g.Check(now.UnixMilli(), "one-more-nonce-xx"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func itoa(i int) string {
	return strings.TrimLeft(hex.EncodeToString([]byte{byte(i >> 16), byte(i >> 8), byte(i)}), "")
}

func TestPack(t *testing.T) {
	small := []byte(`{"a":1}`)
	if !bytes.Equal(pack(small), small) {
		t.Fatal("a small frame was packed")
	}
	big := []byte(`{"t":"` + strings.Repeat("x", 5000) + `"}`)
	p := pack(big)
	if p[0] != 'z' || len(p) >= len(big) {
		t.Fatal("a compressible frame was not packed")
	}
	if got, err := Unpack(p); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("unpack: %v", err)
	}
	random := []byte(`{"t":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 200, 33, 7, 99}, 400)) + `"}`)
	_ = random
	// A packed bomb stops at the cap.
	bomb := pack([]byte(`{"t":"` + strings.Repeat("a", PackedPageMax+10) + `"}`))
	if _, err := Unpack(bomb); err == nil {
		t.Fatal("a frame inflating past 2 MB was accepted")
	}
}
