package relay

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gorilla/websocket"
)

func TestBackoffSchedule(t *testing.T) {
	b := backoff{unit: time.Second}
	want := []time.Duration{0, 1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		got := b.next()
		lo, hi := time.Duration(float64(w*time.Second)*0.75), time.Duration(float64(w*time.Second)*1.25)
		if got < lo || got > hi {
			t.Errorf("wait %d: %v, want %v ± 25%%", i, got, w*time.Second)
		}
	}
	b.reset()
	if b.next() != 0 {
		t.Fatal("after a reset the client does not reconnect at once")
	}
}

func TestSleptComparesWallAndMonotonic(t *testing.T) {
	// Real readings: awake, both clocks move together.
	now := time.Now()
	if slept(now, now.Add(2*time.Second)) || slept(now.Round(0), now.Add(30*time.Second).Round(0)) {
		t.Fatal("time awake read as sleep")
	}
	// The monotonic reading of a Time cannot be set, so sleep itself is
	// checked on the two elapsed times slept compares.
	for _, c := range []struct {
		wall, mono time.Duration
		want       bool
	}{
		{2 * time.Second, 2 * time.Second, false},
		{32 * time.Second, 2 * time.Second, true},  // 30 s asleep
		{11 * time.Second, 2 * time.Second, false}, // 9 s: under the 10 s jump
		{13 * time.Second, 2 * time.Second, true},
	} {
		if got := asleep(c.wall, c.mono); got != c.want {
			t.Errorf("asleep(%v, %v) = %v", c.wall, c.mono, got)
		}
	}
}

