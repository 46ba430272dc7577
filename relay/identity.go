package relay

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// A device's relay identity lives in a folder in two files: relay.json (the
// relay's address, this device's id, name and platform, the account) and
// the secrets file (the relay token and the X25519 private key), both 0600
// and written atomically. The state folder holds two identities
// (docs/policy.md): host/ for serve --relay and client/ for gatehouse call,
// each with secrets.json, so a call from the serving computer never takes
// the host's id and socket. A state folder from before the split had one
// identity at its top (relay.json, relay-secrets.json), made by login for
// serve: OpenRole moves it into host/ once, key and all. A missing, unreadable or
// corrupt secrets file means signed out. The key is made once, behind the
// folder's lock, and an existing key is never overwritten: a key that
// changed would make every host drop this device's grant.

const (
	profileFile = "relay.json"
	secretsFile = "relay-secrets.json"
	lockFile    = "relay.lock"
	roleSecrets = "secrets.json"
	maxIDFile   = 64 << 10
)

// ErrSignedOut: there is no token (never signed in, signed out, or revoked).
var ErrSignedOut = errors.New("relay: signed out; run gatehouse login")

// Profile is what relay.json holds.
type Profile struct {
	URL      string  `json:"url"`
	DeviceID string  `json:"deviceId"`
	Name     string  `json:"name"`
	Platform string  `json:"platform"`
	Account  Account `json:"account"`
}

type secrets struct {
	Token string `json:"token,omitempty"`
	Key   string `json:"key,omitempty"` // standard base64 of the X25519 private key
}

// Identity is a device's relay identity in a folder.
type Identity struct {
	dir         string
	secretsName string
	mu          sync.Mutex
}

// OpenIdentity uses the folder dir (which must exist, 0700), with the
// secrets in relay-secrets.json.
func OpenIdentity(dir string) *Identity { return &Identity{dir: dir, secretsName: secretsFile} }

// Roles: the state folder's two identities.
const (
	HostRole   = "host"   // gatehouse login, serve --relay, devices
	ClientRole = "client" // gatehouse call --relay
)

// OpenRole opens the identity of role (HostRole or ClientRole) in the
// state folder stateDir, making its 0700 folder. The host's is first moved
// from the state folder's top when it is still there.
func OpenRole(stateDir, role string) (*Identity, error) {
	if role != HostRole && role != ClientRole {
		return nil, fmt.Errorf("relay: no identity role %q", role)
	}
	dir := filepath.Join(stateDir, role)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("relay: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("relay: %s is not a folder", role)
	}
	id := &Identity{dir: dir, secretsName: roleSecrets}
	if role == HostRole {
		if err := OpenIdentity(stateDir).locked(func() error { return migrate(stateDir, dir) }); err != nil {
			return nil, err
		}
	}
	return id, nil
}

// migrate moves the identity at the state folder's top into host/, unless
// host/ already has its secrets (then the top's are left alone, never
// mixed). The profile moves first: the secrets' move is the last step, so
// an interrupted move is finished by the next open. Renames within one
// folder tree: nothing is copied, the key is never rewritten.
func migrate(stateDir, hostDir string) error {
	oldSecrets := filepath.Join(stateDir, secretsFile)
	newSecrets := filepath.Join(hostDir, roleSecrets)
	if _, err := os.Lstat(newSecrets); err == nil {
		return nil
	}
	if _, err := os.Lstat(oldSecrets); err != nil {
		return nil
	}
	oldProfile := filepath.Join(stateDir, profileFile)
	if _, err := os.Lstat(oldProfile); err == nil {
		if err := os.Rename(oldProfile, filepath.Join(hostDir, profileFile)); err != nil {
			return fmt.Errorf("relay: moving the sign-in into host/: %w", err)
		}
	}
	if err := os.Rename(oldSecrets, newSecrets); err != nil {
		return fmt.Errorf("relay: moving the sign-in into host/: %w", err)
	}
	if err := atomicfile.SyncDir(hostDir); err != nil {
		return err
	}
	return atomicfile.SyncDir(stateDir)
}

func (id *Identity) secretsPath() string { return filepath.Join(id.dir, id.secretsName) }

// Profile returns relay.json (zero when missing or corrupt).
func (id *Identity) Profile() Profile {
	var p Profile
	if data, err := atomicfile.ReadBounded(filepath.Join(id.dir, profileFile), maxIDFile); err == nil {
		_ = json.Unmarshal(data, &p)
	}
	return p
}

