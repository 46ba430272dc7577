package lan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
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

// A restart ends no pairing: the device's secrets and grant are kept
// (0600 in the state folder), the port is the one chosen the first time,
// and a device that kept its ticket (gatehouse call's file, a page left
// open) calls again with no new link and no new allow. A device with only
// its stored secret (a page reloaded after the restart) is asked to
// reconnect, which the person allows by its code, keeping its grant. A
// revoked device stays out after a restart; a device presenting its id with
// another secret is refused, as on the relay.
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
	if _, err := f.call(t, p2, "host.hello", nil); err != nil {
		t.Fatal(err)
	}
	reloaded := *p2
	reloaded.TicketID, reloaded.Ticket = "", rpc.Key{} // a page reloaded: its ticket was in memory
	stop()
	if fi, err := os.Stat(filepath.Join(store.Dir(), "lan.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kept state: %v %v", fi, err)
	}

	f, stop = keptServer(t, store, repo)
	if f.srv.URL() != url {
		t.Fatalf("the address changed across the restart: %s then %s", url, f.srv.URL())
	}
	before := p.Stored
	if _, err := f.call(t, p, "git.status", map[string]string{"target": f.target}); err != nil {
		t.Fatalf("the paired device with its ticket after a restart: %v", err)
	}
	if p.Stored == before {
		t.Fatal("the first resume after a restart left the stored secret as it was")
	}
	if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 2 || len(st.Requests) != 0 {
		t.Fatalf("devices after the restart: %+v", st)
	}
	if _, err := f.session(t, &reloaded); !errors.Is(err, ErrRestarted) {
		t.Fatalf("a stored secret from before the restart: %v", err)
	}
	codes := make(chan string, 1)
	go func() {
		if err := f.srv.Pairing().Decide(<-codes, true, trust.None); err != nil {
			t.Errorf("allowing the reconnect: %v", err)
		}
	}()
	back, err := Reconnect(context.Background(), f.hc, reloaded, "Test browser 2", func(c string) { codes <- c })
	if err != nil || back.Grant != "view" {
		t.Fatalf("reconnect: %+v %v", back, err)
	}
	if _, err := f.call(t, &back, "git.status", map[string]string{"target": f.target}); err != nil {
		t.Fatalf("after the reconnect: %v", err)
	}
	forged := back
	forged.Stored[0] ^= 1
	forged.TicketID = ""
	if _, err := f.call(t, &forged, "host.hello", nil); err == nil {
		t.Fatal("a device id with another secret was answered")
	}
	if !f.srv.Pairing().Revoke(p2.DeviceID) {
		t.Fatal("revoke")
	}
	stop()

	f, _ = keptServer(t, store, repo)
	if _, err := f.call(t, &back, "host.hello", nil); err == nil {
		t.Fatal("a revoked device came back after a restart with its old secrets")
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
	var first *Paired
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
		t.Fatal("the replaced pairing's secret still works")
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
// entries under one id (say view and full) are both left out; a device kept
// by a gatehouse from before keys were agreed pairs again; a resume under a
// device's id sealed with another secret does not make it look active.
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
	forged := *p
	forged.Stored[3] ^= 1
	time.Sleep(10 * time.Millisecond)
	_, _ = f.call(t, &forged, "host.hello", nil)
	if after, _ := f.srv.Pairing().Status(); !after.Devices[0].LastSeen.Equal(before.Devices[0].LastSeen) {
		t.Fatal("a resume sealed with another secret marked the device as seen")
	}
	stop()

	st := store.LAN()
	dup := st.Devices[0]
	dup.Grant = trust.Full
	st.Devices = append(st.Devices, dup)
	if err := store.SaveLAN(st); err != nil {
		t.Fatal(err)
	}
	f, stop = keptServer(t, store, repo)
	if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 0 {
		t.Fatalf("a device id kept twice was trusted: %+v", st.Devices)
	}
	stop()

	old := trust.LANDevice{ID: "lan-old", Name: "old", Grant: trust.Full, Key: make([]byte, 32)}
	if err := store.SaveLAN(trust.LANState{Devices: []trust.LANDevice{old}}); err != nil {
		t.Fatal(err)
	}
	f, _ = keptServer(t, store, repo)
	if st, _ := f.srv.Pairing().Status(); len(st.Devices) != 0 {
		t.Fatalf("a device with a key from before agreed keys was trusted: %+v", st.Devices)
	}
}
