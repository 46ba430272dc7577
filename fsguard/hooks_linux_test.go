package fsguard

// disableOpenat2ForTest switches openat2 off (every walk takes the per-folder
// fallback, as on a kernel that refuses openat2) or on again.
func disableOpenat2ForTest(off bool) { noOpenat2.Store(off) }