func (id *Identity) secrets() secrets {
	var s secrets
	if data, err := atomicfile.ReadBounded(id.secretsPath(), maxIDFile); err == nil {
		if json.Unmarshal(data, &s) != nil {
			return secrets{}
		}
	}
	return s
}

// Token returns the current relay token, or ErrSignedOut.
func (id *Identity) Token() (string, error) {
	if t := id.secrets().Token; t != "" {
		return t, nil
	}
	return "", ErrSignedOut
}

// Key returns the device's private key, or an error when there is none.
func (id *Identity) Key() (*ecdh.PrivateKey, error) {
	raw, err := base64.StdEncoding.DecodeString(id.secrets().Key)
	if err != nil || len(raw) != 32 {
		return nil, errors.New("relay: this device has no key yet; run gatehouse login")
	}
	return ecdh.X25519().NewPrivateKey(raw)
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// locked runs f holding the state folder's relay lock (flock), which
// serializes sign-ins, refreshes and sign-outs of every process.
func (id *Identity) locked(f func() error) error {
	id.mu.Lock()
	defer id.mu.Unlock()
	fd, err := unix.Open(filepath.Join(id.dir, lockFile), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("relay: lock: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		return fmt.Errorf("relay: lock: %w", err)
	}
	defer unix.Flock(fd, unix.LOCK_UN)
	return f()
}

// ensureKey makes the key if there is none (or it does not decode), and
// never replaces one that does. Called with the lock held.
func (id *Identity) ensureKey() (*ecdh.PrivateKey, error) {
	if k, err := id.Key(); err == nil {
		return k, nil
	}
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	s := id.secrets()
	s.Key = base64.StdEncoding.EncodeToString(k.Bytes())
	if err := writeJSONFile(id.secretsPath(), s); err != nil {
		return nil, fmt.Errorf("relay: saving the device key: %w", err)
	}
	return k, nil
}

// setToken replaces the token, under the lock, if the current one is still
// old (or old is "*"): a late answer about an old token never touches a
// newer sign-in.
func (id *Identity) setToken(old, token string) (bool, error) {
	changed := false
	err := id.locked(func() error {
		s := id.secrets()
		if old != "*" && s.Token != old {
			return nil
		}
		s.Token, changed = token, true
		return writeJSONFile(id.secretsPath(), s)
	})
	return changed, err
}

// SignOutIf signs out (forgets the token, keeps the key) only if used is
// still the current token: a refusal of an old token never signs out a
// newer sign-in. It reports whether it signed out.
func (id *Identity) SignOutIf(used string) (bool, error) { return id.setToken(used, "") }

// SignOut forgets the token whatever it is.
func (id *Identity) SignOut() error {
	_, err := id.setToken("*", "")
	return err
}

// CheckURL refuses a relay address that would send tokens in clear: only
// https and wss, or http and ws to a loopback address (tests, and a TLS
// proxy on this machine).
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("relay: %q is not a relay address (https://host)", raw)
	}
	switch u.Scheme {
	case "https", "wss":
		return u, nil
	case "http", "ws":
		host := u.Hostname()
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
			return u, nil
		}
		return nil, fmt.Errorf("relay: %s would send the token in clear; use https (plain http only to this machine)", raw)
	}
	return nil, fmt.Errorf("relay: %q is not a relay address (https://host)", raw)
}

// httpBase is the relay's https (or loopback http) base URL.
func httpBase(u *url.URL) string {
	c := *u
	switch c.Scheme {
	case "wss":
		c.Scheme = "https"
	case "ws":
		c.Scheme = "http"
	}
	c.Path, c.RawQuery = strings.TrimSuffix(c.Path, "/"), ""
	return c.String()
}

// APIError is the relay's answer to a failed call: its status and sentence.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("relay: %d: %s", e.Status, e.Message) }

// maxAnswer bounds what a client reads of a relay answer.
const maxAnswer = 1 << 20

