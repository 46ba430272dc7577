package fsguard

import "testing"

// The same hostile table through the per-folder walk that replaces openat2
// where a kernel or seccomp filter refuses it.
func TestHostileTreesWithoutOpenat2(t *testing.T) {
	disableOpenat2ForTest(true)
	defer disableOpenat2ForTest(false)
	TestHostileTrees(t)
}
