package fsguard

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// docs/policy.md quotes the refusals a device sees for a path; they must
// stay the sentences the code says.
func TestPolicyDocQuotesTheSentences(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*refusal.Error{ErrInvalidPath, ErrGitPath, ErrSecret, ErrOutsideRoot,
		ErrNotRegular, ErrHardLink, ErrChanged, ErrHomeRoot, ErrAppDataRoot} {
		if !strings.Contains(string(doc), e.Sentence()) {
			t.Errorf("docs/policy.md does not quote %q", e.Sentence())
		}
	}
}
