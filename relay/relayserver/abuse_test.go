package relayserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/connlimit"
	"github.com/gatehouse/gatehouse/internal/flood"

	"github.com/gatehouse/gatehouse/relay"
)

// takeID signs in under id with key, as an impostor would: it returns the
// status the relay answers.
func takeID(t *testing.T, r *testRelay, account, id, key string) int {
	t.Helper()
	code, _ := getJSON(t, r, "POST", "/v1/auth/invite", "", map[string]any{"invite": r.invite(account),
		"device": relay.Device{ID: id, Name: "impostor", Platform: "cli", PublicKey: key}})
	return code
}

// The attack: a device of the account that was never granted anything removes
// the host and signs in again under the host's id with its own key. The
// tombstone refuses the id to any other key, after a device removal and after
// the account's deletion, while the host's own key may come back.
func TestRemovedDeviceIDIsNeverGivenToAnotherKey(t *testing.T) {
	r := startRelay(t, nil)
	host, impostor := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	hostID := host.profile.DeviceID
	if code := takeID(t, r, "alice", hostID, otherKey(t)); code != 409 {
		t.Fatalf("a registered id with another key answered %d", code)
	}
	if code, _ := getJSON(t, r, "DELETE", "/v1/devices/"+hostID, impostor.token, nil); code != 200 {
		t.Fatalf("remove: %d", code)
	}
	impKey, _ := impostor.id.Key()
	if code := takeID(t, r, "alice", hostID, base64.StdEncoding.EncodeToString(impKey.PublicKey().Bytes())); code != 409 {
		t.Fatalf("the removed host's id was given to the impostor's key: %d", code)
	}
	if code := takeID(t, r, "alice", strings.ToUpper(hostID), otherKey(t)); code != 409 {
		t.Fatalf("the removed host's id in capitals was given to another key: %d", code)
	}
	// The client's 409 path: the impostor ends up under a new id.
	clDir := t.TempDir()
	cl := relay.OpenIdentity(clDir)
	writeProfile(t, clDir, relay.Profile{URL: r.url, DeviceID: hostID})
	if p, err := cl.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "cli", "invite", r.invite("alice")); err != nil || p.DeviceID == hostID {
		t.Fatalf("the client under a tombstoned id: %+v %v", p, err)
	}
	// The host itself comes back with its own key.
	if _, err := host.id.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "cli", "invite", r.invite("alice")); err != nil {
		t.Fatalf("the removed host could not sign in again with its own key: %v", err)
	}
	if host.id.Profile().DeviceID != hostID {
		t.Fatal("the host came back under another id")
	}

	// Deleting the account keeps every device's tombstone.
	fresh, _ := impostor.id.Token()
	if code, _ := getJSON(t, r, "DELETE", "/v1/account", fresh, nil); code != 200 {
		t.Fatalf("delete account: %d", code)
	}
	if code := takeID(t, r, "alice", hostID, otherKey(t)); code != 409 {
		t.Fatalf("after the account's deletion the host's id went to another key: %d", code)
	}
	if _, err := host.id.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "cli", "invite", r.invite("alice")); err != nil {
		t.Fatalf("after the account's deletion the host's own key was refused: %v", err)
	}
}

// One address spending the whole sign-in budget must not lock out another.
func TestSignInBudgetIsPerAddressFirst(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.ProxyHeader = "X-Forwarded-For" })
	signIn := func(from string) int {
		req, _ := http.NewRequest("POST", r.url+"/v1/auth/invite", nil)
		req.Header.Set("X-Forwarded-For", from)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for range authOverall + 1 {
		signIn("192.0.2.1")
	}
	if code := signIn("192.0.2.1"); code != 429 {
		t.Fatalf("the flooding address answered %d", code)
	}
	if code := signIn("192.0.2.2"); code == 429 {
		t.Fatal("one address's flood locked another out of sign-in")
	}
}

