package rpc

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Subscriptions: a device that calls subscribe {targets} hears
// checkout.changed {target} when a subscribed checkout's work tree or index
// changes, at most once a second per checkout, for 10 minutes (renewed by
// subscribing again). One file-system watcher per watched target, started
// on the first subscription and bounded in the folders it watches.

const (
	subscriptionTTL = 10 * time.Minute
	debounce        = time.Second
	maxWatchFolders = 10_000
)

type subscriptions struct {
	h        *Host
	sink     atomic.Pointer[EventSink] // where events go; set once
	mu       sync.Mutex
	devices  map[string]map[string]time.Time // target -> device -> expiry
	watchers map[string]*watcher
	closed   bool
}

func newSubscriptions(h *Host) *subscriptions {
	s := &subscriptions{h: h, devices: map[string]map[string]time.Time{}, watchers: map[string]*watcher{}}
	if h.o.Events != nil {
		sink := EventSink(h.o.Events)
		s.sink.Store(&sink)
	}
	return s
}

// EventSink delivers an event to a device: the transport's job.
type EventSink func(deviceID string, ev Event)

// ErrEventSinkSet refuses a second event sink. A host's events go to one
// transport: one that replaced another's sink would leave that transport's
// devices deaf without a word, and composing two would send a device's
// events to a transport it never used.
var ErrEventSinkSet = errors.New("rpc: the host's events already go to a transport")

// AttachEvents makes sink the one place the host's events go: the
// transport calls it once, after building whatever the sink uses and before
// it lets any request in. It refuses (ErrEventSinkSet) when HostOptions.Events
// or an earlier AttachEvents set one.
func (h *Host) AttachEvents(sink EventSink) error {
	if sink == nil {
		return errors.New("rpc: nil event sink")
	}
	if !h.subs.sink.CompareAndSwap(nil, &sink) {
		return ErrEventSinkSet
	}
	return nil
}

// eventSink is where events go now, nil before a transport attached one.
func (s *subscriptions) eventSink() EventSink {
	if p := s.sink.Load(); p != nil {
		return *p
	}
	return nil
}

// subscribe renews device's subscription to each target and makes sure each
// is watched.
func (s *subscriptions) subscribe(device string, targets []*Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	until := s.h.now().Add(subscriptionTTL)
	for _, t := range targets {
		if s.devices[t.ID] == nil {
			s.devices[t.ID] = map[string]time.Time{}
		}
		s.devices[t.ID][device] = until
		if _, ok := s.watchers[t.ID]; !ok {
			if w := startWatcher(t, func() { s.changed(t.ID) }); w != nil {
				s.watchers[t.ID] = w
			}
		}
	}
}

// changed tells every device still subscribed to target; a target nobody
// listens to any more stops being watched.
func (s *subscriptions) changed(target string) {
	s.mu.Lock()
	now := s.h.now()
	var to []string
	for dev, until := range s.devices[target] {
		if now.After(until) {
			delete(s.devices[target], dev)
			continue
		}
		to = append(to, dev)
	}
	if len(to) == 0 {
		if w := s.watchers[target]; w != nil {
			w.stop()
			delete(s.watchers, target)
		}
	}
	s.mu.Unlock()
	for _, dev := range to {
		s.h.emit(dev, "checkout.changed", map[string]string{"target": target})
	}
}

// forget drops a device's subscriptions (it left, or was revoked).
func (s *subscriptions) forget(device string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, devs := range s.devices {
		delete(devs, device)
	}
}

func (s *subscriptions) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, w := range s.watchers {
		w.stop()
		delete(s.watchers, id)
	}
}
