package main

import (
	"strings"
	"testing"
)

// gatehouse policy speaks to its readers: where a rule came from ("seed
// Round 10") is for the code's comments, not the output. Before, nine
// reasons in gate's tables carried such a note into both formats.
func TestPolicyHasNoProvenance(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		code, out, errOut := runForTest("policy", "--format", format)
		if code != exitOK {
			t.Fatalf("policy --format %s: %d %s", format, code, errOut)
		}
		for _, note := range []string{"seed Round", "Round 10", "()"} {
			if strings.Contains(out, note) {
				t.Errorf("policy --format %s has %q", format, note)
			}
		}
	}
	if got := provenance.ReplaceAllString("no auto maintenance (seed Round 9)", ""); got != "no auto maintenance" {
		t.Errorf("%q", got)
	}
	if got := provenance.ReplaceAllString("as CVE-2024-32002 did (git 2.45.1)", ""); got != "as CVE-2024-32002 did (git 2.45.1)" {
		t.Errorf("a reader's note was cut: %q", got)
	}
}
