package relayserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/atomicfile"

	"github.com/gatehouse/gatehouse/relay"
)

// Tokens: payload = base64url(JSON {acct, dev, iat, exp, gen}), token =
// payload + "." + base64url(HMAC-SHA256(secret, payload)). A token is valid
// for 30 days and only while its device row still exists with the same gen,
// a random value made with the row: revoking a device deletes the row, so
// its tokens die at once, even if the same id registers again in the same
// second (the new row has a new gen).

// minSecret is the shortest signing secret the relay accepts.
const minSecret = 32

// maxToken bounds a token before it is decoded.
const maxToken = 1024

// ErrBadToken is every reason a token is refused; the cause is not told.
var ErrBadToken = errors.New("relay: token refused")

// signer makes and checks tokens with one secret.
type signer struct{ secret []byte }

func newSigner(secret []byte) (*signer, error) {
	if len(secret) < minSecret {
		return nil, fmt.Errorf("relay: the token secret is %d bytes; at least %d are needed", len(secret), minSecret)
	}
	return &signer{secret: secret}, nil
}

func (s *signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// sign makes a token for c.
func (s *signer) sign(c relay.Claims) string {
	js, _ := json.Marshal(c)
	payload := base64.RawURLEncoding.EncodeToString(js)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

// verify checks a token's MAC (in constant time) and expiry at now. The
// caller still checks the device row and its gen.
func (s *signer) verify(token string, now time.Time) (relay.Claims, error) {
	var c relay.Claims
	if len(token) > maxToken {
		return c, ErrBadToken
	}
	payload, sig, ok := strings.Cut(token, ".")
	if !ok {
		return c, ErrBadToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return c, ErrBadToken
	}
	js, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(js, &c) != nil {
		return c, ErrBadToken
	}
	if c.Account == "" || c.Device == "" || c.Gen == "" || now.Unix() >= c.Expires {
		return c, ErrBadToken
	}
	return c, nil
}

// SignTokenForTest makes a token with the relay's secret, for tools that
// hold it and must not sign in through the rate-limited API (the relay
// benchmark registers thousands of devices). Whoever has the secret can
// make tokens anyway; the relay still checks each device's row and gen.
func SignTokenForTest(secret []byte, c relay.Claims) (string, error) {
	s, err := newSigner(secret)
	if err != nil {
		return "", err
	}
	return s.sign(c), nil
}

// LoadSecret reads the signing secret from path, or, when the file does not
// exist, makes a random one and keeps it there (0600). A secret shorter
// than 32 bytes is refused.
func LoadSecret(path string) ([]byte, error) {
	if err := checkOwnFile(path); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("relay: other users can read or write %s (mode %o), so it may be known: anyone who has it can make sign-in tokens. Remove it to make a new one (every device then signs in again)", path, fi.Mode().Perm())
	}
	data, err := atomicfile.ReadBounded(path, 4096)
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		data = []byte(base64.RawURLEncoding.EncodeToString(raw) + "\n")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(path, data, 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("relay: secret file: %w", err)
	}
	secret := []byte(strings.TrimSpace(string(data)))
	if len(secret) < minSecret {
		return nil, fmt.Errorf("relay: the secret in %s is %d bytes; at least %d are needed", path, len(secret), minSecret)
	}
	return secret, nil
}
