package relayserver

import (
	"bytes"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gatehouse/gatehouse/relay"
)

// nextBinary reads frames until a binary one, which it parses.
func nextBinary(t *testing.T, ws *websocket.Conn) relay.BinaryFrame {
	t.Helper()
	for {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		typ, data, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for a binary frame: %v", err)
		}
		if typ != websocket.BinaryMessage {
			continue
		}
		f, err := relay.ParseBinaryFrame(data)
		if err != nil {
			t.Fatalf("the relay sent a malformed binary frame: %v", err)
		}
		return f
	}
}

func sendBinary(t *testing.T, ws *websocket.Conn, frame []byte) {
	t.Helper()
	if err := ws.WriteMessage(websocket.BinaryMessage, frame); err != nil {
		t.Fatal(err)
	}
}

// A binary frame goes through as binary, its body byte for byte, with the
// sender's id as from; presence says the relay forwards them; a frame that
// names a from of its own, or is malformed, is refused as a bad frame; one
// to a device of another account is undeliverable.
func TestBinaryFramesAreForwarded(t *testing.T) {
	r := startRelay(t, nil)
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	other := r.signIn("bob", "stranger")
	wsH, wsP := r.dial(host, true), r.dial(phone, false)
	if p := next(t, wsH, "presence"); p["frames"] != float64(relay.FramesBinary) {
		t.Fatalf("presence does not say binary frames are forwarded: %v", p)
	}
	next(t, wsP, "presence")
	body := append([]byte{2}, bytes.Repeat([]byte{0, '"', '\\', 0xff}, 16<<10)...) // no JSON could carry it raw
	sendBinary(t, wsP, relay.AppendBinary(nil, "", host.profile.DeviceID, "r1", body))
	f := nextBinary(t, wsH)
	if f.From != phone.profile.DeviceID || f.To != host.profile.DeviceID || f.Ref != "" || !bytes.Equal(f.Body, body) {
		t.Fatalf("forwarded: from %q to %q ref %q, %d bytes", f.From, f.To, f.Ref, len(f.Body))
	}
	for name, frame := range map[string][]byte{
		"a from of its own": relay.AppendBinary(nil, host.profile.DeviceID, host.profile.DeviceID, "r2", []byte{1}),
		"to itself":         relay.AppendBinary(nil, "", phone.profile.DeviceID, "r3", []byte{1}),
		"a bad to":          relay.AppendBinary(nil, "", "no/such", "r4", []byte{1}),
		"a ref with space":  relay.AppendBinary(nil, "", host.profile.DeviceID, "r 5", []byte{1}),
		"no body":           relay.AppendBinary(nil, "", host.profile.DeviceID, "r6", nil),
		"a text frame's":    []byte(`{"to":"` + host.profile.DeviceID + `","body":"x"}`),
		"truncated":         {relay.BinaryVersion, 9, 'a'},
	} {
		sendBinary(t, wsP, frame)
		if e := next(t, wsP, "error"); e["error"] != msgBadFrame {
			t.Fatalf("%s: %v", name, e)
		}
	}
	sendBinary(t, wsP, relay.AppendBinary(nil, "", other.profile.DeviceID, "r7", []byte{1}))
	if u := next(t, wsP, "undeliverable"); u["reason"] != "offline" || u["ref"] != "r7" {
		t.Fatalf("undeliverable: %v", u)
	}
	// The host got the one good frame only: the next thing it gets is the
	// one sent after the refusals.
	sendBinary(t, wsP, relay.AppendBinary(nil, "", host.profile.DeviceID, "r8", []byte("last")))
	if f := nextBinary(t, wsH); string(f.Body) != "last" {
		t.Fatalf("a refused frame reached the host: %q", f.Body)
	}
}

// The relay's bounds hold for binary frames as for text: one over 256 KiB
// closes the socket (1009) and nothing of it is forwarded; past the
// socket's rate, frames are undeliverable with their ref.
func TestBinaryFramesKeepTheBounds(t *testing.T) {
	t.Run("size", func(t *testing.T) {
		r := startRelay(t, nil)
		host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
		wsH, wsP := r.dial(host, true), r.dial(phone, false)
		next(t, wsH, "presence")
		next(t, wsP, "presence")
		_ = wsP.WriteMessage(websocket.BinaryMessage, relay.AppendBinary(nil, "", host.profile.DeviceID, "", make([]byte, relay.MaxFrame)))
		if code := closeCode(t, wsP); code != websocket.CloseMessageTooBig {
			t.Fatalf("close code %d, want 1009", code)
		}
		_ = wsH.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		for {
			typ, _, err := wsH.ReadMessage()
			if err != nil {
				break
			}
			if typ == websocket.BinaryMessage {
				t.Fatal("a frame over the limit was forwarded")
			}
		}
	})
	t.Run("rate", func(t *testing.T) {
		r := startRelay(t, func(o *Options) { o.FrameLimitForTest = &FrameLimit{Rate: 0.001, Burst: 3} })
		host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
		wsH, wsP := r.dial(host, true), r.dial(phone, false)
		next(t, wsH, "presence")
		next(t, wsP, "presence")
		for _, ref := range []string{"a", "b", "c", "d", "e"} {
			sendBinary(t, wsP, relay.AppendBinary(nil, "", host.profile.DeviceID, ref, []byte(ref)))
		}
		for _, ref := range []string{"d", "e"} {
			if u := next(t, wsP, "undeliverable"); u["reason"] != "rate" || u["ref"] != ref {
				t.Fatalf("over the rate: %v, want ref %s", u, ref)
			}
		}
		for _, want := range []string{"a", "b", "c"} {
			if f := nextBinary(t, wsH); string(f.Body) != want {
				t.Fatalf("forwarded %q, want %q", f.Body, want)
			}
		}
	})
}

// A host that does not read loses its own binary frames, not the relay's
// memory: past 4 frames' worth of bytes waiting for its socket, the
// sender is told its frames are undeliverable (rate), as for text.
func TestBinaryFramesKeepTheQueueBound(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.FrameLimitForTest = &FrameLimit{Rate: 1e6, Burst: 1e6} })
	host, phone := r.signIn("alice", "laptop"), r.signIn("alice", "phone")
	wsH, wsP := r.dial(host, true), r.dial(phone, false)
	next(t, wsH, "presence")
	next(t, wsP, "presence")
	// The host reads nothing from here on; the phone sends until the relay
	// says the host's queue is full. Socket buffers take some megabytes
	// first, so the count is bounded only loosely; the notice is what
	// matters.
	body := make([]byte, relay.MaxFrame-512)
	got := make(chan map[string]any, 1)
	go func() {
		for {
			_ = wsP.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, data, err := wsP.ReadMessage()
			if err != nil {
				close(got)
				return
			}
			if bytes.Contains(data, []byte(`"undeliverable"`)) {
				got <- map[string]any{"frame": string(data)}
				return
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		select {
		case u, ok := <-got:
			if !ok || !bytes.Contains([]byte(u["frame"].(string)), []byte(`"reason":"rate"`)) {
				t.Fatalf("the notice: %v", u)
			}
			return
		default:
		}
		_ = wsP.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if err := wsP.WriteMessage(websocket.BinaryMessage, relay.AppendBinary(nil, "", host.profile.DeviceID, "q", body)); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("2000 frames (500 MB) queued for a host that reads nothing, and no notice")
}
