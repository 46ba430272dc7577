package relayserver

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/relay"
)

// The relay client against a real relay server: frames, presence,
// reconnects, sign-out and token refresh, end to end on loopback.

func startClient(t testing.TB, d *device, host bool, o relay.ClientOptions) (*relay.Client, chan error) {
	t.Helper()
	o.Identity, o.Host = d.id, host
	if o.BackoffUnit == 0 {
		o.BackoffUnit = 10 * time.Millisecond
	}
	c := relay.NewClient(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return c, done
}

// TestClientsExchangeFrames: a phone's frame reaches the host, and the
// phone sees the host online. Presence is sent by one goroutine per account
// that reruns on every change, so the first list a socket gets may predate
// the host's own connect (computed before it, sent after the phone joined);
// the relay promises only that the last list sent is current. The test waits
// for that list rather than reading Presence once, which failed about 4 runs
// in 100 under -race.
func TestClientsExchangeFrames(t *testing.T) {
	r := startRelay(t, nil)
	hostDev, phoneDev := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	got := make(chan [2]string, 4)
	host, _ := startClient(t, hostDev, true, relay.ClientOptions{OnFrame: func(from, body string) { got <- [2]string{from, body} }})
	hostOnline := make(chan struct{})
	var once sync.Once
	phone, _ := startClient(t, phoneDev, false, relay.ClientOptions{OnPresence: func(list []relay.Device) {
		for _, d := range list {
			if d.ID == hostDev.profile.DeviceID && d.Host && d.Online {
				once.Do(func() { close(hostOnline) })
			}
		}
	}})
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
	select {
	case <-hostOnline:
	case <-time.After(5 * time.Second):
		t.Fatalf("the phone never saw the host online: %+v", phone.Presence())
	}
}

func TestClientReconnectsAfterARelayRestart(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	var presences atomic.Int32
	c, _ := startClient(t, d, true, relay.ClientOptions{OnPresence: func([]relay.Device) { presences.Add(1) }})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.stop()
	r.start()
	deadline := time.Now().Add(10 * time.Second)
	for localSocket(r.srv.hub, d.profile.Account.ID, d.profile.DeviceID) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the client did not come back after the relay restarted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRevokedClientSignsOut(t *testing.T) {
	r := startRelay(t, nil)
	a, b := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	c, done := startClient(t, a, true, relay.ClientOptions{})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := getJSON(t, r, "DELETE", "/v1/devices/"+a.profile.DeviceID, b.token, nil); code != 200 {
		t.Fatal(code)
	}
	select {
	case err := <-done:
		done <- err
		if !errors.Is(err, relay.ErrSignedOut) {
			t.Fatalf("Run ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a revoked client kept running")
	}
	if _, err := a.id.Token(); !errors.Is(err, relay.ErrSignedOut) {
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
	c, _ := startClient(t, d, false, relay.ClientOptions{BackoffUnit: 10 * time.Millisecond}) // 60 s → 600 ms
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := r.dial(d, false) // replaces the client's socket
	start := time.Now()
	next(t, raw, "presence")
	if code := closeCode(t, raw); code != relay.CloseReplaced {
		t.Fatalf("close code %d", code)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Fatalf("the replaced client came back after %v; it should wait 600 ms", waited)
	}
}

func TestTokenIsRefreshedWhenLessThanAWeekIsLeft(t *testing.T) {
	r := startRelay(t, nil)
	r.advance(-24 * 24 * time.Hour) // issued 24 days ago: 6 days left
	d := r.signIn("alice", "laptop")
	r.advance(24 * 24 * time.Hour)
	c, _ := startClient(t, d, false, relay.ClientOptions{})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	fresh, _ := d.id.Token()
	if fresh == d.token || time.Until(tokenExpires(fresh)) < 29*24*time.Hour {
		t.Fatalf("the token was not refreshed: expires %v", tokenExpires(fresh))
	}
	// A token with weeks left is kept.
	if err := d.id.Refresh(context.Background(), http.DefaultClient, time.Now()); err != nil {
		t.Fatal(err)
	}
	if again, _ := d.id.Token(); again != fresh {
		t.Fatal("a fresh token was refreshed again")
	}
}

// A user action while the client waits out a backoff connects at once.
func TestKickConnectsDuringABackoff(t *testing.T) {
	r := startRelay(t, nil)
	d := r.signIn("alice", "laptop")
	r.stop()
	c, _ := startClient(t, d, false, relay.ClientOptions{BackoffUnit: time.Second})
	// Attempts come at 0, 0.75-1.25 s, 2.25-3.75 s, then not before 5.25 s:
	// between 3.75 and 5.25 s the client is surely waiting.
	time.Sleep(4 * time.Second)
	r.start()
	time.Sleep(500 * time.Millisecond)
	if localSocket(r.srv.hub, d.profile.Account.ID, d.profile.DeviceID) != nil {
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
// it when fewer than 7 days are left, without reconnecting.
func TestTokenIsRefreshedWhileConnected(t *testing.T) {
	r := startRelay(t, nil)
	r.advance(-22 * 24 * time.Hour) // issued 22 days ago: 8 days left
	d := r.signIn("alice", "laptop")
	r.advance(22 * 24 * time.Hour)
	var skew atomic.Int64
	c, _ := startClient(t, d, true, relay.ClientOptions{RefreshEvery: 20 * time.Millisecond,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	sock := localSocket(r.srv.hub, d.profile.Account.ID, d.profile.DeviceID)
	time.Sleep(100 * time.Millisecond)
	if tok, _ := d.id.Token(); tok != d.token {
		t.Fatal("a token with 8 days left was refreshed")
	}
	skew.Store(int64(2 * 24 * time.Hour)) // two days later: 6 days left
	deadline := time.Now().Add(5 * time.Second)
	for {
		if tok, _ := d.id.Token(); tok != d.token {
			if time.Until(tokenExpires(tok)) < 29*24*time.Hour {
				t.Fatalf("the new token expires %v", tokenExpires(tok))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the token was not refreshed while connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if localSocket(r.srv.hub, d.profile.Account.ID, d.profile.DeviceID) != sock {
		t.Fatal("the client reconnected to refresh")
	}
}

// serve and call on one machine, one state folder: with one shared
// identity the call's socket replaces serve's (close 4000, and serve then
// waits a minute); with host/ and client/ both stay connected.
func TestHostAndClientOfOneStateFolderStayConnected(t *testing.T) {
	r := startRelay(t, nil)
	// The shared identity of before: the second socket knocks the first off.
	shared := &device{id: relay.OpenIdentity(t.TempDir())}
	if _, err := shared.id.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
		t.Fatal(err)
	}
	serve, _ := startClient(t, shared, true, relay.ClientOptions{})
	if err := serve.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	call, _ := startClient(t, shared, false, relay.ClientOptions{})
	if err := call.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !onlineHost(r, shared.id) }, "one shared identity: serve is still the host after the call connected")

	// Two identities in one state folder.
	state := t.TempDir()
	host, err := relay.OpenRole(state, relay.HostRole)
	if err != nil {
		t.Fatal(err)
	}
	client, err := relay.OpenRole(state, relay.ClientRole)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []*relay.Identity{host, client} {
		if _, err := id.SignIn(t.Context(), http.DefaultClient, r.url, "laptop", "linux", "invite", r.invite("alice")); err != nil {
			t.Fatal(err)
		}
	}
	serve, _ = startClient(t, &device{id: host}, true, relay.ClientOptions{})
	if err := serve.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	sock := localSocket(r.srv.hub, host.Profile().Account.ID, host.Profile().DeviceID)
	call, _ = startClient(t, &device{id: client}, false, relay.ClientOptions{})
	if err := call.WaitConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := localSocket(r.srv.hub, host.Profile().Account.ID, host.Profile().DeviceID); got == nil || got != sock {
		t.Fatal("the call's socket replaced serve's")
	}
	if !onlineHost(r, host) {
		t.Fatal("serve is not the account's online host")
	}
}

// onlineHost: id's socket is up and says it hosts.
func onlineHost(r *testRelay, id *relay.Identity) bool {
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

func waitFor(t testing.TB, cond func() bool, failure string) {
	t.Helper()
	if !pollUntil(5*time.Second, cond) {
		t.Fatal(failure)
	}
}

// pollUntil checks cond every 2 ms until it holds (true) or limit passes.
func pollUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}
