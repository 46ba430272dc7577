package relay

import (
	"encoding/json"
	"testing"
)

// The typed frames write the bytes the relay and client wrote before them
// (the web page and older clients read these), and each reads back as its
// kind.
func TestFrameKindsKeepTheWireFormat(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
		kind Kind
	}{
		// frames: a field added for binary frames, after the two an older
		// client reads (encoding/json skips a field it does not know).
		{NewPresence([]Device{}), `{"devices":[],"kind":"presence","frames":2}`, KindPresence},
		{PresenceFrame{Devices: []Device{}, Kind: KindPresence}, `{"devices":[],"kind":"presence"}`, KindPresence},
		{NewUndeliverable("d-1", "r1", ReasonRate), `{"kind":"undeliverable","to":"d-1","ref":"r1","reason":"rate"}`, KindUndeliverable},
		{NewUndeliverable("d-1", "", ReasonOffline), `{"kind":"undeliverable","to":"d-1","reason":"offline"}`, KindUndeliverable},
		{NewError("That frame is not valid."), `{"kind":"error","error":"That frame is not valid."}`, KindError},
		{SealedFrame{To: "d-1", Body: "b", Ref: "r"}, `{"to":"d-1","body":"b","ref":"r"}`, KindSealed},
		{SealedFrame{To: "d-1", Body: "b"}, `{"to":"d-1","body":"b"}`, KindSealed},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%T: %s, want %s", c.v, b, c.want)
		}
		if k, err := FrameKind(b); err != nil || k != c.kind {
			t.Errorf("FrameKind(%s) = %q, %v", b, k, err)
		}
	}
	fwd := AppendForward(nil, "d-2", "d-1", []byte(`"sealed"`))
	if f, err := DecodeSealed(fwd); err != nil || f.From != "d-2" || f.To != "d-1" || f.Body != "sealed" {
		t.Fatalf("a forwarded frame: %+v %v", f, err)
	}
}

// Each kind's decoder holds its frame to its shape and bounds.
func TestFrameKindDecodersRefuse(t *testing.T) {
	for _, c := range []struct {
		in     string
		decode func([]byte) error
	}{
		{`{"kind":"host"}`, func(b []byte) error { _, err := DecodeHost(b); return err }},
		{`{"kind":"host","enabled":"yes"}`, func(b []byte) error { _, err := DecodeHost(b); return err }},
		{`{"kind":"notify","body":{"kind":"other","count":1}}`, func(b []byte) error { _, err := DecodeNotify(b); return err }},
		{`{"kind":"notify","body":{"kind":"waiting","count":-1}}`, func(b []byte) error { _, err := DecodeNotify(b); return err }},
		{`{"kind":"notify","body":{"kind":"waiting","count":1048577}}`, func(b []byte) error { _, err := DecodeNotify(b); return err }},
		{`{"to":"d-1","body":"x"}`, func(b []byte) error { _, err := DecodeSealed(b); return err }}, // no from
		{`{"from":"d-1","body":5}`, func(b []byte) error { _, err := DecodeSealed(b); return err }},
		{`{"kind":5}`, func(b []byte) error { _, err := FrameKind(b); return err }},
	} {
		if err := c.decode([]byte(c.in)); err != ErrFrameKind {
			t.Errorf("%s: %v, want ErrFrameKind", c.in, err)
		}
	}
	if f, err := DecodeNotify([]byte(`{"kind":"notify","body":{"kind":"finished","count":3}}`)); err != nil || f.Body.Count != 3 {
		t.Fatalf("a valid notify: %+v %v", f, err)
	}
	if f, err := DecodeHost([]byte(`{"kind":"host","enabled":false}`)); err != nil || *f.Enabled {
		t.Fatalf("a valid host frame: %+v %v", f, err)
	}
}
