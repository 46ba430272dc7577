package rpc

import (
	"errors"
	"sync"
	"time"
)

// errBeforeStart: a request stamped before the host started.
var errBeforeStart = errors.New("rpc: stamped before this host started")

// IsReplay reports whether a ReplayGuard refused a message for its nonce
// (as opposed to its time, or a full memory).
func IsReplay(err error) bool { return err == errReplay }

// maxSeen bounds the nonces one peer may have in the replay window: at 60 s
// that is over a hundred messages a second, far past any phone.
const maxSeen = 8192

// ReplayGuard refuses a message whose timestamp is more than 60 s old or
// ahead, or whose nonce was seen inside that window. It remembers a nonce
// until the message carrying it would be refused as stale anyway, and never
// earlier: when its set is full it refuses new messages (BUSY) rather than
// forget a nonce that could then be replayed. One guard per peer, on both
// sides (the host for requests, a device for replies and events).
type ReplayGuard struct {
	mu   sync.Mutex
	seen map[string]int64 // nonce -> the message's ts, unix ms
	now  func() time.Time
}

// NewReplayGuard makes an empty guard.
func NewReplayGuard() *ReplayGuard {
	return &ReplayGuard{seen: map[string]int64{}, now: time.Now}
}

// Check accepts a message once. It returns errStale, errReplay, or errBusy.
func (g *ReplayGuard) Check(ts int64, nonce string) error {
	now := g.now().UnixMilli()
	window := replayTime.Milliseconds()
	if ts < now-window || ts > now+window {
		return errStale
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.seen[nonce]; ok {
		return errReplay
	}
	if len(g.seen) >= maxSeen {
		g.prune(now, window)
		if len(g.seen) >= maxSeen {
			return errBusy
		}
	}
	g.seen[nonce] = ts
	return nil
}

// prune forgets nonces whose messages are out of the window for good.
func (g *ReplayGuard) prune(now, window int64) {
	for n, ts := range g.seen {
		if ts < now-window {
			delete(g.seen, n)
		}
	}
}
