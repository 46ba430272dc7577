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
// it. Target: confined ≤ 1.10× plain.
func BenchmarkConfinedSpawn(b *testing.B) {
	gittest.Home(b, "")
	dir := gittest.Init(b, nil)
	c := call{sub: subConfig, opts: []string{"--local", "--list", "-z"}}
	for _, name := range []string{"plain", "confined", "plain", "confined"} {
		r := benchOpen(b, dir)
		r.wall.offForTest = name == "plain"
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := r.run(ctx, closed, openDecision, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
