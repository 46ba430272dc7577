package gate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

// A phone's discard of a file hard-linked elsewhere is refused by name, as
// its stage and its diff are (Repo.hidden): the file's bytes are another
// file's. Both names keep their bytes; the desktop discards it.
func TestDiscardRefusesAHardLinkedFile(t *testing.T) {
	dir := repoWith(t, map[string]string{"a.txt": "a\n"})
	outside := filepath.Join(t.TempDir(), "elsewhere")
	write(t, dir, map[string]string{"a.txt": "changed\n"})
	if err := os.Link(filepath.Join(dir, "a.txt"), outside); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	for _, g := range []trust.Grant{trust.Control, trust.Full} {
		_, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{"a.txt"}, Grant: g})
		if !errors.Is(err, ErrHardLinked) {
			t.Fatalf("a phone at %v discarding a hard-linked file: %v, want ErrHardLinked", g, err)
		}
		if got := read(t, outside); got != "changed\n" {
			t.Fatalf("the linked file now reads %q", got)
		}
	}
	if _, err := r.Discard(ctx, desktop, DiscardOptions{Paths: []string{"a.txt"}, Grant: trust.Full}); err != nil {
		t.Fatalf("the desktop's discard: %v", err)
	}
	if got := read(t, filepath.Join(dir, "a.txt")); got != "a\n" {
		t.Fatalf("after the desktop's discard a.txt reads %q", got)
	}
}
