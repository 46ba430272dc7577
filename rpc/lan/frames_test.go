package lan

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// wireLog records the content type of each call and of its answer.
type wireLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string // "request type -> answer type"
}

func (l *wireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.next.RoundTrip(r)
	if err == nil && strings.HasPrefix(r.URL.Path, "/rc/call") {
		l.mu.Lock()
		l.seen = append(l.seen, r.Header.Get("Content-Type")+" -> "+res.Header.Get("Content-Type"))
		l.mu.Unlock()
	}
	return res, err
}

// gatehouse call's LAN client speaks protocol 2: its first call announces
// it and is answered with a binary frame, and its calls after that go as
// binary frames both ways.
func TestCallsSpeakProtocol2(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	wl := &wireLog{next: f.hc.Transport}
	hc := &http.Client{Timeout: f.hc.Timeout, Transport: wl}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	se, err := Resume(ctx, hc, p)
	if err != nil {
		t.Fatal(err)
	}
	conn := se.Conn()
	raw, err := conn.Call(ctx, "host.hello", nil)
	var h rpc.Hello
	if err != nil || json.Unmarshal(raw, &h) != nil || h.Protocol != rpc.ProtocolBinary {
		t.Fatalf("hello: %s %v", raw, err)
	}
	for range 2 {
		if _, err := conn.Call(ctx, "projects.list", nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"application/json -> " + frameType, // announced: answered in a binary frame
		frameType + " -> " + frameType,
		frameType + " -> " + frameType,
	}
	if strings.Join(wl.seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("on the wire:\n%s\nwant:\n%s", strings.Join(wl.seen, "\n"), strings.Join(want, "\n"))
	}
}

// A binary call takes every check a text call takes, with the same
// refusals: a replay is NOT_RUN, a changed byte, another session's frame
// and a reply fed back do not open, and a frame over rpc.MaxFrame is
// refused before it is read whole.
func TestBinaryCallRefusals(t *testing.T) {
	f := newFixture(t, nil)
	p, se := f.viewSession(t)
	ctx := context.Background()
	send := func(se *Session, frame []byte) (rpc.Frame, error) {
		return se.c.do(ctx, se.callPath(), frameType, frame, se.authHeader())
	}
	plain, _ := json.Marshal(rpc.Request{Type: "req", ID: "1", Method: "projects.list", TS: time.Now().UnixMilli(), Nonce: randomID(24)})
	frame := rpc.SealFrame(se.keys.key, plain, sessionAAD(p.DeviceID, se.id, "host"))
	open := func(out rpc.Frame) string {
		if !out.Binary {
			t.Fatalf("a binary call was answered in text: %q", out.Body)
		}
		res, err := rpc.OpenFrame(se.keys.key, out.Body, sessionAAD(p.DeviceID, se.id, "device"))
		if err != nil {
			t.Fatal(err)
		}
		return string(res)
	}
	out, err := send(se, frame)
	if err != nil || !strings.Contains(open(out), `"ok":true`) {
		t.Fatalf("answer: %v", err)
	}
	again, err := send(se, frame)
	if err != nil || !strings.Contains(open(again), "stale or repeated") {
		t.Fatalf("a replay: %v", err)
	}
	other, err := f.session(t, p)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Clone(frame)
	tampered[30] ^= 1
	for name, c := range map[string]struct {
		se    *Session
		frame []byte
	}{
		"tampered":         {se, tampered},
		"another session":  {other, frame},
		"a reply fed back": {se, out.Body},
		"version byte 1":   {se, append([]byte{1}, frame[1:]...)},
		"truncated":        {se, frame[:20]},
		"empty":            {se, nil},
		"base64 as binary": {se, []byte(rpc.Seal(se.keys.key, plain, sessionAAD(p.DeviceID, se.id, "host")))},
	} {
		if _, err := send(c.se, c.frame); err == nil || !strings.Contains(err.Error(), msgBadFrame) {
			t.Errorf("%s: %v, want %q", name, err, msgBadFrame)
		}
	}
	big := append([]byte{rpc.FrameVersion}, make([]byte, rpc.MaxFrame)...)
	var sr *serverRefusal
	if _, err := send(se, big); err == nil || !asRefusal(err, &sr) || sr.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a frame over MaxFrame: %v", err)
	}
}

func asRefusal(err error, sr **serverRefusal) bool {
	r, ok := err.(*serverRefusal)
	*sr = r
	return ok
}
