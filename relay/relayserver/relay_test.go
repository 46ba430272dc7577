package relayserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse/gatehouse/internal/logbuf"
	"github.com/gatehouse/gatehouse/relay"
)

// testRelay is a real relay on a loopback socket with a real SQLite file.
type testRelay struct {
	t      testing.TB
	srv    *Server
	hs     *httptest.Server
	url    string
	dbPath string
	addr   string
	secret []byte
	store  *Store
	logs   *logbuf.Buffer
	offset atomic.Int64 // the relay's clock runs this far ahead
	opts   Options
	given  *Store // a store the test gave (PostgreSQL), kept across restarts

	tweakServer func(*Server) // before it serves, at each start
}

func startRelay(t testing.TB, tweak func(*Options)) *testRelay {
	t.Helper()
	return startRelayServer(t, tweak, nil)
}

// startRelayServer is startRelay with a change to the server made before
// it serves (a ForTest switch).
func startRelayServer(t testing.TB, tweak func(*Options), tweakServer func(*Server)) *testRelay {
	t.Helper()
	dir := t.TempDir()
	r := &testRelay{t: t, dbPath: filepath.Join(dir, "relay.db"), logs: &logbuf.Buffer{}, tweakServer: tweakServer}
	var err error
	if r.secret, err = LoadSecret(filepath.Join(dir, "secret")); err != nil {
		t.Fatal(err)
	}
	r.opts = Options{Secret: r.secret, Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		NowForTest: func() time.Time { return time.Now().Add(time.Duration(r.offset.Load())) }}
	if tweak != nil {
		tweak(&r.opts)
	}
	r.given = r.opts.Store
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *testRelay) start() {
	var err error
	if r.store = r.given; r.store == nil {
		if r.store, err = OpenStore(r.dbPath); err != nil {
			r.t.Fatal(err)
		}
	}
	r.opts.Store = r.store
	if r.srv, err = New(r.opts); err != nil {
		r.t.Fatal(err)
	}
	if r.tweakServer != nil {
		r.tweakServer(r.srv)
	}
	r.hs = httptest.NewUnstartedServer(r.srv)
	if r.addr != "" { // a restart listens where the devices know it
		l, err := net.Listen("tcp", r.addr)
		if err != nil {
			r.t.Fatal(err)
		}
		r.hs.Listener.Close()
		r.hs.Listener = l
	}
	r.hs.Start()
	r.url, r.addr = r.hs.URL, r.hs.Listener.Addr().String()
}

func (r *testRelay) stop() {
	if r.hs == nil {
		return
	}
	r.srv.Shutdown()
	r.hs.Close()
	r.store.Close()
	r.hs = nil
}

// advance moves the relay's clock (rate limits, token times).
func (r *testRelay) advance(d time.Duration) { r.offset.Add(int64(d)) }

// device is a signed-in device with its own state folder.
type device struct {
	dir     string // its state folder
	id      *relay.Identity
	profile relay.Profile
	token   string
}

func (r *testRelay) invite(account string) string {
	code, err := r.store.CreateInvite(context.Background(), account)
	if err != nil {
		r.t.Fatal(err)
	}
	return code
}

func (r *testRelay) signIn(account, name string) *device {
	r.t.Helper()
	dir := r.t.TempDir()
	id := relay.OpenIdentity(dir)
	p, err := id.SignIn(context.Background(), http.DefaultClient, r.url, name, "cli", "invite", r.invite(account))
	if err != nil {
		r.t.Fatalf("sign in %s: %v", name, err)
	}
	tok, _ := id.Token()
	return &device{dir: dir, id: id, profile: p, token: tok}
}

func (r *testRelay) dial(d *device, host bool) *websocket.Conn {
	r.t.Helper()
	ws, err := r.tryDial(d.token, host)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { ws.Close() })
	return ws
}

