package fsguard

import (
	"errors"
	"github.com/gatehouse/gatehouse/internal/hostile"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

const raceReads = 100_000

// swapper replaces name (inside the root) with a symlink to target and back,
// as fast as it can, until stopped.
func swapper(t *testing.T, base, name, target string, stop *atomic.Bool) chan struct{} {
	done := make(chan struct{})
	p := filepath.Join(base, "root", name)
	real := p + ".real"
	go func() {
		defer close(done)
		for !stop.Load() {
			if err := os.Rename(p, real); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			if err := os.Symlink(target, p); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			if err := os.Remove(p); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			if err := os.Rename(real, p); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
		}
	}()
	return done
}

// raceCase swaps name for a symlink to outside while reading path.
func raceCase(t *testing.T, name, target, path string) {
	base := hostile.Build(t, `
file root/d/f.txt = INSIDE
file root/g.txt = INSIDE
file outside/d/f.txt = OUTSIDE
`)
	target = strings.ReplaceAll(target, "$BASE", base)
	var stop atomic.Bool
	done := swapper(t, base, name, target, &stop)
	defer func() { stop.Store(true); <-done }()

	// Without fsguard: a plain reader sees the outside file while the swap
	// runs, which proves the race is real.
	leaked := false
	for i := 0; i < 1_000_000 && !leaked; i++ {
		data, _ := os.ReadFile(filepath.Join(base, "root", path))
		leaked = string(data) == "OUTSIDE"
	}
	if !leaked {
		t.Fatal("the swap never made a plain read see the outside file; the race is not reproduced")
	}

	r := openTestRoot(t, base)
	var inside, refused int
	for range raceReads {
		txt, err := r.ReadText(trust.Full, path, 0)
		switch {
		case err == nil && txt.Text == "INSIDE":
			inside++
		case err == nil:
			t.Fatalf("read returned %q", txt.Text)
		case errors.Is(err, ErrChanged), errors.Is(err, ErrOutsideRoot), errors.Is(err, ErrNotFound), errors.Is(err, ErrNotDir):
			refused++
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if inside == 0 {
		t.Fatal("no read succeeded: the test proves nothing about correct reads")
	}
	t.Logf("%d reads: %d inside, %d refused", raceReads, inside, refused)
}

func TestRaceSwapFileForSymlinkOut(t *testing.T) {
	raceCase(t, "g.txt", "$BASE/outside/d/f.txt", "g.txt")
}

func TestRaceSwapParentFolderForSymlinkOut(t *testing.T) {
	raceCase(t, "d", "$BASE/outside/d", "d/f.txt")
}

func TestRaceSwapParentFolderForRelativeSymlinkOut(t *testing.T) {
	raceCase(t, "d", "../outside/d", "d/f.txt")
}
