package main

import (
	"regexp"
	"testing"
)

// pointerAtNothing matches a note that names the review round or the
// tracker issue a rule came from ("seed Round 10", "issue 12"): the
// repository is all a reader of gatehouse policy has, and such a note
// points outside it. A rule's why is its reason here, told at length in
// docs/gate-rules.md beside the test that proves it.
var pointerAtNothing = regexp.MustCompile(`(?i)\bseed\b|\brounds? [0-9]|\bissue [0-9]`)

// Before gate's reasons lost them, nine carried "(seed Round N)" into both
// formats, and this command cut them out with a regular expression of its
// own; now the output is the tables as they are, and this test fails if a
// note of that kind comes back.
func TestPolicyHasNoProvenance(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		code, out, errOut := runForTest("policy", "--format", format)
		if code != exitOK {
			t.Fatalf("policy --format %s: %d %s", format, code, errOut)
		}
		if m := pointerAtNothing.FindString(out); m != "" {
			t.Errorf("policy --format %s says %q, which points at nothing in the repository", format, m)
		}
	}
	for _, s := range []string{"no auto maintenance (seed Round 9)", "as issue 12 found", "Rounds 7 and 9"} {
		if !pointerAtNothing.MatchString(s) {
			t.Errorf("%q is not caught", s)
		}
	}
}
