package relayserver

import "sync"

// hub is where an account's sockets meet: one socket per device, looked up
// by (account, device). localHub keeps them in this process (one node);
// natsHub (cluster.go) keeps this node's sockets in a localHub and reaches
// the other nodes' through NATS, so the server asks the same questions of
// either and never knows which node a device is on.
type hub interface {
	// join adds c and returns the socket of this node it replaces, if
	// any; a socket of the device on another node is closed with
	// relay.CloseReplaced too (the newer socket wins, across nodes).
	join(c *conn) (replaced *conn)
	// leave removes c if it is still the device's socket.
	leave(c *conn) bool
	// online reports whether the device has a socket on any node.
	online(account, device string) bool
	// sockets returns an account's sockets on this node.
	sockets(account string) []*conn
	// all returns every socket of this node (shutdown, revalidation).
	all() []*conn
	// deliver hands a forwarded frame (which it owns from here on) to
	// device to of from's account, wherever it is. A remote node that
	// cannot deliver tells the sender itself, later, with an undeliverable
	// frame.
	deliver(from *conn, to, ref string, frame *[]byte) delivery
	// closeDevice closes the device's socket on every node.
	closeDevice(account, device string, code int, reason string)
	// changed tells every other node that the account's device list
	// changed (a sign-in, a removal, a host switch): each sends its own
	// sockets of the account a fresh presence.
	changed(account string)
	// close leaves the cluster, if any.
	close()
	// ready says why this node cannot reach the others, if it cannot.
	ready() error
}

// delivery is what became of a forwarded frame.
type delivery int

const (
	delivered delivery = iota // queued for the socket, here or on another node
	offline                   // no node has a socket for the device
	queueFull                 // the device's socket here reads too slowly
)

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

func (h *localHub) local(account, device string) *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.accounts[account][device]
}

func (h *localHub) online(account, device string) bool { return h.local(account, device) != nil }

func (h *localHub) hasAccount(account string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.accounts[account]) > 0
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

func (h *localHub) deliver(from *conn, to, _ string, frame *[]byte) delivery {
	target := h.local(from.account, to)
	if target == nil {
		putFrame(frame)
		return offline
	}
	if !target.send(frame) {
		return queueFull
	}
	return delivered
}

func (h *localHub) closeDevice(account, device string, code int, reason string) {
	if c := h.local(account, device); c != nil {
		c.close(code, reason)
	}
}

func (h *localHub) changed(string) {}

func (h *localHub) close() {}

func (h *localHub) ready() error { return nil }
