package relay

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey().Bytes()
}

func writeProfile(t *testing.T, id *Identity, p Profile) {
	t.Helper()
	if err := writeJSONFile(filepath.Join(id.dir, profileFile), p); err != nil {
		t.Fatal(err)
	}
}

// The account id is the relay's own word: a relay that answers the
// device's next sign-in with another account id must not move the device
// to an empty set of pins (found by the red team: the next call trusted the
// impostor's key as on a first call).
func TestHostPinSurvivesAnAccountTheRelayRenames(t *testing.T) {
	id, err := OpenRole(t.TempDir(), ClientRole)
	if err != nil {
		t.Fatal(err)
	}
	p := Profile{URL: "https://relay.example", DeviceID: "d-phone"}
	p.Account.ID = "inv:alice"
	writeProfile(t, id, p)
	real, impostor := testKey(t), testKey(t)
	if _, first, err := id.CheckHostKey("d-host", real, ""); err != nil || !first {
		t.Fatalf("first contact: %v %v", first, err)
	}
	p.Account.ID = "inv:alice2" // the relay's answer to a new sign-in
	writeProfile(t, id, p)
	_, _, err = id.CheckHostKey("d-host", impostor, "")
	var hk *HostKeyError
	if !errors.As(err, &hk) {
		t.Fatalf("an impostor's key under a renamed account: %v", err)
	}
	// A pins file that cannot be read is not an empty one.
	if err := os.WriteFile(filepath.Join(id.dir, pinsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, first, err := id.CheckHostKey("d-host", impostor, ""); err == nil || first {
		t.Fatalf("a corrupt pins file trusted a key: first %v, err %v", first, err)
	}
}
