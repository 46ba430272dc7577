package methods_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// A control device may neither read nor stage .env or keys/id_rsa; before
// this rule it could still delete them with git.discard. Below full, discard
// treats secret files as stage does: named, refused with stage's sentence;
// with skipFolders ("Discard all"), left out and counted.
func TestDiscardSecretFilesNeedsFull(t *testing.T) {
	gittest.Home(t, "")
	secrets := []string{".env", "keys/id_rsa"}
	build := func() string {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		gittest.Write(t, dir, map[string]string{".env": "TOKEN=1\n", "keys/id_rsa": "KEY\n", "u.txt": "u\n"})
		return dir
	}
	present := func(dir, p string) bool {
		_, err := os.Lstat(filepath.Join(dir, p))
		return err == nil
	}

	// The attack without the rule: the same discard with the full grant
	// deletes both files (full may, as for stage).
	dir := build()
	h := newHost(t, trust.Full, dir)
	h.ok(t, "git.discard", map[string]any{"target": h.ids[dir], "paths": secrets}, nil)
	for _, p := range secrets {
		if present(dir, p) {
			t.Fatalf("full: %s still there", p)
		}
	}

	// Control: the device that may not read or stage them may not delete them.
	dir = build()
	h = newHost(t, trust.Control, dir)
	h.refused(t, "git.stage", map[string]any{"target": h.ids[dir], "paths": []string{".env"}}, rpc.CodeRefused, "may hold secrets")
	for _, p := range secrets {
		h.refused(t, "git.discard", map[string]any{"target": h.ids[dir], "paths": []string{p}}, rpc.CodeRefused,
			p+" may hold secrets. Give this phone Full access on the computer to discard it.")
		if !present(dir, p) {
			t.Fatalf("control: %s was deleted", p)
		}
	}
	// Discard all leaves them out and counts them; the ordinary file goes.
	var res struct{ Count, Skipped int }
	h.ok(t, "git.discard", map[string]any{"target": h.ids[dir], "paths": []string{".env", "keys", "u.txt"}, "skipFolders": true}, &res)
	if !present(dir, ".env") || !present(dir, "keys/id_rsa") || present(dir, "u.txt") || res.Count != 1 {
		t.Fatalf("discard all as control: %+v", res)
	}
}
