package relay

import (
	"strings"
	"testing"
)

func TestValidDeviceID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"d-abc123", true},
		{"phone_1.x", true},
		{strings.Repeat("a", MaxDeviceID), true},
		{"", false},
		{strings.Repeat("a", MaxDeviceID+1), false},
		{"a|b", false}, // the sealing salt's separators
		{"a:b", false},
		{`a"b`, false}, // would need escaping in a forwarded frame
		{"a b", false},
		{"é", false},
	} {
		if got := ValidDeviceID(c.id); got != c.want {
			t.Errorf("ValidDeviceID(%q) = %v", c.id, got)
		}
	}
}
