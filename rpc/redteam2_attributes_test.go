package rpc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// TestRedteam2StatusMissesAttributesChange: whether a file whose stat data
// differs from the index is modified depends on the attributes git hashes
// it with (text, eol, ident, working-tree-encoding). The index copy is
// refreshed by every monitored run: a file touched but unchanged (an
// editor's save, a build tool) gets its new stat data in the copy and is
// clean there from then on, while the user's index keeps the old stat and
// plain git hashes the file at every status. A .gitattributes edited later
// (here in the work tree; .git/info/attributes and the global attributes
// file do the same, and neither is even among the sources the kept answer
// depends on) makes plain git call the file modified; the copy never
// looks at it again, not even at the full look every MonitorFullLook
// (here a folder made, which tells git "/"): it compares stat data only. The answer
// stays wrong until the user's index changes.
func TestRedteam2StatusMissesAttributesChange(t *testing.T) {
	tg, plain, _, dir := monitoredTarget(t, map[string]string{"a.txt": "a\r\nb\r\n", "b/y.go": "y\n"})
	settled(t, tg, plain, dir)
	// The file touched, not changed: stat data no longer the index's.
	old := time.Now().Add(-2 * time.Hour)
	noErr(t, os.Chtimes(filepath.Join(dir, "a.txt"), old, old))
	sameStatus(t, tg, plain, "a.txt touched")
	// The repository's attributes now normalize line endings.
	gittest.Write(t, dir, map[string]string{".gitattributes": "*.txt text\n"})
	want, err := plain.Repo.Status(context.Background(), closedPhone)
	noErr(t, err)
	if len(want.Files) < 2 {
		t.Fatalf("setup: plain git does not call a.txt modified: %+v", *want)
	}
	// A folder made: the monitor's doubt, so git is told "/" (the
	// full look every 30 s is the same).
	noErr(t, os.Mkdir(filepath.Join(dir, "newdir"), 0o755))
	sameStatus(t, tg, plain, ".gitattributes made (*.txt text), then a full look")
}