func (r *testRelay) tryDial(token string, host bool) (*websocket.Conn, error) {
	u := "ws" + strings.TrimPrefix(r.url, "http") + "/v1/connect?host=0"
	if host {
		u = u[:len(u)-1] + "1"
	}
	ws, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil && res != nil {
		return nil, &relay.APIError{Status: res.StatusCode}
	}
	return ws, err
}

// next reads frames until one of the kind wanted ("" for a forwarded one).
func next(t testing.TB, ws *websocket.Conn, kind string) map[string]any {
	t.Helper()
	for {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, data, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %q: %v", kind, err)
		}
		var f map[string]any
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		if k, _ := f["kind"].(string); k == kind {
			return f
		}
	}
}

func closeCode(t *testing.T, ws *websocket.Conn) int {
	t.Helper()
	for {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		t.Fatalf("socket ended without a close frame: %v", err)
	}
}

func send(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	data, _ := json.Marshal(v)
	if err := ws.WriteMessage(websocket.TextMessage, data); err != nil {
		t.Fatal(err)
	}
}

func getJSON(t *testing.T, r *testRelay, method, path, token string, in any) (int, map[string]any) {
	t.Helper()
	var body *bytes.Reader
	if in != nil {
		js, _ := json.Marshal(in)
		body = bytes.NewReader(js)
	} else {
		body = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, r.url+path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func TestInviteSignInAndConfig(t *testing.T) {
	r := startRelay(t, nil)
	code, cfg := getJSON(t, r, "GET", "/v1/config", "", nil)
	if code != 200 || cfg["providers"].([]any)[0] != "invite" {
		t.Fatalf("config: %d %v", code, cfg)
	}
	d := r.signIn("alice", "laptop")
	if d.profile.Account.ID != "inv:alice" || d.profile.Account.Login != "alice" {
		t.Fatalf("account: %+v", d.profile.Account)
	}
	code, list := getJSON(t, r, "GET", "/v1/devices", d.token, nil)
	if code != 200 || len(list["devices"].([]any)) != 1 {
		t.Fatalf("devices: %d %v", code, list)
	}
	// An invite is used once.
	invite := r.invite("alice")
	id := relay.OpenIdentity(t.TempDir())
	if _, err := id.SignIn(context.Background(), http.DefaultClient, r.url, "phone", "cli", "invite", invite); err != nil {
		t.Fatal(err)
	}
	id2 := relay.OpenIdentity(t.TempDir())
	_, err := id2.SignIn(context.Background(), http.DefaultClient, r.url, "phone", "cli", "invite", invite)
	var ae *relay.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Message != msgBadInvite {
		t.Fatalf("a used invite: %v", err)
	}
	// An expired one is refused too.
	late := r.invite("alice")
	r.advance(16 * time.Minute)
	_, err = relay.OpenIdentity(t.TempDir()).SignIn(context.Background(), http.DefaultClient, r.url, "phone", "cli", "invite", late)
	if !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("an expired invite: %v", err)
	}
	// The secrets file is 0600 and holds the token and key.
	fi, err := os.Stat(filepath.Join(d.dir, secretsFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file: %v %v", fi.Mode(), err)
	}
}

// fakeGitHub answers POST /applications/{client_id}/token like GitHub: a
// token of this app gives the user; any other token is 404.
func fakeGitHub(t *testing.T, clientID, clientSecret string, tokens map[string]int64) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /applications/{id}/token", func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != clientID || pass != clientSecret || r.PathValue("id") != clientID {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		var in struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		uid, found := tokens[in.AccessToken]
		if !found {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"app": map[string]any{"client_id": clientID},
			"user": map[string]any{"id": uid, "login": "octo", "avatar_url": "https://avatars.example/u/1"}})
	})
	// The device flow a person completes in the browser: the first poll is
	// pending, the second gets the token of user 42.
	var polls atomic.Int32
	mux.HandleFunc("POST /login/device/code", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("client_id") != clientID {
			http.Error(w, "bad client", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"device_code": "dc-1", "user_code": "ABCD-1234",
			"verification_uri": "https://github.example/login/device", "expires_in": 60, "interval": 1})
	})
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("device_code") != "dc-1" || r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:device_code" {
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "incorrect_device_code"})
			return
		}
		if polls.Add(1) == 1 {
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "authorization_pending"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "gho_good", "token_type": "bearer"})
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestGitHubSignIn(t *testing.T) {
	api := fakeGitHub(t, "Iv1.app", "shh", map[string]int64{"gho_good": 42})
	r := startRelay(t, func(o *Options) {
		o.GitHub = &GitHubApp{ClientID: "Iv1.app", ClientSecret: "shh", APIBase: api}
	})
	cfg, err := relay.FetchConfig(context.Background(), http.DefaultClient, r.url)
	if err != nil || len(cfg.Providers) != 2 || cfg.GitHub.ClientID != "Iv1.app" {
		t.Fatalf("config: %+v %v", cfg, err)
	}
	var shown string
	token, err := relay.DeviceFlow(context.Background(), http.DefaultClient, api, cfg.GitHub.ClientID, func(code, uri string) { shown = code + " " + uri })
	if err != nil || token != "gho_good" || shown != "ABCD-1234 https://github.example/login/device" {
		t.Fatalf("device flow: %q %q %v", token, shown, err)
	}
	id := relay.OpenIdentity(t.TempDir())
	p, err := id.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "linux", "github", token)
	if err != nil || p.Account.ID != "gh:42" || p.Account.Login != "octo" {
		t.Fatalf("github sign-in: %+v %v", p, err)
	}
	// A token GitHub issued to another app is refused.
	_, err = relay.OpenIdentity(t.TempDir()).SignIn(context.Background(), http.DefaultClient, r.url, "x", "linux", "github", "gho_other_app")
	var ae *relay.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Message != msgGitHub {
		t.Fatalf("another app's token: %v", err)
	}
	// A relay without GitHub configured refuses the provider.
	plain := startRelay(t, nil)
	_, err = relay.OpenIdentity(t.TempDir()).SignIn(context.Background(), http.DefaultClient, plain.url, "x", "linux", "github", "gho_good")
	if !errors.As(err, &ae) || ae.Message != msgNoProvider {
		t.Fatalf("github on a relay without it: %v", err)
	}
}

