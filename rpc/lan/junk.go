package lan

import (
	"net/netip"
	"time"
)

// Hellos that do not open (a wrong key, a stale link, garbage) are junk.
// Each sender address has its own budget of junk a minute, so junk from one
// address never blocks another's pairing, and a hello that opens with the
// link key is never charged at all: the holder of a valid link always gets
// through, whoever else is sending junk.
const (
	junkPerMinute = 10   // failed hellos a sender address may send a minute
	junkAddresses = 1024 // sender addresses remembered; beyond, new senders have no budget
)

// junkBudget counts failed hellos per sender address over the last minute.
// It is not safe for concurrent use (Pairing's lock guards it).
type junkBudget struct {
	by map[netip.Prefix][]time.Time
}

// sender is the key a budget is kept under: an IPv4 address, or an IPv6
// address's /64, the block one host usually holds (as connlimit keys it),
// so one host cannot step around its budget by cycling addresses.
func sender(a netip.Addr) netip.Prefix {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, a.BitLen())
}

// allowed reports whether from may send one more failed hello now.
func (j *junkBudget) allowed(from netip.Addr, now time.Time) bool {
	j.prune(now)
	key := sender(from)
	if _, known := j.by[key]; !known && len(j.by) >= junkAddresses {
		return false // remembering one more sender would grow without bound
	}
	return len(j.by[key]) < junkPerMinute
}

// charge records a failed hello from from, and reports whether it fit the
// budget (a sender over its budget is not counted further).
func (j *junkBudget) charge(from netip.Addr, now time.Time) bool {
	if !j.allowed(from, now) {
		return false
	}
	if j.by == nil {
		j.by = map[netip.Prefix][]time.Time{}
	}
	key := sender(from)
	j.by[key] = append(j.by[key], now)
	return true
}

// prune forgets failures older than a minute, and senders with none left.
func (j *junkBudget) prune(now time.Time) {
	for a, ts := range j.by {
		kept := ts[:0]
		for _, t := range ts {
			if now.Sub(t) < time.Minute {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			delete(j.by, a)
		} else {
			j.by[a] = kept
		}
	}
}