func startClient(t *testing.T, d *device, host bool, o ClientOptions) (*Client, chan error) {
	t.Helper()
	o.Identity, o.Host = d.id, host
	if o.BackoffUnit == 0 {
		o.BackoffUnit = 10 * time.Millisecond
	}
	c := NewClient(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return c, done
}

func TestClientsExchangeFrames(t *testing.T) {
	r := startRelay(t, nil)
	hostDev, phoneDev := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	got := make(chan [2]string, 4)
	host, _ := startClient(t, hostDev, true, ClientOptions{OnFrame: func(from, body string) { got <- [2]string{from, body} }})
	phone, _ := startClient(t, phoneDev, false, ClientOptions{})
	ctx := context.Background()
	if err := host.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if err := phone.Send(hostDev.profile.DeviceID, "r1", "sealed-body"); err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-got:
		if f[0] != phoneDev.profile.DeviceID || f[1] != "sealed-body" {
			t.Fatalf("got %v", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the frame did not arrive")
	}
	var hostSeen bool
	for _, d := range phone.Presence() {
		if d.ID == hostDev.profile.DeviceID && d.Host && d.Online {
			hostSeen = true
		}
	}
	if !hostSeen {
		t.Fatalf("presence: %+v", phone.Presence())
	}
}

func TestClientReconnectsAfterARelayRestart(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	var presences atomic.Int32
	c, _ := startClient(t, d, true, ClientOptions{OnPresence: func([]Device) { presences.Add(1) }})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.stop()
	r.start()
	deadline := time.Now().Add(10 * time.Second)
	for r.srv.hub.get(d.profile.Account.ID, d.profile.DeviceID) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the client did not come back after the relay restarted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRevokedClientSignsOut(t *testing.T) {
	r := startRelay(t, nil)
	a, b := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	c, done := startClient(t, a, true, ClientOptions{})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := getJSON(t, r, "DELETE", "/v1/devices/"+a.profile.DeviceID, b.token, nil); code != 200 {
		t.Fatal(code)
	}
	select {
	case err := <-done:
		done <- err
		if !errors.Is(err, ErrSignedOut) {
			t.Fatalf("Run ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a revoked client kept running")
	}
	if _, err := a.id.Token(); !errors.Is(err, ErrSignedOut) {
		t.Fatal("the token is still in the secrets file")
	}
	if _, err := a.id.Key(); err != nil {
		t.Fatal("signing out lost the key")
	}
}

// A refusal of an old token never signs out a newer sign-in.
func TestLateRefusalKeepsANewerSignIn(t *testing.T) {
	r := startRelay(t, nil)
	a := r.signIn("alice", "laptop")
	old := a.token
	r.advance(time.Second) // a token made in another second differs
	if _, err := a.id.SignIn(context.Background(), http.DefaultClient, r.url, "laptop", "cli", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	if out, err := a.id.SignOutIf(old); out || err != nil {
		t.Fatalf("an old token's refusal signed out: %v %v", out, err)
	}
	if _, err := a.id.Token(); err != nil {
		t.Fatal("the newer sign-in was lost")
	}
}

// A client replaced by a newer socket (4000) waits at least 60 s (scaled
// here) before it connects again, instead of fighting the newer one.
func TestReplacedClientWaits(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	c, _ := startClient(t, d, false, ClientOptions{BackoffUnit: 10 * time.Millisecond}) // 60 s → 600 ms
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := r.dial(d, false) // replaces the client's socket
	start := time.Now()
	next(t, raw, "presence")
	if code := closeCode(t, raw); code != CloseReplaced {
		t.Fatalf("close code %d", code)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Fatalf("the replaced client came back after %v; it should wait 600 ms", waited)
	}
}

// A socket that answers nothing after a ping is dead: the client cuts it
// and connects again.
func TestUnansweredPingMeansDead(t *testing.T) {
	var connects atomic.Int32
	up := websocket.Upgrader{}
	var mu sync.Mutex
	var socks []*websocket.Conn
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ws, err := up.Upgrade(w, req, nil)
		if err != nil {
			return
		}
		connects.Add(1)
		mu.Lock()
		socks = append(socks, ws) // never read, never answered
		mu.Unlock()
	}))
	defer hs.Close()
	defer func() {
		mu.Lock()
		for _, s := range socks {
			s.Close()
		}
		mu.Unlock()
	}()
	id := OpenIdentity(t.TempDir())
	if err := writeJSONFile(id.Dir()+"/"+profileFile, Profile{URL: hs.URL, DeviceID: "d-1"}); err != nil {
		t.Fatal(err)
	}
	farFuture := (&signer{secret: make([]byte, 32)}).sign(Claims{Account: "a", Device: "d-1", Expires: time.Now().Add(TokenLife).Unix(), Gen: "g"})
	if _, err := id.setToken("*", farFuture); err != nil {
		t.Fatal(err)
	}
	startClient(t, &device{id: id}, false, ClientOptions{PingEvery: 50 * time.Millisecond, DeadAfter: 100 * time.Millisecond, BackoffUnit: time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for connects.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("connects: %d; a silent socket was never declared dead", connects.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestQueueOf512Frames(t *testing.T) {
	c := NewClient(ClientOptions{Identity: OpenIdentity(t.TempDir())})
	for i := range maxWaiting {
		if err := c.Send("d-1", "", "x"); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := c.Send("d-1", "", "x"); !errors.Is(err, ErrQueueFull) || refusal.Sentence(err) != "Too much is waiting to go to the relay." {
		t.Fatalf("the 513th frame: %v", err)
	}
}

func TestTokenIsRefreshedWhenLessThanAWeekIsLeft(t *testing.T) {
	r := startRelay(t, nil)
	r.advance(-24 * 24 * time.Hour) // issued 24 days ago: 6 days left
	d := r.signIn("alice", "laptop")
	r.advance(24 * 24 * time.Hour)
	c, _ := startClient(t, d, false, ClientOptions{})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	fresh, _ := d.id.Token()
	if fresh == d.token || time.Until(tokenExpiry(fresh)) < 29*24*time.Hour {
		t.Fatalf("the token was not refreshed: expires %v", tokenExpiry(fresh))
	}
	// A token with weeks left is kept.
	if err := d.id.Refresh(context.Background(), http.DefaultClient, time.Now()); err != nil {
		t.Fatal(err)
	}
	if again, _ := d.id.Token(); again != fresh {
		t.Fatal("a fresh token was refreshed again")
	}
	_ = strings.TrimSpace
}

// A user action while the client waits out a backoff connects at once.
func TestKickConnectsDuringABackoff(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	r.stop()
	c, _ := startClient(t, d, false, ClientOptions{BackoffUnit: time.Second})
	// Attempts come at 0, 0.75-1.25 s, 2.25-3.75 s, then not before 5.25 s:
	// between 3.75 and 5.25 s the client is surely waiting.
	time.Sleep(4 * time.Second)
	r.start()
	time.Sleep(500 * time.Millisecond)
	if r.srv.hub.get(d.profile.Account.ID, d.profile.DeviceID) != nil {
		t.Fatal("the client connected on its own: the test did not catch it waiting")
	}
	start := time.Now()
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > 500*time.Millisecond {
		t.Fatalf("the kick waited %v: the backoff was not cut short", waited)
	}
}

// A socket that stays up for weeks keeps a valid token: the client checks
// it every RefreshEvery while connected, against its clock, and refreshes
// it when fewer than 7 days are left, without reconnecting (issue 12,
// item 5).
func TestTokenIsRefreshedWhileConnected(t *testing.T) {
	r := startRelay(t, nil)
	r.advance(-22 * 24 * time.Hour) // issued 22 days ago: 8 days left
	d := r.signIn("alice", "laptop")
	r.advance(22 * 24 * time.Hour)
	var skew atomic.Int64
	c, _ := startClient(t, d, true, ClientOptions{RefreshEvery: 20 * time.Millisecond,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	sock := r.srv.hub.get(d.profile.Account.ID, d.profile.DeviceID)
	time.Sleep(100 * time.Millisecond)
	if tok, _ := d.id.Token(); tok != d.token {
		t.Fatal("a token with 8 days left was refreshed")
	}
	skew.Store(int64(2 * 24 * time.Hour)) // two days later: 6 days left
	deadline := time.Now().Add(5 * time.Second)
	for {
		if tok, _ := d.id.Token(); tok != d.token {
			if time.Until(tokenExpiry(tok)) < 29*24*time.Hour {
				t.Fatalf("the new token expires %v", tokenExpiry(tok))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the token was not refreshed while connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.srv.hub.get(d.profile.Account.ID, d.profile.DeviceID) != sock {
		t.Fatal("the client reconnected to refresh")
	}
}
