package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// TestHiddenTable: the one rule Diff, filterPatch, StageHunks, stage and
// Discard ask. A secret is hidden below the full grant and shown at full; a
// hard-linked work-tree file is hidden from a device even at full (and only
// when the work tree's copy is what is read); the desktop and an ordinary
// file are never hidden.
func TestHiddenTable(t *testing.T) {
	dir := repoWith(t, map[string]string{".env": "A=1\n", "linked.txt": "L\n", "plain.txt": "P\n"})
	if err := os.Link(filepath.Join(dir, "linked.txt"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	for _, c := range []struct {
		name     string
		v        viewer
		path     string
		worktree bool
		want     hiding
	}{
		{"secret below full", viewer{closed, trust.Control}, ".env", true, secretHidden},
		{"secret at view", viewer{phoneOn, trust.View}, ".env", false, secretHidden},
		{"secret at full", viewer{phoneOn, trust.Full}, ".env", true, shown},
		{"secret for the desktop", viewer{desktop, trust.View}, ".env", true, shown},
		{"hard link at full", viewer{phoneOn, trust.Full}, "linked.txt", true, linkHidden},
		{"hard link below full", viewer{closed, trust.Control}, "linked.txt", true, linkHidden},
		{"hard link, index side", viewer{phoneOn, trust.Full}, "linked.txt", false, shown},
		{"hard link for the desktop", viewer{desktop, trust.Full}, "linked.txt", true, shown},
		{"ordinary file", viewer{closed, trust.View}, "plain.txt", true, shown},
		{"ordinary file at full", viewer{phoneOn, trust.Full}, "plain.txt", true, shown},
	} {
		if got := r.hidden(c.v, c.path, c.worktree); got != c.want {
			t.Errorf("%s: hidden(%s, worktree=%v) = %d, want %d", c.name, c.path, c.worktree, got, c.want)
		}
	}
}

// TestDiscardAsksTheSameRule: Discard, the caller of Repo.hidden no other
// test reached, refuses a secret below full (by its own name, and as a
// rename's old name, which discarding would restore), skips it when asked
// to skip, and at full discards it: the change the rule stops.
func TestDiscardAsksTheSameRule(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".env": "A=1\n", "a.txt": "a\n"})
	write(t, dir, map[string]string{".env": "A=2\n"})
	r := open(t, dir)
	_, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{".env"}, Grant: trust.Control})
	wantRefusal(t, err, ErrSecret, ".env may hold secrets", "to discard it")
	res, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{".env"}, Grant: trust.Control, SkipFolders: true})
	if err != nil || res.Skipped != 1 || res.Count != 0 {
		t.Fatalf("skip a secret below full: %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(dir, ".env")); got != "A=2\n" {
		t.Fatalf("a secret was discarded below full: %q", got)
	}
	if _, err := r.Discard(ctx, phoneOn, DiscardOptions{Paths: []string{".env"}, Grant: trust.Full}); err != nil {
		t.Fatalf("full: %v", err)
	}
	if got := read(t, filepath.Join(dir, ".env")); got != "A=1\n" {
		t.Fatalf("full did not discard the secret: %q", got)
	}

	git(t, dir, "mv", ".env", "renamed.txt")
	_, err = r.Discard(ctx, closed, DiscardOptions{Paths: []string{"renamed.txt"}, Grant: trust.Control})
	wantRefusal(t, err, ErrSecret, ".env may hold secrets", "to discard it")
	if _, err := os.Stat(filepath.Join(dir, "renamed.txt")); err != nil {
		t.Fatalf("the rename of a secret was discarded below full: %v", err)
	}
}
