package lan

import (
	"encoding/json"
	"net/url"

	"github.com/gatehouse/gatehouse/rpc"
)

// What the tests ask of a session beyond what gatehouse call needs: the
// page, not this client, reads the event stream, and gatehouse call pairs
// again on ErrNotPaired from Resume before any call.

// NotPaired reports whether the host answered that it does not know this
// device (it was unpaired): pair again.
func (c *Conn) NotPaired() bool { return c.notPaired.Load() }

// EventsURL is the address of the session's event stream, with a fresh
// sealed opener.
func (se *Session) EventsURL() string {
	plain, _ := json.Marshal(map[string]any{"type": "req", "id": "events", "method": "events", "ts": se.c.now().UnixMilli(), "nonce": randomID(24)})
	f := rpc.Seal(se.keys.key, plain, sessionAAD(se.deviceID, se.id, "events"))
	return se.c.base + "rc/events?d=" + url.QueryEscape(se.deviceID) + "&s=" + url.QueryEscape(se.id) + "&f=" + url.QueryEscape(f)
}

// OpenEvent opens one sealed event frame of the session's stream.
func (se *Session) OpenEvent(frame string) ([]byte, error) {
	return rpc.Open(se.keys.key, frame, sessionAAD(se.deviceID, se.id, "device"))
}