// A device id registered with another key answers 409; the client makes a
// new id, saves it, and retries once.
func TestKeyConflictGetsANewID(t *testing.T) {
	r := startRelay(t, nil)
	a := r.signIn("alice", "laptop")
	bDir := t.TempDir()
	b := relay.OpenIdentity(bDir)
	writeProfile(t, bDir, relay.Profile{URL: a.profile.URL, DeviceID: a.profile.DeviceID})
	// Without the retry: the relay refuses the id.
	key := otherKey(t)
	status, out := getJSON(t, r, "POST", "/v1/auth/invite", "", map[string]any{"invite": r.invite("alice"),
		"device": relay.Device{ID: a.profile.DeviceID, Name: "phone", Platform: "cli", PublicKey: key}})
	if status != 409 || out["error"] != msgKeyConflict {
		t.Fatalf("same id, other key: %d %v", status, out)
	}
	p, err := b.SignIn(context.Background(), http.DefaultClient, r.url, "phone", "cli", "invite", r.invite("alice"))
	if err != nil || p.DeviceID == a.profile.DeviceID || b.Profile().DeviceID != p.DeviceID {
		t.Fatalf("after 409: %+v %v", p, err)
	}
}

func TestKeyIsNeverOverwritten(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	k1, _ := d.id.Key()
	if _, err := d.id.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "cli", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	k2, _ := d.id.Key()
	if !k1.Equal(k2) || d.id.Profile().DeviceID != d.profile.DeviceID {
		t.Fatal("signing in again changed the key or the id")
	}
}

