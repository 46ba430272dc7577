package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"golang.org/x/sys/unix"
)

// A FIFO named .gitattributes stops git check-attr within a second (the
// runner's FIFO watch reads the kernel's wait channel, on Linux; elsewhere
// only the deadline stops git): the audit still finishes, the tree scan
// names the FIFO, and the report says it stopped at its bounds rather than
// claiming no driver is selected.
func TestAuditWithAFIFOForAttributes(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=x\n"})
	if err := os.Remove(filepath.Join(dir, ".gitattributes")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, ".gitattributes"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir)
	if got := rules(r); strings.Join(got["special-file"], ",") != ".gitattributes" || !r.Truncated {
		t.Fatalf("truncated %v, %v", r.Truncated, got)
	}
}
