package relayserver

// localSocket is a device's socket on this node of h, or nil: what the
// tests ask of either hub, which the server itself never needs to.
func localSocket(h hub, account, device string) *conn {
	switch h := h.(type) {
	case *localHub:
		return h.local(account, device)
	case *natsHub:
		return h.here.local(account, device)
	}
	panic("localSocket: unknown hub")
}