// A device sending notify frames with a growing waiting count used to halve
// the window each time, so a push went out every few frames: at most one
// push per account per window now.
func TestPushRateIsPerAccount(t *testing.T) {
	const window = 200 * time.Millisecond
	var mu sync.Mutex
	var at []time.Time
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
	}))
	defer hook.Close()
	r := startRelay(t, func(o *Options) {
		o.Pusher = &WebhookPusher{URL: hook.URL}
		o.NotifyWindow = window
	})
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	if code, _ := getJSON(t, r, "POST", "/v1/push/devices", phone.token, map[string]string{"platform": "ios", "token": "apns-1"}); code != 200 {
		t.Fatalf("push register: %d", code)
	}
	ws := r.dial(host, true)
	next(t, ws, "presence")
	for i := range 80 { // 1.6 s at 50 frames a second, within the burst of 100
		send(t, ws, map[string]any{"kind": "notify", "body": map[string]any{"kind": "waiting", "count": i + 1}})
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * window)
	mu.Lock()
	defer mu.Unlock()
	if len(at) < 2 {
		t.Fatalf("only %d pushes: the test measured nothing", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < window*8/10 {
			t.Fatalf("%d pushes; push %d came %v after the one before (window %v)", len(at), i, gap, window)
		}
	}
}

// Every file the relay keeps is 0600 even in a folder others may read and
// whatever the umask, and an older database left readable is made 0600.
func TestRelayFilesAreOwnerOnlyInAnOpenFolder(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "relay.db")
	check := func(when string) {
		t.Helper()
		files := []string{db, db + "-wal", db + "-shm", filepath.Join(dir, "token-secret")}
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("%s: %s is %v, want 0600", when, filepath.Base(f), m)
			}
		}
	}
	if _, err := LoadSecret(filepath.Join(dir, "token-secret")); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateInvite(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	check("new")
	// A database an older relay left world-readable.
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		os.Chmod(f, 0o644)
	}
	st.Close()
	if st, err = OpenStore(db); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateInvite(context.Background(), "bob"); err != nil {
		t.Fatal(err)
	}
	check("reopened")
}

// slowRelay serves a relay through NewHTTPServer and Listen with lim, and
// returns its address and the counting listener.
func slowRelay(t *testing.T, lim ConnLimits) (string, net.Listener) {
	r := startRelay(t, nil)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := lim.Listen(raw) // with no caps it only counts
	hs := NewHTTPServer(r.srv, lim)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return raw.Addr().String(), ln
}

// openSlow opens n connections from src that send a sign-in's headers and
// never its body.
func openSlow(t *testing.T, src, addr string, n int) {
	head := "POST /v1/auth/invite HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
	flood.HeadersOnly(t, src, addr, head, n)
}

// ordinary times one health check from 127.0.0.1.
func ordinary(t *testing.T, addr string) time.Duration {
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	res, err := cl.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("an ordinary request got no answer: %v", err)
	}
	res.Body.Close()
	return time.Since(start)
}

// openOn waits for the listener's open count to settle and returns it.
func openOn(ln net.Listener) int {
	var open, last int = 0, -1
	for range 50 {
		open, _, _ = connlimit.Stats(ln)
		if open == last {
			break
		}
		last = open
		time.Sleep(20 * time.Millisecond)
	}
	return open
}

// The attack: 5,000 connections from one address send headers and never the
// body. Without limits the relay holds every one (until the descriptors run
// out); with them it holds at most PerAddr, an ordinary request from another
// address is answered within a second, and the slow ones are dropped when the
// read timeout passes.
func TestSlowClientsCannotHoldTheRelay(t *testing.T) {
	const slow = 5000
	flood.RaiseFileLimit(t, 2*slow+1000)

	t.Run("without limits", func(t *testing.T) {
		addr, ln := slowRelay(t, ConnLimits{})
		openSlow(t, "127.0.0.2", addr, slow)
		if open := openOn(ln); open < slow*9/10 {
			t.Fatalf("the attack did not reproduce: %d of %d held", open, slow)
		}
	})

	t.Run("with limits", func(t *testing.T) {
		lim := DefaultConnLimits()
		lim.Read = 2 * time.Second // a short body timeout, so the test sees it fire
		addr, ln := slowRelay(t, lim)
		openSlow(t, "127.0.0.2", addr, slow)
		if open := openOn(ln); open > lim.PerAddr {
			t.Fatalf("%d slow connections held from one address (cap %d)", open, lim.PerAddr)
		}
		if d := ordinary(t, addr); d > time.Second {
			t.Fatalf("the ordinary request took %v beside %d slow connections", d, slow)
		}
		deadline := time.Now().Add(lim.Read + 3*time.Second)
		for time.Now().Before(deadline) {
			if open, _, _ := connlimit.Stats(ln); open == 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		open, _, _ := connlimit.Stats(ln)
		t.Fatalf("%d headers-only connections outlived the body timeout", open)
	})
}

// A reply's ref (the request id it answers) comes back on undeliverable, so
// the host knows which reply was lost; the relay never drops it.
func TestUndeliverableKeepsTheRef(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.FrameLimitForTest = &FrameLimit{Rate: 0.001, Burst: 1} })
	host := r.signIn("alice", "laptop")
	ws := r.dial(host, true)
	next(t, ws, "presence")
	send(t, ws, map[string]string{"to": "phone-gone", "body": "sealed", "ref": "req-1"})
	if f := next(t, ws, "undeliverable"); f["ref"] != "req-1" || f["reason"] != "offline" {
		t.Fatalf("offline: %v", f)
	}
	send(t, ws, map[string]string{"to": "phone-gone", "body": "sealed", "ref": "req-2"})
	if f := next(t, ws, "undeliverable"); f["ref"] != "req-2" || f["reason"] != "rate" {
		t.Fatalf("rate: %v", f)
	}
}

