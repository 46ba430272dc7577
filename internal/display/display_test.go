package display

import (
	"strings"
	"testing"
)

func TestTextDisarmsTerminalEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"alice", "alice"},
		{"Pixel 8 — Ana", "Pixel 8 — Ana"},
		{"evil\x1b[2J\nfake line", `evil\x1b[2J\nfake line`},
		{"title\x1b]0;owned\a", `title\x1b]0;owned\a`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"tab\there", `tab\there`},
	} {
		got := Text(c.in)
		if got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.ContainsAny(got, "\x1b\n\a\r\u009b") {
			t.Errorf("Text(%q) still holds a control character: %q", c.in, got)
		}
	}
	if got := Text(strings.Repeat("a", 10000)); len(got) != maxText+3 {
		t.Errorf("a long name is shown at %d bytes", len(got))
	}
}
