package fsguard

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/hostile"
)

// TestOneHardLinkCheck: the one check (hardLinked) answers the same for
// Stat, HardLinked and the tree hazards, on real links: a key linked in from
// outside is caught, and nothing else is (a plain file, a symlink to the
// key, a folder, a missing path).
func TestOneHardLinkCheck(t *testing.T) {
	base := hostile.Build(t, "file outside/id_rsa = KEY\nhardlink root/b = outside/id_rsa\n"+
		"file root/plain.txt = p\nsymlink root/s -> ../outside/id_rsa\nfile root/dir/x = x")
	// Without the rule: the link reads as a project file and gives the key.
	if data, err := os.ReadFile(filepath.Join(base, "root/b")); err != nil || string(data) != "KEY" {
		t.Fatalf("plain read of the hard link: %q %v", data, err)
	}
	r := openTestRoot(t, base)
	for path, want := range map[string]bool{"b": true, "plain.txt": false, "s": false, "dir": false, "missing": false, "../outside/id_rsa": false} {
		info, _ := r.Stat(path)
		if got := r.HardLinked(path); got != want || info.HardLinked != want {
			t.Errorf("%s: HardLinked %v, Stat %v; want %v", path, got, info.HardLinked, want)
		}
	}
	found, _ := r.Hazards(context.Background())
	var linked []string
	for _, h := range found {
		if h.Kind == HazardHardLink {
			linked = append(linked, h.Path)
		}
	}
	if len(linked) != 1 || linked[0] != "b" {
		t.Fatalf("hard-link hazards: %v (want [b])", linked)
	}
}
