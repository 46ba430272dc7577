package relayserver

import (
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens a second, at most burst.
type bucket struct {
	tokens float64
	last   time.Time
}

func (b *bucket) allow(now time.Time, rate, burst float64) bool {
	if b.last.IsZero() {
		b.tokens = burst
	} else if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(burst, b.tokens+dt*rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// keyedLimiter is a token bucket per key (an IP, an account), holding at
// most maxKeys buckets: when full, buckets that have refilled are dropped
// (they would allow the same as a new one), and if none has, the caller is
// refused rather than the map grown.
type keyedLimiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	maxKeys int
	m       map[string]*bucket
}

func perMinute(n int, maxKeys int) *keyedLimiter {
	return &keyedLimiter{rate: float64(n) / 60, burst: float64(n), maxKeys: maxKeys, m: map[string]*bucket{}}
}

func (l *keyedLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[key]
	if b == nil {
		if len(l.m) >= l.maxKeys && !l.prune(now) {
			return false
		}
		b = &bucket{}
		l.m[key] = b
	}
	return b.allow(now, l.rate, l.burst)
}

// prune drops the buckets that are full again, and reports whether any
// room was made.
func (l *keyedLimiter) prune(now time.Time) bool {
	before := len(l.m)
	for k, b := range l.m {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.m, k)
		}
	}
	return len(l.m) < before
}