// BenchmarkOrdinaryRequestBesideSlowClients times one health check from
// 127.0.0.1 (a new connection each, as a device's first call) on a relay
// with the default limits, with no other connection and with 5,000
// headers-only connections from 127.0.0.2 held open by the client.
//
//	go test -run '^$' -bench OrdinaryRequestBesideSlowClients -benchtime 2000x ./relay/
func BenchmarkOrdinaryRequestBesideSlowClients(b *testing.B) {
	for _, c := range []struct {
		slow    int
		limited bool
	}{{0, true}, {5000, true}, {5000, false}} {
		b.Run(fmt.Sprintf("slow=%d/limits=%v", c.slow, c.limited), func(b *testing.B) {
			benchOrdinary(b, c.slow, c.limited)
		})
	}
}

// benchOrdinary also reports the connections the relay held after the slow
// ones were opened (held-conns).
func benchOrdinary(b *testing.B, slow int, limited bool) {
	flood.RaiseFileLimit(b, 2*uint64(slow)+256)
	dir := b.TempDir()
	secret, _ := LoadSecret(filepath.Join(dir, "secret"))
	st, err := OpenStore(filepath.Join(dir, "relay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Options{Store: st, Secret: secret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	limits := DefaultConnLimits()
	if !limited {
		limits = ConnLimits{}
	}
	ln := limits.Listen(raw)
	hs := NewHTTPServer(srv, limits)
	go hs.Serve(ln)
	defer hs.Close()
	addr := raw.Addr().String()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	head := "POST /v1/auth/invite HTTP/1.1\r\nHost: relay\r\nContent-Length: 1000\r\n\r\n"
	for range slow {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, head)
	}
	held := openOn(ln)
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	b.ResetTimer()
	for b.Loop() {
		res, err := cl.Get("http://" + addr + "/healthz")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	b.ReportMetric(float64(held), "held-conns")
}

// fromAddress is an HTTP client whose requests come from addr, as a proxy
// that sets X-Forwarded-For says.
type fromAddress string

func (a fromAddress) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Forwarded-For", string(a))
	return http.DefaultTransport.RoundTrip(req)
}

// Found by the red team: 30 addresses, each within its own 10 a minute,
// spent the overall sign-in budget with wrong invite codes, and a person
// with a valid code was refused for the rest of the minute. An invite is
// now bounded per address only.
func TestManyAddressesCannotLockOutAValidInvite(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.ProxyHeader = "X-Forwarded-For" })
	for a := range authOverall/authPerIP + 1 {
		from := fmt.Sprintf("192.0.2.%d", a+1)
		for range authPerIP {
			req, _ := http.NewRequest("POST", r.url+"/v1/auth/invite",
				strings.NewReader(`{"device":{"id":"d-x","name":"x","platform":"cli","publicKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},"invite":"wrong"}`))
			req.Header.Set("X-Forwarded-For", from)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
	}
	id := relay.OpenIdentity(t.TempDir())
	hc := &http.Client{Transport: fromAddress("198.51.100.7")}
	if _, err := id.SignIn(context.Background(), hc, r.url, "phone", "cli", "invite", r.invite("alice")); err != nil {
		t.Fatalf("a valid invite after a flood from many addresses: %v", err)
	}
}
