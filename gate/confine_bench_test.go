//go:build linux

package gate

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// BenchmarkConfinedSpawn: what the kernel wall adds to one closed git
// call: the same call (git config --local --list -z, with the closed
// gate's options and environment) started inside the wall (Landlock
// ruleset, a locked thread, the traced start and RLIMIT_AS) and without
// it. Target: confined ≤ 1.10× plain. confined-untraced sets the memory
// bound right after the start rather than at the exec stop: what the
// atomic bound costs.
func BenchmarkConfinedSpawn(b *testing.B) {
	gittest.Home(b, "")
	dir := gittest.Init(b, nil)
	c := call{sub: subConfig, opts: []string{"--local", "--list", "-z"}}
	for _, name := range []string{"plain", "confined", "confined-untraced", "plain", "confined", "confined-untraced"} {
		r := benchOpen(b, dir)
		r.wall.offForTest = name == "plain"
		r.wall.untracedForTest = name == "confined-untraced"
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := r.run(ctx, closed, openDecision, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
