//go:build linux

package gate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// A fake gh that reports from inside: the address-space bound it runs
// under (ulimit -v, KiB), whether it could write outside the checkout, and
// whether its own git ran a global clean filter (the marker).
func wallProbeGH(t *testing.T, outside string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gh")
	script := "#!/bin/sh\n" +
		"git status --porcelain > /dev/null 2>&1\n" +
		"if touch '" + outside + "' 2>/dev/null; then w=yes; else w=no; fi\n" +
		"printf '%s %s\\n' \"$(ulimit -v)\" \"$w\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// gh runs git itself: for a closed call it starts as a closed git does,
// inside the kernel wall and the memory bound, and its git gets the gate's
// options. gh used to start with a plain start: a repository's attributes
// selected a filter from the user's global config, gh's git ran it, and it
// wrote outside the checkout. Shown with gh started as before (the
// switch), then inside the walls.
func TestGHAndItsGitRunInsideTheWalls(t *testing.T) {
	wallB := landlock() > 0 && !kernelWallIsOff() // else the gate's own options and the memory bound alone are looked at
	if !kernelWallIsOff() {
		t.Run("the kernel wall's half", func(t *testing.T) {
			testenv.Require(t, "landlock", landlock() > 0, "without Landlock only the gate's options and the memory bound are looked at")
		})
	}
	for _, before := range []bool{true, false} {
		t.Run(map[bool]string{true: "gh started as before", false: "gh inside the walls"}[before], func(t *testing.T) {
			gittest.Home(t, "")
			prog, marker := gittest.PayloadFile(t)
			dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"},
				"remote.origin.url", "https://github.com/octo/hello.git")
			dirty(t, dir)
			userConfig(t, "[filter \"evil\"]\n\tclean = "+prog+"\n")
			outside := filepath.Join(t.TempDir(), "written-by-gh")
			r := open(t, dir)
			r.toolOutsideWallsForTest = before
			if before {
				r.userConfigOffForTest = true // and gh's git with the gate's options of before
			}
			d, err := r.decide(ctx, closed, readGate, "see its pull requests")
			if err != nil {
				t.Fatal(err)
			}
			out, err := runGH(ctx, wallProbeGH(t, outside), r, closed, d, GHCall{})
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(out))
			if len(f) != 2 {
				t.Fatalf("gh printed %q", out)
			}
			if before {
				if f[1] != "yes" || !gittest.Fired(marker) {
					t.Fatalf("not reproduced: gh started as before wrote outside %s, its git fired %v", f[1], gittest.Fired(marker))
				}
				return
			}
			kib, _ := strconv.ParseUint(f[0], 10, 64)
			switch {
			case wallB && f[1] != "no":
				t.Fatal("gh wrote outside the checkout from inside the kernel wall")
			case gittest.Fired(marker):
				t.Fatal("gh's git ran a filter from the user's global config")
			case kib == 0 || kib<<10 > max(r.wall.limit(), toolMemoryFloor):
				t.Fatalf("gh ran with an address-space bound of %s KiB, want at most %d", f[0], max(r.wall.limit(), toolMemoryFloor)>>10)
			}
		})
	}
}
