package relay

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseBinaryFrame(t *testing.T) {
	good := AppendBinary(nil, "", "host-1", "r1", []byte{2, 9, 9})
	f, err := ParseBinaryFrame(good)
	if err != nil || f.From != "" || f.To != "host-1" || f.Ref != "r1" || !bytes.Equal(f.Body, []byte{2, 9, 9}) {
		t.Fatalf("%+v %v", f, err)
	}
	for name, b := range map[string][]byte{
		"empty":              nil,
		"text frame":         []byte(`{"to":"host-1","body":"x"}`),
		"version 1":          append([]byte{1}, good[1:]...),
		"no fields":          {BinaryVersion},
		"from past the end":  {BinaryVersion, 5, 'a'},
		"to past the end":    {BinaryVersion, 0, 200, 'a'},
		"ref past the end":   {BinaryVersion, 0, 1, 'a', 9},
		"no body":            AppendBinary(nil, "", "host-1", "r1", nil),
		"over MaxFrame":      AppendBinary(nil, "", "host-1", "", make([]byte, MaxFrame)),
		"cut inside the to":  good[:4],
		"cut before the ref": good[:9],
	} {
		if _, err := ParseBinaryFrame(b); err != errBinary {
			t.Errorf("%s: %v", name, err)
		}
	}
	if IsBinary([]byte(`{"kind":"presence"}`)) || IsBinary([]byte("pong")) || !IsBinary(good) {
		t.Fatal("IsBinary mistakes a frame")
	}
}

// FuzzParseBinaryFrame: no input panics, and what parses writes back to
// the same bytes (the format has one spelling of each frame).
func FuzzParseBinaryFrame(f *testing.F) {
	f.Add(AppendBinary(nil, "", "host-1", "r1", []byte{2, 1}))
	f.Add(AppendBinary(nil, "phone-1", "host-1", "", []byte(strings.Repeat("x", 300))))
	f.Add([]byte{BinaryVersion, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseBinaryFrame(b)
		if err != nil {
			return
		}
		if again := AppendBinary(nil, fr.From, fr.To, fr.Ref, fr.Body); !bytes.Equal(again, b) {
			t.Fatalf("% x parsed as %+v, written back as % x", b, fr, again)
		}
	})
}