func TestRevokeClosesTheSocketAndKillsTokens(t *testing.T) {
	r := startRelay(t, nil)
	a, b := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsA := r.dial(a, true)
	next(t, wsA, "presence")
	if code, _ := getJSON(t, r, "DELETE", "/v1/devices/"+a.profile.DeviceID, b.token, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	if code := closeCode(t, wsA); code != relay.CloseRevoked {
		t.Fatalf("close code %d, want 4001", code)
	}
	if code, _ := getJSON(t, r, "GET", "/v1/devices", a.token, nil); code != 401 {
		t.Fatalf("a revoked token answered %d", code)
	}
	// Re-registered in the same second, with the same id and key: the old
	// token stays dead (the row has a new gen).
	if _, err := a.id.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "cli", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	if code, _ := getJSON(t, r, "GET", "/v1/devices", a.token, nil); code != 401 {
		t.Fatalf("an old token after re-registration answered %d", code)
	}
	if _, err := r.tryDial(a.token, false); err == nil {
		t.Fatal("an old token opened a socket")
	}
	fresh, _ := a.id.Token()
	if code, _ := getJSON(t, r, "GET", "/v1/devices", fresh, nil); code != 200 {
		t.Fatalf("the new token answered %d", code)
	}
}

func TestSecondSocketReplacesTheFirst(t *testing.T) {
	r := startRelay(t, nil)
	a := r.signIn("alice", "laptop")
	first := r.dial(a, false)
	next(t, first, "presence")
	second := r.dial(a, false)
	if code := closeCode(t, first); code != relay.CloseReplaced {
		t.Fatalf("close code %d, want 4000", code)
	}
	next(t, second, "presence")
}

func TestForwardingAndPresence(t *testing.T) {
	r := startRelay(t, nil)
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	other := r.signIn("bob", "stranger")
	wsH := r.dial(host, true)
	p := next(t, wsH, "presence")
	if devs := p["devices"].([]any); len(devs) != 2 || !devs[0].(map[string]any)["online"].(bool) {
		t.Fatalf("presence on join: %v", p)
	}
	wsP := r.dial(phone, false)
	next(t, wsP, "presence")
	p = next(t, wsH, "presence") // the phone joined
	online := 0
	for _, d := range p["devices"].([]any) {
		if d.(map[string]any)["online"].(bool) {
			online++
		}
	}
	if online != 2 {
		t.Fatalf("presence after the phone joined: %v", p)
	}
	// A body goes through byte for byte, escapes and all, with from added.
	body := `x\"y\u00e9` + strings.Repeat("A", 5000)
	raw := `{"to":"` + host.profile.DeviceID + `","ref":"r1","body":"` + body + `"}`
	if err := wsP.WriteMessage(websocket.TextMessage, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	_ = wsH.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, data, err := wsH.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`"presence"`)) {
			continue
		}
		want := `{"from":"` + phone.profile.DeviceID + `","to":"` + host.profile.DeviceID + `","body":"` + body + `"}`
		if string(data) != want {
			t.Fatalf("forwarded frame:\n%.200s\nwant\n%.200s", data, want)
		}
		break
	}
	// Another account's device is offline to this one.
	send(t, wsP, map[string]string{"to": other.profile.DeviceID, "body": "x", "ref": "r2"})
	u := next(t, wsP, "undeliverable")
	if u["reason"] != "offline" || u["ref"] != "r2" {
		t.Fatalf("undeliverable: %v", u)
	}
	// Leaving shows in presence.
	wsP.Close()
	for {
		p = next(t, wsH, "presence")
		if !p["devices"].([]any)[1].(map[string]any)["online"].(bool) {
			break
		}
	}
}

