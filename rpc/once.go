package rpc

import (
	"container/list"
	"sync"
	"time"
)

// The sendId memory: a once-method's answer, remembered per (device,
// method, target, sendId) for an hour, at most 4,096 entries and 32 MiB in
// all (oldest forgotten first), so a retry after a lost reply answers the
// first answer without running again. A failure is not remembered; a repeat
// that arrives while the first runs waits for it.
const (
	onceTTL      = time.Hour
	onceMax      = 4096
	onceMaxBytes = 32 << 20
	maxSendID    = 200
)

type onceKey struct{ device, method, target, id string }

type onceEntry struct {
	done   chan struct{} // closed when the first run ends
	result []byte        // the answer's JSON, on success
	ok     bool
	at     time.Time
	elem   *list.Element
}

type onceMemory struct {
	mu      sync.Mutex
	entries map[onceKey]*onceEntry
	order   *list.List // oldest first
	bytes   int
	now     func() time.Time
}

func newOnceMemory() *onceMemory {
	return &onceMemory{entries: map[onceKey]*onceEntry{}, order: list.New(), now: time.Now}
}

// begin returns the entry for k and whether the caller runs it. When an
// answered entry exists the caller uses its result; when a running one
// exists the caller waits on its done channel and then asks again.
func (o *onceMemory) begin(k onceKey) (*onceEntry, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e, ok := o.entries[k]; ok {
		if e.ok && o.now().Sub(e.at) > onceTTL {
			o.drop(k, e)
		} else {
			return e, false
		}
	}
	e := &onceEntry{done: make(chan struct{}), at: o.now()}
	e.elem = o.order.PushBack(k)
	o.entries[k] = e
	o.evict()
	return e, true
}

// finish records the first run's outcome: a success is kept, a failure
// forgotten so a retry runs.
func (o *onceMemory) finish(k onceKey, e *onceEntry, result []byte, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	present := o.entries[k] == e // not evicted while it ran
	switch {
	case ok:
		e.ok, e.result, e.at = true, result, o.now()
		if present {
			o.bytes += len(result)
			o.evict()
		}
	case present:
		o.drop(k, e)
	}
	close(e.done)
}

func (o *onceMemory) evict() {
	for o.order.Len() > onceMax || o.bytes > onceMaxBytes {
		front := o.order.Front()
		k := front.Value.(onceKey)
		o.drop(k, o.entries[k])
	}
}

func (o *onceMemory) drop(k onceKey, e *onceEntry) {
	o.order.Remove(e.elem)
	o.bytes -= len(e.result)
	delete(o.entries, k)
}
