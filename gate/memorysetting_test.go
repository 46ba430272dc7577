package gate

import "testing"

// A memory setting too large for its byte count is held at MaxMemoryMiB:
// 2^44 MiB shifted to bytes wrapped to 0, so a closed child ran with the
// default bound and doctor said "0 GiB"; 2^53+1 said "1 MiB".
func TestHugeMemorySettingsAreHeldAtTheMaximum(t *testing.T) {
	huge := 1 << 44
	if wrapped := uint64(huge) << 20; wrapped != 0 {
		t.Fatalf("2^44 MiB in bytes is %d, not 0: the overflow this test is about is not there", wrapped)
	}
	for _, mib := range []int{1 << 44, 1<<53 + 1, 1<<62 + 5, MaxMemoryMiB + 1} {
		if got := memoryLimit(Options{MemoryLimitMiB: mib}); got != MaxMemoryMiB<<20 {
			t.Errorf("gitMemoryLimitMiB %d: a child's bound is %d bytes, want the maximum %d", mib, got, uint64(MaxMemoryMiB)<<20)
		}
		if got := NewMemoryBudget(mib, 0).Total(); got != MaxMemoryMiB<<20 {
			t.Errorf("gitMemoryTotalMiB %d: the budget is %d bytes, want the maximum %d", mib, got, int64(MaxMemoryMiB)<<20)
		}
	}
	for _, mib := range []int{-1, -1 << 62, 1} {
		if got := memoryLimit(Options{MemoryLimitMiB: mib}); got != MinMemoryLimitMiB<<20 {
			t.Errorf("gitMemoryLimitMiB %d: a child's bound is %d bytes, want the minimum", mib, got)
		}
	}
}