func TestFrameOver256KiBIsRefused(t *testing.T) {
	r := startRelay(t, nil)
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsH, wsP := r.dial(host, true), r.dial(phone, false)
	next(t, wsH, "presence")
	next(t, wsP, "presence")
	big := `{"to":"` + host.profile.DeviceID + `","body":"` + strings.Repeat("A", relay.MaxFrame) + `"}`
	_ = wsP.WriteMessage(websocket.TextMessage, []byte(big))
	if code := closeCode(t, wsP); code != websocket.CloseMessageTooBig {
		t.Fatalf("close code %d, want 1009", code)
	}
	// The host got no part of it.
	_ = wsH.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		_, data, err := wsH.ReadMessage()
		if err != nil {
			break
		}
		if bytes.Contains(data, []byte(`"from"`)) {
			t.Fatal("a frame over the limit was forwarded")
		}
	}
}

func TestFrameRateLimit(t *testing.T) {
	r := startRelay(t, nil)
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsH, wsP := r.dial(host, true), r.dial(phone, false)
	next(t, wsH, "presence")
	next(t, wsP, "presence")
	for i := range 150 {
		send(t, wsP, map[string]string{"to": host.profile.DeviceID, "body": "x", "ref": "r" + string(rune('a'+i%26))})
	}
	u := next(t, wsP, "undeliverable")
	if u["reason"] != "rate" {
		t.Fatalf("over the rate: %v", u)
	}
	// The host got the burst (100) and no more.
	got := 0
	_ = wsH.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	for {
		_, data, err := wsH.ReadMessage()
		if err != nil {
			break
		}
		if bytes.Contains(data, []byte(`"from"`)) {
			got++
		}
	}
	if got < 100 || got > 103 {
		t.Fatalf("the host got %d frames of 150; the burst is 100", got)
	}
}

func TestEleventhDeviceIsRefused(t *testing.T) {
	r := startRelay(t, nil)
	for i := range MaxDevices {
		r.signIn("alice", "device")
		if i%5 == 4 {
			r.advance(time.Minute) // past the sign-in rate limit of one address
		}
	}
	_, err := relay.OpenIdentity(t.TempDir()).SignIn(context.Background(), http.DefaultClient, r.url, "eleventh", "cli", "invite", r.invite("alice"))
	var ae *relay.APIError
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Message != msgDeviceLimit {
		t.Fatalf("the 11th device: %v", err)
	}
}

func TestSignInRateLimit(t *testing.T) {
	r := startRelay(t, nil)
	var last int
	for range authPerIP + 1 {
		last, _ = getJSON(t, r, "POST", "/v1/auth/invite", "", map[string]any{"invite": "nope"})
	}
	if last != 429 {
		t.Fatalf("the 11th sign-in in a minute answered %d", last)
	}
	r.advance(time.Minute)
	if code, _ := getJSON(t, r, "POST", "/v1/auth/invite", "", map[string]any{"invite": "nope"}); code == 429 {
		t.Fatal("the limit did not refill")
	}
}

func TestRestartKeepsDevicesAndTokens(t *testing.T) {
	r := startRelay(t, nil)
	a := r.signIn("alice", "laptop")
	r.stop()
	r.start()
	if code, out := getJSON(t, r, "GET", "/v1/devices", a.token, nil); code != 200 || len(out["devices"].([]any)) != 1 {
		t.Fatalf("after a restart: %d %v", code, out)
	}
}

