package rpc

import (
	"context"
	"sync"
	"time"
)

// Slots per lane, per device.
const (
	readSlots       = 4
	slowReadSlots   = 2
	orderedSlots    = 1
	backgroundSlots = 2
	// orderedWait: a request that waited this long in the ordered lane is
	// answered NOT_RUN (the phone waits 20 s for a small change).
	orderedWait = 18 * time.Second
	// margin: a queued request expires this long before its caller gives
	// up, so it never runs after the device stopped waiting.
	margin = 2 * time.Second
)

// lanes are one device's four lanes: semaphores whose waiters queue in
// arrival order.
type lanes struct {
	slots [4]chan struct{}
}

func newLanes() *lanes {
	l := &lanes{}
	for lane, n := range [4]int{readSlots, slowReadSlots, orderedSlots, backgroundSlots} {
		l.slots[lane] = make(chan struct{}, n)
	}
	return l
}

// queueLimit is how long a request of m may wait for a slot.
func queueLimit(m *Method, ordered time.Duration) time.Duration {
	if m.Lane == LaneOrdered {
		return ordered
	}
	return max(m.wait()-margin, time.Second)
}

// acquire takes a slot in m's lane, waiting at most its queue limit. It
// returns the release function, or false when the request expired.
func (l *lanes) acquire(ctx context.Context, m *Method, ordered time.Duration) (func(), bool) {
	sem := l.slots[m.Lane]
	timer := time.NewTimer(queueLimit(m, ordered))
	defer timer.Stop()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, true
	case <-timer.C:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}

// laneSet keeps each device's lanes.
type laneSet struct {
	mu  sync.Mutex
	dev map[string]*lanes
}

func (s *laneSet) of(device string) *lanes {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dev == nil {
		s.dev = map[string]*lanes{}
	}
	l, ok := s.dev[device]
	if !ok {
		l = newLanes()
		s.dev[device] = l
	}
	return l
}
