package relayserver

import "sync"

// hub is where an account's sockets meet: one socket per device, looked up
// by (account, device). localHub keeps them in this process. A relay of
// several nodes would implement the same four methods over an existing
// engine (NATS, a subject per device, with device rows in Postgres) instead
// of a protocol of its own; nothing else in the server would change.
type hub interface {
	// join adds c and returns the socket it replaces, if any.
	join(c *conn) (replaced *conn)
	// leave removes c if it is still the device's socket.
	leave(c *conn) bool
	// get returns a device's socket, or nil.
	get(account, device string) *conn
	// sockets returns an account's sockets.
	sockets(account string) []*conn
}

type localHub struct {
	mu       sync.Mutex
	accounts map[string]map[string]*conn
}

func newLocalHub() *localHub { return &localHub{accounts: map[string]map[string]*conn{}} }

func (h *localHub) join(c *conn) *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.accounts[c.account]
	if m == nil {
		m = map[string]*conn{}
		h.accounts[c.account] = m
	}
	old := m[c.device]
	m[c.device] = c
	return old
}

func (h *localHub) leave(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.accounts[c.account]
	if m[c.device] != c {
		return false
	}
	delete(m, c.device)
	if len(m) == 0 {
		delete(h.accounts, c.account)
	}
	return true
}

func (h *localHub) get(account, device string) *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.accounts[account][device]
}

func (h *localHub) sockets(account string) []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*conn, 0, len(h.accounts[account]))
	for _, c := range h.accounts[account] {
		out = append(out, c)
	}
	return out
}

// all returns every socket, for shutdown.
func (h *localHub) all() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*conn
	for _, m := range h.accounts {
		for _, c := range m {
			out = append(out, c)
		}
	}
	return out
}