// Whatever passes through the relay never reaches its logs or its database.
func TestBodiesNeverReachLogsOrDatabase(t *testing.T) {
	r := startRelay(t, nil)
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsH, wsP := r.dial(host, true), r.dial(phone, false)
	next(t, wsH, "presence")
	next(t, wsP, "presence")
	const marker = "MARKER-7f3a9c-SHOULD-NEVER-BE-STORED"
	send(t, wsP, map[string]string{"to": host.profile.DeviceID, "body": marker, "ref": "r1"})
	send(t, wsP, map[string]string{"to": "nobody", "body": marker, "ref": "r2"})
	send(t, wsP, map[string]string{"body": marker})       // not addressed
	send(t, wsP, map[string]any{"to": 5, "body": marker}) // malformed
	if got := next(t, wsH, ""); got["body"] != marker {
		t.Fatalf("not forwarded: %v", got)
	}
	next(t, wsP, "undeliverable")
	r.stop()
	if strings.Contains(r.logs.String(), marker) {
		t.Fatal("the marker is in the relay's log")
	}
	for _, f := range []string{r.dbPath, r.dbPath + "-wal", r.dbPath + "-shm"} {
		data, err := os.ReadFile(f)
		if err == nil && bytes.Contains(data, []byte(marker)) {
			t.Fatalf("the marker is in %s", filepath.Base(f))
		}
	}
	if !strings.Contains(r.logs.String(), "device connected") {
		t.Fatal("the log check read nothing: debug logging is off")
	}
}

func TestPushNoticesAreCoalesced(t *testing.T) {
	var mu sync.Mutex
	var got []Notice
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var n Notice
		_ = json.NewDecoder(req.Body).Decode(&n)
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	}))
	defer hook.Close()
	r := startRelay(t, func(o *Options) {
		o.Pusher = &WebhookPusher{URL: hook.URL}
		o.NotifyWindow = 400 * time.Millisecond
	})
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	if code, _ := getJSON(t, r, "POST", "/v1/push/devices", phone.token, map[string]string{"platform": "ios", "token": "apns-1"}); code != 200 {
		t.Fatalf("push register: %d", code)
	}
	wsH := r.dial(host, true)
	next(t, wsH, "presence")
	start := time.Now()
	send(t, wsH, map[string]any{"kind": "notify", "body": map[string]any{"kind": "waiting", "count": 1}})
	send(t, wsH, map[string]any{"kind": "notify", "body": map[string]any{"kind": "finished", "count": 2}})
	send(t, wsH, map[string]any{"kind": "notify", "body": map[string]any{"kind": "waiting", "count": 3}}) // grows: halves the window
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	time.Sleep(500 * time.Millisecond) // nothing more comes
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Waiting != 3 || got[0].Finished != 2 || got[0].Token != "apns-1" {
		t.Fatalf("notices: %+v", got)
	}
	if elapsed >= 390*time.Millisecond {
		t.Fatalf("a growing waiting count did not shorten the window: %v", elapsed)
	}
	if strings.Contains(got[0].Message, "laptop") {
		t.Fatalf("a notice carries more than counts: %q", got[0].Message)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.Node = "edge-1" })
	host := r.signIn("alice", "laptop")
	ws := r.dial(host, true)
	next(t, ws, "presence")
	send(t, ws, map[string]string{"to": "nobody", "body": "x"})
	next(t, ws, "undeliverable")
	getJSON(t, r, "GET", "/v1/devices", "bad-token", nil)
	ms := httptest.NewServer(r.srv.MetricsHandler(""))
	defer ms.Close()
	res, err := http.Get(ms.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	for _, want := range []string{`gatehouse_relay_connections{node="edge-1"} 1`, `gatehouse_relay_undeliverable_total{node="edge-1",reason="offline"} 1`,
		`gatehouse_relay_auth_failures_total{node="edge-1",provider="token",reason="invalid"} 1`, `gatehouse_relay_queue_seconds_count{node="edge-1"}`,
		`go_goroutines{node="edge-1"}`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := getJSON(t, r, "GET", path, "", nil); code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
	}
	// A database that does not answer: not ready, still alive; the cause
	// stays in the log.
	r.store.Close()
	if code, body := getJSON(t, r, "GET", "/readyz", "", nil); code != 503 || body["error"] != msgUnavailable {
		t.Fatalf("readyz with the database closed: %d %v", code, body)
	}
	if code, _ := getJSON(t, r, "GET", "/healthz", "", nil); code != 200 {
		t.Fatalf("healthz with the database closed: %d", code)
	}
	// A valid token while the database does not answer is "try again",
	// never "sign in again" (a 401 signs the device out): before, the
	// token check read a failed query as a removed device.
	if _, _, err := r.store.Gen(context.Background(), host.profile.Account.ID, host.profile.DeviceID); err == nil {
		t.Fatal("expected the query to fail with the database closed")
	}
	if code, body := getJSON(t, r, "GET", "/v1/devices", host.token, nil); code != 503 || body["error"] != msgUnavailable {
		t.Fatalf("a valid token with the database closed: %d %v", code, body)
	}
}

