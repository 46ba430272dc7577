package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

// A file hard-linked to a key outside the checkout, committed under an
// innocent name: git.diff of the index left its section out, git.show of
// the commit showed the key. Every diff a device sees now leaves out a path
// whose work-tree copy is linked elsewhere, the commit's too.
func TestShowLeavesOutAHardLinkedFileAsDiffDoes(t *testing.T) {
	key := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE_KEY_BYTES\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := repoWith(t, map[string]string{"README.md": "hi\n"})
	if err := os.Link(key, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "notes.txt")
	r := open(t, dir)
	staged, err := r.Diff(ctx, closed, trust.View, DiffOptions{Staged: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(staged.Diff, "PRIVATE_KEY") {
		t.Fatalf("the index's diff showed the linked key:\n%s", staged.Diff)
	}
	git(t, dir, "commit", "-qm", "notes")
	oid := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))

	commitLinksShownForTest = true
	before, err := r.Show(ctx, closed, trust.View, oid, "")
	commitLinksShownForTest = false
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(before.Diff, "PRIVATE_KEY_BYTES") {
		t.Fatalf("judged by name alone, the commit's diff did not show the linked key: this test shows nothing\n%s", before.Diff)
	}
	for _, g := range []trust.Grant{trust.View, trust.Full} {
		s, err := r.Show(ctx, closed, g, oid, "")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.Diff, "PRIVATE_KEY") || s.HiddenSecrets != 1 {
			t.Fatalf("a phone at %v saw the commit of a hard-linked file (hidden %d):\n%s", g, s.HiddenSecrets, s.Diff)
		}
	}
	if s, err := r.Show(ctx, desktop, trust.View, oid, ""); err != nil || !strings.Contains(s.Diff, "PRIVATE_KEY_BYTES") {
		t.Fatalf("the desktop sees its own files: %v\n%v", err, s)
	}
}
