package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseInFrame(t *testing.T) {
	for _, c := range []struct {
		in            string
		to, ref, kind string
		body          string
		err           error
	}{
		{in: `{"to":"d-1","body":"abc","ref":"r1"}`, to: "d-1", ref: "r1", body: `"abc"`},
		{in: ` { "body" : "a\"b" , "to" : "d-2" } `, to: "d-2", body: `"a\"b"`},
		{in: `{"kind":"host","enabled":true}`, kind: "host"},
		{in: `{"kind":"notify","body":{"kind":"waiting","count":2}}`, kind: "notify"},
		{in: `{"to":"d-1","body":"x","extra":1}`, err: errFrameField},
		{in: `{"to":"d-1","to":"d-2","body":"x"}`, err: errFrameField},
		{in: `{"to":5,"body":"x"}`, err: errFrameSyntax},
		{in: `{"to":"d-1","body":"x"} trailing`, err: errFrameSyntax},
		{in: `{"to":"d-1","body":"x`, err: errFrameSyntax},
		{in: "{\"to\":\"d-1\",\"body\":\"a\x01b\"}", err: errFrameSyntax},
		{in: `[1,2]`, err: errFrameSyntax},
		{in: `{"body":"` + strings.Repeat("A", 5000) + `"}`, err: errNotAddr},
		{in: `{"kind":"notify","body":{"kind":"waiting"},"pad":"` + strings.Repeat("A", 5000) + `"}`, err: errFrameSyntax},
	} {
		f, err := ParseDeviceFrame([]byte(c.in))
		if err != c.err {
			t.Errorf("%.60s: err %v, want %v", c.in, err, c.err)
			continue
		}
		if err == nil && (f.To != c.to || f.Ref != c.ref || f.Kind != Kind(c.kind) || (c.body != "" && string(f.Body) != c.body)) {
			t.Errorf("%.60s: got %+v", c.in, f)
		}
	}
}

// FuzzParseInFrame: whatever the scanner accepts as an addressed frame,
// encoding/json reads the same way, and the frame the relay forwards is
// valid JSON carrying the same body.
func FuzzParseInFrame(f *testing.F) {
	for _, s := range []string{`{"to":"d-1","body":"abc","ref":"r1"}`, `{"body":"a\\u00e9\"","to":"x"}`,
		`{"kind":"host","enabled":false}`, `{"to":"a","body":"\\ud800"}`, `{"to":"a","body":"\t"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseDeviceFrame(b)
		sameOnBothPaths(t, b, fr, err)
		if err != nil || fr.Kind != "" || fr.To == "" {
			return
		}
		var std struct {
			To   *string `json:"to"`
			Body *string `json:"body"`
			Ref  *string `json:"ref"`
		}
		if e := json.Unmarshal(b, &std); e != nil {
			t.Fatalf("the scanner accepted what encoding/json refuses: %q: %v", b, e)
		}
		if std.To == nil || *std.To != fr.To || std.Ref != nil && *std.Ref != fr.Ref {
			t.Fatalf("to/ref differ: %q: %+v vs %+v", b, fr, std)
		}
		if fr.Body == nil {
			return
		}
		out := AppendForward(nil, "from-1", "to-1", fr.Body)
		var fwd struct {
			From, To, Body string
		}
		if e := json.Unmarshal(out, &fwd); e != nil {
			t.Fatalf("the forwarded frame is not JSON: %q: %v", out, e)
		}
		if std.Body == nil || fwd.Body != *std.Body {
			t.Fatalf("the body changed on the way: %q", b)
		}
	})
}

// special finds the same byte as a plain loop, wherever it sits.
func TestSpecialMatchesAPlainLoop(t *testing.T) {
	plain := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return -1
	}
	base := []byte(strings.Repeat("AbC+/=9z", 8))
	for n := 0; n <= len(base); n++ {
		for at := -1; at < n; at++ {
			for _, c := range []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 0x7f, 0xff, '!', '#', '[', ']'} {
				b := append([]byte(nil), base[:n]...)
				if at >= 0 {
					b[at] = c
				}
				if got, want := special(b), plain(b); got != want {
					t.Fatalf("special(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// sameOnBothPaths: a frame of printable ASCII, read with bytes.IndexByte,
// reads exactly as it does with the word-at-a-time scan that any other
// frame takes.
func sameOnBothPaths(t *testing.T, b []byte, fast DeviceFrame, fastErr error) {
	t.Helper()
	if !utf8.Valid(b) {
		return
	}
	slow, slowErr := parseFrame(newScanner(b, false))
	if slowErr != fastErr || slow.To != fast.To || slow.Ref != fast.Ref || slow.Kind != fast.Kind || string(slow.Body) != string(fast.Body) {
		t.Fatalf("%.80q: fast path %+v, %v; slow path %+v, %v", b, fast, fastErr, slow, slowErr)
	}
}

// The table's frames and escape-heavy ones read the same on both paths.
func TestFastPathMatchesSlowPath(t *testing.T) {
	for _, in := range []string{
		`{"to":"d-1","body":"abc","ref":"r1"}`, ` { "body" : "a\"b" , "to" : "d-2" } `,
		`{"to":"d-1","body":"a\\\"\\"}`, `{"to":"d-1","body":"\u00e9\n\/"}`, `{"to":"d-1","body":"a\qb"}`,
		`{"to":"d-1","body":"a\`, `{"to":"d-1","body":"\u12"}`, `{"to":"d-1","body":"` + strings.Repeat(`\"`, 3000) + `"}`,
		`{"kind":"notify","body":{"kind":"waiting","count":2},"x":[1,"\"",{"a":"b"}]}`, "{\"to\":\"d-1\",\"body\":\"a\x7fb\"}",
	} {
		fr, err := ParseDeviceFrame([]byte(in))
		if !printableASCII([]byte(in)) {
			t.Fatalf("%.60q: not printable ASCII, the fast path is not taken", in)
		}
		sameOnBothPaths(t, []byte(in), fr, err)
	}
}

// printableASCII agrees with a plain loop, wherever the odd byte sits.
func TestPrintableASCIIMatchesAPlainLoop(t *testing.T) {
	plain := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c > 0x7f {
				return false
			}
		}
		return true
	}
	base := []byte(strings.Repeat("AbC+/=9z", 5))
	for n := 0; n <= len(base); n++ {
		for at := -1; at < n; at++ {
			for _, c := range []byte{0, 0x1f, 0x20, 0x7f, 0x80, 0x9f, 0xa0, 0xdf, 0xe0, 0xff, '"', '\\'} {
				b := append([]byte(nil), base[:n]...)
				if at >= 0 {
					b[at] = c
				}
				if got, want := printableASCII(b), plain(b); got != want {
					t.Fatalf("printableASCII(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// A sealed 64 KiB body, the relay's common case.
func BenchmarkParseDeviceFrame64K(b *testing.B) {
	frame := []byte(`{"to":"d-1","ref":"r1","body":"` + strings.Repeat("AbC+/=9z", 8<<10) + `"}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := ParseDeviceFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// 64 KiB of escapes: still one pass (the next quote is remembered).
func BenchmarkParseDeviceFrameEscapes(b *testing.B) {
	frame := []byte(`{"to":"d-1","body":"` + strings.Repeat(`\n`, 32<<10) + `"}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := ParseDeviceFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}