// api calls the relay at base with an optional bearer token.
func api(ctx context.Context, hc *http.Client, method, base, path, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		js, _ := json.Marshal(in)
		body = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		if e.Error == "" {
			e.Error = res.Status
		}
		return &APIError{Status: res.StatusCode, Message: e.Error}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Config is GET /v1/config: how one signs in to a relay.
type Config struct {
	Providers []string `json:"providers"`
	GitHub    struct {
		ClientID string `json:"clientId"`
	} `json:"github"`
}

// FetchConfig asks a relay how to sign in.
func FetchConfig(ctx context.Context, hc *http.Client, relayURL string) (Config, error) {
	var c Config
	u, err := CheckURL(relayURL)
	if err != nil {
		return c, err
	}
	return c, api(ctx, hc, http.MethodGet, httpBase(u), "/v1/config", "", nil, &c)
}

// SignIn registers this device on the relay with a provider ("invite" with
// the code, or "github" with a GitHub token from the device flow) and
// keeps the token. The key is made first (once); a relay that answers 409
// (the id is registered with another key) gets a new id, saved, and one
// retry.
func (id *Identity) SignIn(ctx context.Context, hc *http.Client, relayURL, name, platform, provider, credential string) (Profile, error) {
	u, err := CheckURL(relayURL)
	if err != nil {
		return Profile{}, err
	}
	var p Profile
	err = id.locked(func() error {
		key, err := id.ensureKey()
		if err != nil {
			return err
		}
		p = id.Profile()
		if p.DeviceID == "" || p.URL != u.String() {
			p.DeviceID = newDeviceID()
		}
		p.URL, p.Name, p.Platform = u.String(), name, platform
		for attempt := 0; ; attempt++ {
			if err := writeJSONFile(filepath.Join(id.dir, profileFile), p); err != nil {
				return err
			}
			in := map[string]any{"device": Device{ID: p.DeviceID, Name: name, Platform: platform,
				PublicKey: base64.StdEncoding.EncodeToString(key.PublicKey().Bytes())}}
			if provider == "github" {
				in["githubToken"] = credential
			} else {
				in["invite"] = credential
			}
			var out struct {
				Token   string  `json:"token"`
				Account Account `json:"account"`
			}
			err := api(ctx, hc, http.MethodPost, httpBase(u), "/v1/auth/"+provider, "", in, &out)
			var ae *APIError
			if errors.As(err, &ae) && ae.Status == http.StatusConflict && attempt == 0 {
				p.DeviceID = newDeviceID()
				continue
			}
			if err != nil {
				return err
			}
			p.Account = out.Account
			s := id.secrets()
			s.Token = out.Token
			if err := writeJSONFile(id.secretsPath(), s); err != nil {
				return err
			}
			return writeJSONFile(filepath.Join(id.dir, profileFile), p)
		}
	})
	return p, err
}

func newDeviceID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "d-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// tokenExpiry reads a token's expiry without checking it (the relay does).
func tokenExpiry(token string) time.Time {
	payload, _, _ := strings.Cut(token, ".")
	js, err := base64.RawURLEncoding.DecodeString(payload)
	var c Claims
	if err != nil || json.Unmarshal(js, &c) != nil {
		return time.Time{}
	}
	return time.Unix(c.Expires, 0)
}

// Refresh asks for a fresh token when the current one has less than
// refreshWhen left, and keeps it. A 401 follows the sign-out rule.
func (id *Identity) Refresh(ctx context.Context, hc *http.Client, now time.Time) error {
	token, err := id.Token()
	if err != nil {
		return err
	}
	if tokenExpiry(token).Sub(now) >= refreshWhen {
		return nil
	}
	u, err := CheckURL(id.Profile().URL)
	if err != nil {
		return err
	}
	var out struct {
		Token string `json:"token"`
	}
	err = api(ctx, hc, http.MethodPost, httpBase(u), "/v1/token", token, nil, &out)
	if e := (*APIError)(nil); errors.As(err, &e) && e.Status == http.StatusUnauthorized {
		if out, _ := id.SignOutIf(token); out {
			return ErrSignedOut
		}
		return nil
	}
	if err != nil {
		return err
	}
	_, err = id.setToken(token, out.Token)
	return err
}

// refreshWhen: a token with less than this left is refreshed.
const refreshWhen = 7 * 24 * time.Hour

// Call makes an authenticated API call with the current token; a 401 follows
// the sign-out rule.
func (id *Identity) Call(ctx context.Context, hc *http.Client, method, path string, in, out any) error {
	token, err := id.Token()
	if err != nil {
		return err
	}
	u, err := CheckURL(id.Profile().URL)
	if err != nil {
		return err
	}
	err = api(ctx, hc, method, httpBase(u), path, token, in, out)
	if e := (*APIError)(nil); errors.As(err, &e) && e.Status == http.StatusUnauthorized {
		if signedOut, _ := id.SignOutIf(token); signedOut {
			return ErrSignedOut
		}
	}
	return err
}
