package relay

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A state folder from before the split keeps its host key: the one
// identity at its top moves into host/ (it was made by login for serve),
// and client/ is a separate identity with its own key (issue 12, item 5).
func TestIdentityRolesMigrateTheHostKey(t *testing.T) {
	r := startRelay(t, nil)
	state := t.TempDir()
	old := OpenIdentity(state)
	if _, err := old.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	oldKey, _ := old.Key()
	oldID := old.Profile().DeviceID

	host, err := OpenRole(state, HostRole)
	if err != nil {
		t.Fatal(err)
	}
	key, err := host.Key()
	if err != nil || !bytes.Equal(key.Bytes(), oldKey.Bytes()) {
		t.Fatalf("the host key after the move: %v", err)
	}
	if host.Profile().DeviceID != oldID {
		t.Fatalf("the host id after the move: %q, was %q", host.Profile().DeviceID, oldID)
	}
	if tok, err := host.Token(); err != nil || tok == "" {
		t.Fatalf("the token after the move: %v", err)
	}
	for _, name := range []string{secretsFile, profileFile} {
		if _, err := os.Lstat(filepath.Join(state, name)); err == nil {
			t.Errorf("%s is still at the state folder's top", name)
		}
	}
	fi, err := os.Stat(filepath.Join(state, HostRole, roleSecrets))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host/secrets.json: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(state, HostRole)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("host/: %v", err)
	}
	// Opening again changes nothing.
	if again, err := OpenRole(state, HostRole); err != nil || again.Profile().DeviceID != oldID {
		t.Fatalf("second open: %v", err)
	}

	client, err := OpenRole(state, ClientRole)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Token(); err == nil {
		t.Fatal("the client identity shares the host's sign-in")
	}
	if _, err := client.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	ck, _ := client.Key()
	if bytes.Equal(ck.Bytes(), oldKey.Bytes()) || client.Profile().DeviceID == oldID {
		t.Fatal("the client identity has the host's key or id")
	}
	if hk, _ := host.Key(); !bytes.Equal(hk.Bytes(), oldKey.Bytes()) {
		t.Fatal("signing the client in changed the host key")
	}
}

// serve and call on one machine, one state folder: with one shared
// identity the call's socket replaces serve's (close 4000, and serve then
// waits a minute); with host/ and client/ both stay connected.
func TestHostAndClientOfOneStateFolderStayConnected(t *testing.T) {
	r := startRelay(t, nil)
	// The shared identity of before: the second socket knocks the first off.
	shared := &device{id: OpenIdentity(t.TempDir())}
	if _, err := shared.id.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	serve, _ := startClient(t, shared, true, ClientOptions{})
	if err := serve.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	call, _ := startClient(t, shared, false, ClientOptions{})
	if err := call.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !onlineHost(r, shared.id) }, "one shared identity: serve is still the host after the call connected")

	// Two identities in one state folder.
	state := t.TempDir()
	host, err := OpenRole(state, HostRole)
	if err != nil {
		t.Fatal(err)
	}
	client, err := OpenRole(state, ClientRole)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []*Identity{host, client} {
		if _, err := id.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
			t.Fatal(err)
		}
	}
	serve, _ = startClient(t, &device{id: host}, true, ClientOptions{})
	if err := serve.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	sock := r.srv.hub.get(host.Profile().Account.ID, host.Profile().DeviceID)
	call, _ = startClient(t, &device{id: client}, false, ClientOptions{})
	if err := call.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := r.srv.hub.get(host.Profile().Account.ID, host.Profile().DeviceID); got == nil || got != sock {
		t.Fatal("the call's socket replaced serve's")
	}
	if !onlineHost(r, host) {
		t.Fatal("serve is not the account's online host")
	}
}

// onlineHost: id's socket is up and says it hosts.
func onlineHost(r *testRelay, id *Identity) bool {
	devs, err := r.srv.devices(context.Background(), id.Profile().Account.ID)
	if err != nil {
		return false
	}
	for _, d := range devs {
		if d.ID == id.Profile().DeviceID {
			return d.Online && d.Host
		}
	}
	return false
}

func waitFor(t *testing.T, cond func() bool, failure string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(failure)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