func TestShutdownClosesSocketsNormally(t *testing.T) {
	r := startRelay(t, nil)
	ws := r.dial(r.signIn("alice", "laptop"), false)
	next(t, ws, "presence")
	go r.srv.Shutdown()
	if code := closeCode(t, ws); code != websocket.CloseGoingAway {
		t.Fatalf("close code %d, want 1001", code)
	}
}

func TestBrowserOriginsAreRefused(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	u := "ws" + strings.TrimPrefix(r.url, "http") + "/v1/connect"
	_, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + d.token}, "Origin": {"https://evil.example"}})
	if err == nil || res == nil || res.StatusCode != 403 {
		t.Fatalf("a browser origin connected: %v", err)
	}
}

func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://relay.example": true, "wss://relay.example": true, "http://127.0.0.1:8080": true,
		"http://localhost:1": true, "ws://[::1]:9": true, "http://relay.example": false, "ws://10.0.0.1": false,
		"ftp://relay.example": false, "https://user:pw@relay.example": false, "relay.example": false,
	} {
		if _, err := relay.CheckURL(raw); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v", raw, err)
		}
	}
}

func TestSecretShorterThan32BytesIsRefused(t *testing.T) {
	if _, err := New(Options{Secret: []byte("short"), Store: &Store{}}); err == nil {
		t.Fatal("a short secret was accepted")
	}
	p := filepath.Join(t.TempDir(), "secret")
	_ = os.WriteFile(p, []byte("too-short\n"), 0o600)
	if _, err := LoadSecret(p); err == nil {
		t.Fatal("a short secret file was accepted")
	}
}

// released pins the migrations already released: a relay that ran one
// never runs it again, so an edit would leave it different from a new one.
// Add a migration; never change these.
var released = []string{
	"25d121bbda5061a6d130c00a306d22caeb304e483d20eeb0a8b7b7b1b5a1dded",
	"85da7381aa464b49e84db2843d25ffff0a683c3accb657a0c9f8a39c62cd7e81", // tombstones
	"050a33757ada8425fdb66eff62fd0f0bbd9e85b63bf6755e3c1dce081ca16a24", // rate_hits: limits shared by the relay's nodes
}

// checkPinned fails t when a released migration of list was removed or
// edited.
func checkPinned(t *testing.T, db string, list, pinned []string) {
	t.Helper()
	if len(list) < len(pinned) {
		t.Fatalf("a released %s migration was removed", db)
	}
	for i, want := range pinned {
		if got := fmt.Sprintf("%x", sha256.Sum256([]byte(list[i]))); got != want {
			t.Errorf("%s migration %d was edited after release (sha256 %s)", db, i+1, got)
		}
	}
}

func TestMigrationsAreAppendOnly(t *testing.T) {
	checkPinned(t, "sqlite", migrations, released)
	r := startRelay(t, nil)
	var fk int
	if err := r.store.db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign keys are off: %d %v", fk, err)
	}
	var mode string
	if err := r.store.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q", mode)
	}
}

func TestAccountCallRateLimit(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	codes := map[int]int{}
	for range apiPerAccount + 1 {
		code, _ := getJSON(t, r, "GET", "/v1/devices", d.token, nil)
		codes[code]++
	}
	if codes[200] != apiPerAccount || codes[429] != 1 {
		t.Fatalf("answers: %v", codes)
	}
}
