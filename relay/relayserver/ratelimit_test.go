package relayserver

import (
	"strconv"
	"testing"
	"time"
)

// A limiter holding its most keys makes room by dropping the buckets that
// have refilled, so a new address or account is served once the old ones
// have gone quiet; and it drops only those: a bucket still spent is kept,
// and a new key is refused rather than the map grown past maxKeys. Without
// the pruning, a relay that has once seen maxKeys addresses refuses every
// new one for as long as it runs. The clock is the one allow takes, so the
// test counts buckets, not seconds.
func TestLimiterPrunesRefilledBuckets(t *testing.T) {
	const keys = 8
	l := perMinute(6, keys) // a token every 10 s, full after a minute
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range keys {
		if !l.allow("old-"+strconv.Itoa(i), start) {
			t.Fatalf("key %d refused on its first request", i)
		}
	}
	if len(l.m) != keys {
		t.Fatalf("%d buckets after %d keys", len(l.m), keys)
	}

	// None has refilled yet: the new key is refused, the map not grown,
	// and no bucket forgotten (each still owes its spent token).
	soon := start.Add(5 * time.Second)
	if l.allow("new-early", soon) {
		t.Fatal("a new key was let in past maxKeys while every bucket was still spent")
	}
	if len(l.m) != keys {
		t.Fatalf("%d buckets after a refused key, want %d", len(l.m), keys)
	}
	if _, ok := l.m["new-early"]; ok {
		t.Fatal("the refused key got a bucket")
	}

	// One old key spends its whole bucket at 50 s, so it is not full a
	// minute on; the others have refilled.
	spent := 0
	for l.allow("old-0", start.Add(50*time.Second)) {
		spent++
		if spent > 6 {
			t.Fatal("old-0 was let past its burst")
		}
	}
	if spent != 6 {
		t.Fatalf("old-0 spent %d at 50 s, want its burst of 6", spent)
	}
	later := start.Add(61 * time.Second)
	if !l.allow("new-late", later) {
		t.Fatal("a new key was refused after the old buckets had refilled: the limiter did not prune them")
	}
	if _, ok := l.m["old-0"]; !ok {
		t.Fatal("a bucket still spent was pruned: its key would start full again")
	}
	if got := len(l.m); got != 2 {
		t.Fatalf("%d buckets after pruning, want 2 (old-0, still spent, and new-late)", got)
	}
	for i := 1; i < keys; i++ {
		if _, ok := l.m["old-"+strconv.Itoa(i)]; ok {
			t.Fatalf("old-%d, refilled, was kept", i)
		}
	}
}
