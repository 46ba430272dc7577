package rpc

import (
	"context"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// What a transport outside this package (relay/link) may ask of a host
// beyond HandleSealed, kept to the few things that transport needs.

// ErrNotPresent refuses a request whose device left the account's presence
// (removed, or back with another key) while the request waited to start.
var ErrNotPresent = refusal.New(refusal.Access, "device not present", "This device is no longer on this computer's relay account, so the request did not run.")

// WithPresence returns dev marked as found in a transport's presence:
// present is asked with the grant, when the request arrives and again when
// a queued request starts, so a device removed meanwhile gets nothing run
// (ErrNotPresent).
func (d Device) WithPresence(present func() bool) Device {
	d.present = present
	return d
}

// HandleSealedRef is HandleSealed that also returns the request's id: the
// relay frame carrying the reply names it as its ref, so an undeliverable
// notice fails only that call.
func (h *Host) HandleSealedRef(ctx context.Context, dev Device, key Key, aadIn, aadOut []byte, body string) (reply, ref string, err error) {
	return h.handleSealed(ctx, dev, key, aadIn, aadOut, body)
}

// NoteBusy counts, in the request log, a frame the transport dropped
// because its device had too many requests in flight.
func (h *Host) NoteBusy(dev Device) { h.noteRefused(dev, RefusedBusy) }
