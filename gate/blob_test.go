package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// ReadTrackedBlob reads what git holds (the index), not the work tree, stops
// at its bound, and runs no filter the repository names.
func TestReadTrackedBlob(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	dir := gittest.Init(t, map[string]string{"certs/a.pem": "-----BEGIN CERTIFICATE-----\n", "big.txt": strings.Repeat("x", 10000),
		"1:odd": "odd\n", ".gitattributes": "*.pem filter=evil\n"})
	git(t, dir, "config", "filter.evil.smudge", prog)
	git(t, dir, "config", "filter.evil.clean", prog)
	write(t, dir, map[string]string{"certs/a.pem": "-----BEGIN PRIVATE KEY-----\n"}) // the work tree differs from the index
	r := open(t, dir)
	got, trunc, err := r.ReadTrackedBlob(ctx, closed, "certs/a.pem", 64<<10)
	if err != nil || trunc || string(got) != "-----BEGIN CERTIFICATE-----\n" {
		t.Fatalf("the index's blob: %q %v %v", got, trunc, err)
	}
	if got, trunc, err := r.ReadTrackedBlob(ctx, closed, "big.txt", 100); err != nil || !trunc || len(got) > 100 {
		t.Fatalf("a bounded read: %d bytes, truncated %v, %v", len(got), trunc, err)
	}
	if got, _, err := r.ReadTrackedBlob(ctx, closed, "1:odd", 100); err != nil || string(got) != "odd\n" {
		t.Fatalf("a path that looks like a stage: %q %v", got, err)
	}
	if _, _, err := r.ReadTrackedBlob(ctx, closed, "nope", 100); !errors.Is(err, ErrNotTracked) {
		t.Fatalf("an untracked path: %v", err)
	}
	if gittest.Fired(marker) {
		t.Fatal("reading a blob ran the repository's filter")
	}
	// The same checkout with plain git runs the filter: the check has teeth.
	os.Remove(filepath.Join(dir, "certs", "a.pem"))
	git(t, dir, "checkout", "--", "certs/a.pem")
	if !gittest.Fired(marker) {
		t.Fatal("plain git checkout did not run the smudge filter; the check above proves nothing")
	}
}

// A checkout the Read gate refuses is refused here too: a partial clone
// would fetch a missing object on a git without GIT_NO_LAZY_FETCH.
func TestReadTrackedBlobRefusedConfig(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.pem": "x"})
	git(t, dir, "config", "extensions.partialClone", "origin")
	r := open(t, dir)
	if _, _, err := r.ReadTrackedBlob(ctx, closed, "a.pem", 100); !errors.Is(err, ErrRefused) {
		t.Fatalf("a refused config: %v", err)
	}
	if got, _, err := r.ReadTrackedBlob(ctx, desktop, "a.pem", 100); err != nil || string(got) != "x" {
		t.Fatalf("the desktop: %q %v", got, err)
	}
}
