package lan

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// eventsURLAt is EventsURL with an opener stamped ts (unix ms) and naming
// method.
func (se *Session) eventsURLAt(ts int64, method string) string {
	plain, _ := json.Marshal(map[string]any{"type": "req", "id": "events", "method": method, "ts": ts, "nonce": randomID(24)})
	f := rpc.Seal(se.keys.key, plain, sessionAAD(se.deviceID, se.id, "events"))
	return se.c.base + "rc/events?d=" + url.QueryEscape(se.deviceID) + "&s=" + url.QueryEscape(se.id) + "&f=" + url.QueryEscape(f)
}

// getStatus GETs u and answers its status, leaving a stream that opened
// open until the test ends.
func getStatus(t *testing.T, hc *http.Client, u string) int {
	t.Helper()
	res, err := hc.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	if res.StatusCode == http.StatusOK {
		t.Cleanup(func() { res.Body.Close() })
	} else {
		res.Body.Close()
	}
	return res.StatusCode
}

// The event stream's opener takes the host's walk (rpc.Host.OpenEvents),
// the one a call takes, so every rule of that walk holds for it. An opener
// stamped before this host started, but inside the 60 s window, is refused,
// as a call stamped so is (the replay memory does not outlive a run): with
// its own opening and guard, as before, the LAN opened that stream, since
// its guard knew the window only. A stale stamp (61 s old) and a method
// other than events were refused before too, and still are. (A call
// stamped before the start: rpc's TestARecordingDoesNotRunAfterARestart.)
func TestEventsOpenerTakesTheHostsWalk(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	beforeStart := time.Now().Add(-time.Second).UnixMilli() // before the host below starts
	f, _ := serveRepo(t, repo, nil)
	_, se := f.viewSession(t)
	now := time.Now().UnixMilli()
	if now-beforeStart >= 59_000 {
		t.Skip("pairing took a minute: a stamp before the start is stale by now, so it would prove nothing")
	}
	for _, c := range []struct {
		name   string
		url    string
		status int
	}{
		{"stamped before the host started", se.eventsURLAt(beforeStart, rpc.EventsMethod), http.StatusBadRequest},
		{"stamped 61 s ago", se.eventsURLAt(now-61_000, rpc.EventsMethod), http.StatusBadRequest},
		{"naming another method", se.eventsURLAt(now, "subscribe"), http.StatusBadRequest},
		{"stamped now", se.eventsURLAt(now, rpc.EventsMethod), http.StatusOK},
	} {
		if got := getStatus(t, f.hc, c.url); got != c.status {
			t.Errorf("an events opener %s: %d, want %d", c.name, got, c.status)
		}
	}
}

// A recorded event stream opener, sent again, is refused: the device's one
// replay guard remembers its nonce, and the refusal is counted in the
// request log under the device as a replayed call is (the LAN's own guard
// refused it, and left no trace).
func TestAReplayedEventsOpenerIsRefusedAndLogged(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	dir := t.TempDir()
	l, err := rpc.OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, stop := serveRepoWithLog(t, repo, l)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	se, err := Resume(context.Background(), f.hc, p)
	if err != nil {
		t.Fatal(err)
	}
	recorded := se.EventsURL()
	if got := getStatus(t, f.hc, recorded); got != http.StatusOK {
		t.Fatalf("the first opener: %d", got)
	}
	for range 3 {
		if got := getStatus(t, f.hc, recorded); got != http.StatusBadRequest {
			t.Fatalf("the recorded opener sent again: %d, want %d", got, http.StatusBadRequest)
		}
	}
	stop()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "requests.log"))
	if !strings.Contains(string(data), `"code":"REPLAY"`) || !strings.Contains(string(data), p.DeviceID) {
		t.Fatalf("the request log after 3 replayed openers has no REPLAY line for %s:\n%s", p.DeviceID, data)
	}
}
