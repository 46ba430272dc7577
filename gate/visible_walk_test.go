package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

// Show asks the rule Diff asks (Repo.refuseNamed, then Repo.hidden), not a
// copy of its own: for every viewer and path, a commit's diff of a named
// path is refused exactly when the work tree's diff of it is. A view phone
// is refused a secret by both; a hard-linked file is no refusal for either
// by its name (a commit's content is not the linked file's, and the work
// tree's diff leaves its section out); a full grant and the desktop see
// the secret in both. Show's own copy (r.root.Secret(p); secret &&
// v.hidesSecrets()) answered the same today, and would not have followed a
// change to the one rule.
func TestShowRefusesANamedPathAsDiffDoes(t *testing.T) {
	dir := repoWith(t, map[string]string{".env": "A=1\n", "linked.txt": "L\n", "plain.txt": "P\n"})
	if err := os.Link(filepath.Join(dir, "linked.txt"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{".env": "A=2\n", "linked.txt": "L2\n", "plain.txt": "P2\n"})
	r := open(t, dir)
	oid := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	for _, v := range []viewer{{closed, trust.View}, {closed, trust.Control}, {phoneOn, trust.Full}, {desktop, trust.View}} {
		for _, path := range []string{".env", "linked.txt", "plain.txt"} {
			want := r.hidden(v, path, false) == secretHidden
			_, showErr := r.Show(ctx, v.t, v.g, oid, path)
			_, diffErr := r.Diff(ctx, v.t, v.g, DiffOptions{Path: path})
			if errors.Is(showErr, ErrSecret) != want || errors.Is(diffErr, ErrSecret) != want {
				t.Errorf("%v at %v, %s: Show %v, Diff %v; want refused as a secret: %v", v.t, v.g, path, showErr, diffErr, want)
			}
			if !want && (showErr != nil || diffErr != nil) {
				t.Errorf("%v at %v, %s: Show %v, Diff %v; want both answered", v.t, v.g, path, showErr, diffErr)
			}
		}
	}
	if _, err := r.Show(ctx, closed, trust.View, oid, ".env"); !errors.Is(err, ErrSecret) {
		t.Fatalf("a view phone's Show of .env: %v, want ErrSecret", err)
	}
}
