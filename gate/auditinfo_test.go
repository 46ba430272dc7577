package gate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
)

// AttributeUses reads the git folder's info/attributes with gatehouse's own
// read, which refused a link only at its last step: a symlinked info/ was
// followed, and attributes from any folder were reported as the
// repository's. It now reads the file only when the gate accepts the
// folder's shape (and from the common folder, where git reads it).
func TestAttributeUsesNeverReadsThroughALinkedInfo(t *testing.T) {
	gittest.Home(t, "")
	prog, _ := gittest.PayloadFile(t)
	build := func(t *testing.T) (dir, info string) {
		dir = repoWith(t, map[string]string{"a.txt": "a\n"}, "filter.evil.clean", prog)
		info = filepath.Join(t.TempDir(), "info")
		write(t, info, map[string]string{"attributes": "*.txt filter=evil\n"})
		return dir, info
	}
	uses := func(t *testing.T, dir string) int {
		n, err := open(t, dir).AttributeUses(ctx, closed, []string{"a.txt"})
		if err != nil {
			t.Fatal(err)
		}
		return len(n)
	}
	dir, info := build(t)
	write(t, dir, map[string]string{".git/info/attributes": read(t, filepath.Join(info, "attributes"))})
	if uses(t, dir) != 1 {
		t.Fatal("not reproduced: the git folder's own info/attributes is not read")
	}
	dir, info = build(t)
	linkOut(t, info, filepath.Join(dir, ".git", "info"))
	// The old read, on the same path: the link is followed.
	if data, err := fsguard.ReadMetadata(filepath.Join(dir, ".git", "info", "attributes"), maxAttributes); err != nil || !strings.Contains(string(data), "filter=evil") {
		t.Fatalf("not reproduced: the old read did not follow the symlinked .git/info: %q, %v", data, err)
	}
	if n := uses(t, dir); n != 0 {
		t.Fatalf("%d uses read through a symlinked .git/info", n)
	}
}
