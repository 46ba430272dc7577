package relayserver

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/relay"
)

// The files a relay client keeps in its state folder, as these tests
// prepare or inspect them from outside the client.
const (
	profileFile = "relay.json"
	secretsFile = "relay-secrets.json"
	roleSecrets = "secrets.json" // a role's secrets, in its own folder
)

// otherKey is a public key no device of the test holds.
func otherKey(t *testing.T) string {
	t.Helper()
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k.PublicKey().Bytes())
}

// writeProfile leaves a profile in dir, as an earlier sign-in would have.
func writeProfile(t *testing.T, dir string, p relay.Profile) {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, profileFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tokenExpires reads a token's expiry without checking its MAC.
func tokenExpires(token string) time.Time {
	payload, _, _ := strings.Cut(token, ".")
	js, err := base64.RawURLEncoding.DecodeString(payload)
	var c relay.Claims
	if err != nil || json.Unmarshal(js, &c) != nil {
		return time.Time{}
	}
	return time.Unix(c.Expires, 0)
}
