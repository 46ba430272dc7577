package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
	dir := t.TempDir()
	id := OpenIdentity(dir)
	if err := writeJSONFile(filepath.Join(dir, profileFile), Profile{URL: hs.URL, DeviceID: "d-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := id.setToken("*", unsignedToken(Claims{Account: "a", Device: "d-1", Expires: time.Now().Add(TokenLife).Unix(), Gen: "g"})); err != nil {
		t.Fatal(err)
	}
	c := NewClient(ClientOptions{Identity: id, PingEvery: 50 * time.Millisecond, DeadAfter: 100 * time.Millisecond, BackoffUnit: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for connects.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("connects: %d; a silent socket was never declared dead", connects.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unsignedToken is a token with c's claims and no valid MAC: the client
// only reads the expiry (the fake relay here checks nothing).
func unsignedToken(c Claims) string {
	js, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(js) + ".x"
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
