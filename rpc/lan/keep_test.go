package lan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// newStore is a state folder of the test's own.
func newStore(t *testing.T) *trust.Store {
	t.Helper()
	store, err := trust.OpenStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// keptServer serves repo with its LAN state kept in store, as serve does.
func keptServer(t *testing.T, store *trust.Store, repo string) (*fixture, func()) {
	t.Helper()
	return serveRepo(t, repo, func(o *Options) { o.Keep = store })
}

// A restart ends no pairing: the device's key and grant are kept (0600 in
// the state folder), the port is the one chosen the first time, and the
// paired device calls again with no new link and no new allow. A revoked
// device stays out after a restart; a device presenting its id with
// another key is refused, as on the relay.
func TestPairingsSurviveARestart(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	store := newStore(t)
	f, stop := keptServer(t, store, repo)
	url := f.srv.URL()
	p, err := f.pair(t, trust.Control)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.call(t, p, "host.hello", nil); err != nil {
		t.Fatal(err)
	}
	stop()
	if fi, err := os.Stat(filepath.Join(store.Dir(), "lan.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kept state: %v %v", fi, err)
	}

	f, stop = keptServer(t, store, repo)
	if f.srv.URL() != url {
		t.Fatalf("the address changed across the restart: %s then %s", url, f.srv.URL())
	}
	if _, err := f.call(t, p, "git.status", map[string]string{"target": f.target}); err != nil {
		t.Fatalf("the paired device after a restart: %v", err)
	}
	if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 2 || st.Request != nil {
		t.Fatalf("devices after the restart: %+v", st)
	}
	forged := p
	forged.Key[0] ^= 1
	if _, err := f.call(t, forged, "host.hello", nil); err == nil {
		t.Fatal("a device id with another key was answered")
	}
	if !f.srv.Pairing().Revoke(p2.DeviceID) {
		t.Fatal("revoke")
	}
	stop()

	f, _ = keptServer(t, store, repo)
	if _, err := f.call(t, p2, "host.hello", nil); err == nil {
		t.Fatal("a revoked device came back after a restart with its old key")
	}
	if _, err := f.call(t, p, "host.hello", nil); err != nil {
		t.Fatalf("the other device after a second restart: %v", err)
	}
}

// A device that pairs again under the name of a paired one (its old key
// lost) takes the old place, so re-pairing never fills the limit; the old
// key stops working. A name the person sets is kept across a restart, and
// two devices cannot share one.
func TestPairingAgainReplacesAndNamesStay(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	store := newStore(t)
	f, stop := keptServer(t, store, repo)
	var first Paired
	for i := range MaxDevices + 2 {
		p, err := f.pairAs(t, trust.View, "Test browser")
		if err != nil {
			t.Fatalf("pairing %d: %v", i, err)
		}
		if i == 0 {
			first = p
		}
	}
	st, _ := f.srv.Pairing().Status()
	if len(st.Devices) != 1 {
		t.Fatalf("%d devices after pairing the same device %d times", len(st.Devices), MaxDevices+2)
	}
	if _, err := f.call(t, first, "host.hello", nil); err == nil {
		t.Fatal("the replaced pairing's key still works")
	}
	id := st.Devices[0].ID
	if !f.srv.Pairing().Rename(id, "Ann's phone") {
		t.Fatal("rename")
	}
	stop()
	f, _ = keptServer(t, store, repo)
	st, _ = f.srv.Pairing().Status()
	if len(st.Devices) != 1 || st.Devices[0].Name != "Ann's phone" {
		t.Fatalf("after a restart: %+v", st.Devices)
	}
	if _, err := f.pair(t, trust.View); err != nil {
		t.Fatal(err)
	}
	st, _ = f.srv.Pairing().Status()
	other := st.Devices[0].ID
	if other == id {
		other = st.Devices[1].ID
	}
	for _, same := range []string{"Ann's phone", "ANN'S PHONE", "Ann's phone ", " "} {
		if len(st.Devices) != 2 || f.srv.Pairing().Rename(other, same) {
			t.Fatalf("renamed to %q beside \"Ann's phone\": %+v", same, st.Devices)
		}
	}
}

// Kept state that cannot be trusted is not: an unreadable lan.json is moved
// aside (never lost to the next rewrite) and every device pairs again; two
// entries under one id (say view and full) are both left out; a frame under
// a device's id sealed with another key does not make it look active.
func TestKeptStateFailsClosed(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	store := newStore(t)
	file := filepath.Join(store.Dir(), "lan.json")
	if err := os.WriteFile(file, []byte(`{"port":1,"devices":[{"id":garbage`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, stop := keptServer(t, store, repo)
	if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 0 {
		t.Fatalf("devices from an unreadable file: %+v", st.Devices)
	}
	if b, err := os.ReadFile(file + ".damaged"); err != nil || !strings.Contains(string(b), "garbage") {
		t.Fatalf("the unreadable file was not kept aside: %v", err)
	}
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := f.srv.Pairing().Status()
	forged := p
	forged.Key[3] ^= 1
	time.Sleep(10 * time.Millisecond)
	_, _ = f.call(t, forged, "host.hello", nil)
	if after, _ := f.srv.Pairing().Status(); !after.Devices[0].LastSeen.Equal(before.Devices[0].LastSeen) {
		t.Fatal("a frame sealed with another key marked the device as seen")
	}
	stop()

	key := make([]byte, 32)
	st := store.LAN()
	dup := st.Devices[0]
	dup.Grant, dup.Key = trust.Full, key
	st.Devices = append(st.Devices, dup)
	if err := store.SaveLAN(st); err != nil {
		t.Fatal(err)
	}
	f, _ = keptServer(t, store, repo)
	if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 0 {
		t.Fatalf("a device id kept twice was trusted: %+v", st.Devices)
	}
}
