package link

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/relayserver"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

type world struct {
	url   string
	store *relayserver.Store
}

func startRelay(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	st, err := relayserver.OpenStore(filepath.Join(dir, "relay.db"))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := relayserver.LoadSecret(filepath.Join(dir, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := relayserver.New(relayserver.Options{Store: st, Secret: secret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Shutdown(); hs.Close(); st.Close() })
	return &world{url: hs.URL, store: st}
}

func (w *world) signIn(t *testing.T, dir, name string) *relay.Identity {
	t.Helper()
	code, err := w.store.CreateInvite(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	id := relay.OpenIdentity(dir)
	if _, err := id.SignIn(context.Background(), http.DefaultClient, w.url, name, "cli", "invite", code); err != nil {
		t.Fatal(err)
	}
	return id
}

func publicKey(t *testing.T, id *relay.Identity) []byte {
	k, err := id.Key()
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey().Bytes()
}

// A host serving through a real relay answers a device calling through it,
// end to end: sealed both ways, grants bound to the device's key, a commit
// made in a real repository.
func TestServeAndCallThroughTheRelay(t *testing.T) {
	gittest.Home(t, "")
	w := startRelay(t)
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	gittest.Write(t, repo, map[string]string{"b.txt": "b\n"})

	hostID, state, target := serveRepo(t, w, repo)
	var err error
	ctx := context.Background()

	phoneID := w.signIn(t, t.TempDir(), "phone")
	var dev *Device
	deadline := time.Now().Add(10 * time.Second)
	for {
		dev, err = DialPinned(context.Background(), phoneID, hostID.Profile().DeviceID, "", nil)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrHostNotPresent) || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer dev.Close()

	// Not granted yet: the host refuses by grant.
	_, err = dev.Call(ctx, "projects.list", nil, 10*time.Second)
	var re *rpc.RemoteError
	if !errors.As(err, &re) || re.Code != rpc.CodeAccess {
		t.Fatalf("no grant: %v", err)
	}
	// Granted full, bound to the phone's key as the person at the computer saw it.
	if err := state.SetGrant(phoneID.Profile().DeviceID, trust.DeviceGrant{Grant: trust.Full,
		Fingerprint: trust.Fingerprint(publicKey(t, phoneID)), Name: "phone"}); err != nil {
		t.Fatal(err)
	}
	out, err := dev.Call(ctx, "git.status", map[string]string{"target": target.ID}, 10*time.Second)
	if err != nil || !strings.Contains(string(out), `"b.txt"`) {
		t.Fatalf("status: %s %v", out, err)
	}
	if _, err := dev.Call(ctx, "git.stage", map[string]any{"target": target.ID, "all": true}, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	// The once-method path: a commit under a sendId.
	out, err = dev.CallOnce(ctx, "git.commit", map[string]any{"target": target.ID, "message": "from the phone"}, 30*time.Second)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	var commit struct {
		OID string `json:"oid"`
	}
	_ = json.Unmarshal(out, &commit)
	if got := strings.TrimSpace(gittest.Git(t, repo, "log", "-1", "--format=%H %s")); got != commit.OID+" from the phone" {
		t.Fatalf("git log says %q, the phone %q", got, commit.OID)
	}
	// CallOnce asked host.hello, which said protocol 2 (the relay forwards
	// binary frames): the device speaks it from then on, and is answered.
	if p := dev.caller.Protocol(); p != rpc.ProtocolBinary {
		t.Fatalf("after host.hello through the relay the device speaks protocol %d", p)
	}
	out, err = dev.Call(ctx, "git.status", map[string]string{"target": target.ID}, 10*time.Second)
	if err != nil || strings.Contains(string(out), `"b.txt"`) {
		t.Fatalf("status in binary frames: %s %v", out, err)
	}
	dev.Close()

	// A device of protocol 1 (before binary frames) against the same host:
	// hello says 1 to it, and it is answered as before.
	old, err := dialPinned(ctx, phoneID, hostID.Profile().DeviceID, "", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := old.Call(ctx, "host.hello", nil, 10*time.Second)
	var hello rpc.Hello
	if err != nil || json.Unmarshal(raw, &hello) != nil || hello.Protocol != rpc.ProtocolText || old.caller.Protocol() != rpc.ProtocolText {
		t.Fatalf("a protocol-1 device: hello %s %v", raw, err)
	}
	if _, err := old.Call(ctx, "git.status", map[string]string{"target": target.ID}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	old.Close()

	// A new key tries the phone's id after the phone was removed. The relay
	// keeps the removed id bound to its key (a tombstone,
	// TestRemovedDeviceIDIsNeverGivenToAnotherKey), so the new key signs in
	// under an id of its own; either way the host has no grant for it.
	if err := hostID.Call(ctx, http.DefaultClient, http.MethodDelete, "/v1/devices/"+phoneID.Profile().DeviceID, nil, nil); err != nil {
		t.Fatal(err)
	}
	impostorDir := t.TempDir()
	if err := writeProfile(impostorDir, phoneID.Profile()); err != nil {
		t.Fatal(err)
	}
	impostor := w.signIn(t, impostorDir, "phone")
	if impostor.Profile().DeviceID == phoneID.Profile().DeviceID {
		t.Fatal("the relay gave a removed device's id to another key")
	}
	if string(publicKey(t, impostor)) == string(publicKey(t, phoneID)) {
		t.Fatal("the test meant a new key")
	}
	dev2, err := DialPinned(context.Background(), impostor, hostID.Profile().DeviceID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev2.Close()
	_, err = dev2.Call(ctx, "git.status", map[string]string{"target": target.ID}, 10*time.Second)
	if !errors.As(err, &re) || re.Code != rpc.CodeAccess {
		t.Fatalf("a new key kept the grant: %v", err)
	}
}

func writeProfile(dir string, p relay.Profile) error {
	data, _ := json.Marshal(relay.Profile{URL: p.URL, DeviceID: p.DeviceID})
	return writeFile(filepath.Join(dir, "relay.json"), data)
}

func writeFile(p string, data []byte) error { return atomicfile.Write(p, data, 0o600) }

// serveRepo signs a host in to w, serves repo through the relay with the
// real methods until the test ends, and returns the host's identity, its
// grant store and the repository's target.
func serveRepo(t *testing.T, w *world, repo string) (*relay.Identity, *trust.Store, *rpc.Target) {
	t.Helper()
	hostID := w.signIn(t, t.TempDir(), "laptop")
	state, err := trust.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	targets := rpc.NewTargets(fsguard.Options{Home: "/nonexistent"}, gate.Options{})
	target, err := targets.Add(repo, trust.Served, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, hostID, hostOf(t, rpc.HostOptions{Registry: reg, Targets: targets, Grants: state, FullAccess: state.FullAccess}), nil)
	}()
	t.Cleanup(func() {
		cancel()
		<-served
		targets.Close()
	})
	return hostID, state, target
}
