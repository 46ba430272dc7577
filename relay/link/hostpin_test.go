package link

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/trust"
	"github.com/gorilla/websocket"
)

// hostileRelay stands in front of a real relay and passes everything
// through until it turns: then it answers the device's socket itself, as
// a relay operator (or a device that took the host's id) would, with
// presence showing its own key under the host's id, and counts the
// frames with a body sent to that id: what the impostor gets to open.
type hostileRelay struct {
	url     string
	turned  atomic.Bool
	hostID  string
	fake    []byte // the impostor's public key
	bodies  atomic.Int64
	upgrade websocket.Upgrader
}

func startHostileRelay(t *testing.T, real string) *hostileRelay {
	t.Helper()
	u, _ := url.Parse(real)
	proxy := httputil.NewSingleHostReverseProxy(u)
	h := &hostileRelay{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.turned.Load() && r.URL.Path == "/v1/connect" {
			h.impostor(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	h.url = hs.URL
	return h
}

func (h *hostileRelay) impostor(w http.ResponseWriter, r *http.Request) {
	ws, err := h.upgrade.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	presence, _ := json.Marshal(map[string]any{"kind": "presence", "devices": []relay.Device{
		{ID: h.hostID, Name: "laptop", Platform: "linux", Host: true, Online: true,
			PublicKey: base64.StdEncoding.EncodeToString(h.fake)},
	}})
	if ws.WriteMessage(websocket.TextMessage, presence) != nil {
		return
	}
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f struct{ To, Body string }
		if json.Unmarshal(data, &f) == nil && f.To == h.hostID && f.Body != "" {
			h.bodies.Add(1)
		}
	}
}

// A device pins the key of the computer it calls (docs/relay.md, "The device
// pins the computer's key"). The first call pins the real host's key. Then
// the relay shows another key under the host's id: without the pin the device
// seals its request to that key and the impostor receives it; with the pin
// the call is refused before anything is sealed, with a sentence naming both
// fingerprints. A fingerprint given up front that the host does not have is
// refused on first contact.
func TestDevicePinsTheHostKey(t *testing.T) {
	gittest.Home(t, "")
	w := startRelay(t)
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	hostID, state, _ := serveRepo(t, w, repo)
	ctx := context.Background()
	host := hostID.Profile().DeviceID
	hostFP := trust.Fingerprint(publicKey(t, hostID))

	hostile := startHostileRelay(t, w.url)
	hostile.hostID = host
	fake, _ := ecdh.X25519().GenerateKey(rand.Reader)
	hostile.fake = fake.PublicKey().Bytes()
	fakeFP := trust.Fingerprint(hostile.fake)

	phone, phoneDir := signInAt(t, w, hostile.url, "phone")
	if err := state.SetGrant(phone.Profile().DeviceID, trust.DeviceGrant{Grant: trust.View,
		Fingerprint: trust.Fingerprint(publicKey(t, phone)), Name: "phone"}); err != nil {
		t.Fatal(err)
	}

	// First contact: the real host's key is pinned, and said to be new.
	dev := dialHost(t, phone, host, "")
	if fp, first := dev.HostFingerprint(); fp != hostFP || !first {
		t.Fatalf("first contact: %s %v, want %s pinned for the first time", fp, first, hostFP)
	}
	if _, err := dev.Call(ctx, "host.hello", nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	if phone.PinnedHost(host) != hostFP {
		t.Fatalf("pinned %q", phone.PinnedHost(host))
	}

	// The attack works without the pin: a device that trusts presence seals
	// its request to the impostor's key.
	hostile.turned.Store(true)
	unpinned := t.TempDir()
	copyIdentity(t, phoneDir, unpinned)
	naive := relay.OpenIdentity(unpinned)
	devNaive := dialHost(t, naive, host, fakeFP) // "pinned" to the impostor: trusts what presence shows
	_, _ = devNaive.Call(ctx, "host.hello", nil, time.Second)
	devNaive.Close()
	if hostile.bodies.Load() == 0 {
		t.Fatal("the impostor got no request even without the pin: the test does not show the attack")
	}
	hostile.bodies.Store(0)

	// With the pin: refused before anything is sealed.
	_, err := DialPinned(context.Background(), phone, host, "", nil)
	var hk *relay.HostKeyError
	if !errors.As(err, &hk) || hk.Pinned != hostFP || hk.Shown != fakeFP || !errors.Is(err, relay.ErrHostKeyChanged) {
		t.Fatalf("an impostor's key: %v", err)
	}
	s := refusal.Sentence(err)
	for _, want := range []string{hostFP, fakeFP, "--host-fingerprint " + fakeFP, "nothing was sent"} {
		if !strings.Contains(s, want) {
			t.Errorf("the sentence %q lacks %q", s, want)
		}
	}
	if n := hostile.bodies.Load(); n != 0 {
		t.Fatalf("the impostor received %d request bodies", n)
	}
	if phone.PinnedHost(host) != hostFP {
		t.Fatal("a refused key replaced the pin")
	}

	// A fingerprint given up front that the host does not show: refused on
	// first contact, nothing pinned.
	hostile.turned.Store(false)
	fresh := w.signIn(t, t.TempDir(), "tablet")
	_, err = DialPinned(context.Background(), fresh, host, fakeFP, nil)
	if !errors.As(err, &hk) || !hk.Given || hk.Shown != hostFP {
		t.Fatalf("a wrong --host-fingerprint: %v", err)
	}
	if fresh.PinnedHost(host) != "" {
		t.Fatal("a refused first contact pinned a key")
	}
	dev = dialHost(t, fresh, host, hostFP)
	if fp, first := dev.HostFingerprint(); fp != hostFP || first {
		t.Fatalf("pinned up front: %s %v", fp, first)
	}
	dev.Close()
}

// signInAt signs a new device in to w's account through the address addr.
func signInAt(t *testing.T, w *world, addr, name string) (*relay.Identity, string) {
	t.Helper()
	code, err := w.store.CreateInvite(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	id := relay.OpenIdentity(dir)
	if _, err := id.SignIn(context.Background(), http.DefaultClient, addr, name, "cli", "invite", code); err != nil {
		t.Fatal(err)
	}
	return id, dir
}

func copyIdentity(t *testing.T, from, dir string) {
	t.Helper()
	for _, name := range []string{"relay.json", "relay-secrets.json"} {
		data, err := os.ReadFile(from + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFile(dir+"/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
}

// dialHost dials until the host is in presence.
func dialHost(t *testing.T, id *relay.Identity, host, want string) *Device {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		dev, err := DialPinned(context.Background(), id, host, want, nil)
		if err == nil {
			return dev
		}
		if !errors.Is(err, ErrHostNotPresent) || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
