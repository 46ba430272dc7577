package relayserver

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/relay"
)

// A state folder from before the split keeps its host key: the one
// identity at its top moves into host/ (it was made by login for serve),
// and client/ is a separate identity with its own key.
func TestIdentityRolesMigrateTheHostKey(t *testing.T) {
	r := startRelay(t, nil)
	state := t.TempDir()
	old := relay.OpenIdentity(state)
	if _, err := old.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	oldKey, _ := old.Key()
	oldID := old.Profile().DeviceID

	host, err := relay.OpenRole(state, relay.HostRole)
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
	fi, err := os.Stat(filepath.Join(state, relay.HostRole, roleSecrets))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host/secrets.json: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(state, relay.HostRole)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("host/: %v", err)
	}
	// Opening again changes nothing.
	if again, err := relay.OpenRole(state, relay.HostRole); err != nil || again.Profile().DeviceID != oldID {
		t.Fatalf("second open: %v", err)
	}

	client, err := relay.OpenRole(state, relay.ClientRole)
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
