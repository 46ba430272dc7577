package rpc

import (
	"errors"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// What a transport outside this package (relay/link, rpc/lan) may ask of a
// host beyond HandleSealed, kept to the few things transports need.

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

// NoteBusy counts, in the request log, a frame the transport dropped
// because its device had too many requests in flight.
func (h *Host) NoteBusy(dev Device) { h.noteRefused(dev, RefusedBusy) }

// EventsMethod is the method an event stream's opener names.
const EventsMethod = "events"

// errNotEventsOpener: a frame sealed for the event stream that does not
// name EventsMethod.
var errNotEventsOpener = errors.New("rpc: an event stream's opener names another method")

// OpenEvents is a transport's entry for a device's event stream opener
// (the LAN's GET /rc/events): a request naming EventsMethod, sealed under
// key with aad, that takes the walk every call takes up to admission: it
// opens (openRequest) and passes the replay step (checkFresh: the device's
// one replay guard, the host's start, refusals counted in the request
// log), so a rule added to either holds for events too. nil means the
// stream may open; a refusal's cause is logged as a call's is. Through a
// relay there is no opener: a device subscribes with a call (subscribe)
// and its events come back on the link, so both transports open what a
// device sends here.
func (h *Host) OpenEvents(dev Device, key Key, aad []byte, body string) error {
	req, err := openRequest(key, aad, Frame{Body: []byte(body)})
	if err != nil {
		return err
	}
	if req.Method != EventsMethod {
		return errNotEventsOpener
	}
	if err := h.checkFresh(dev, req); err != nil {
		code, _ := codeOf(err)
		h.logRefusal(dev, req.ID, req.Method, code, err)
		return err
	}
	return nil
}
