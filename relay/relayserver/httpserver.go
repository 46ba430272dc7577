package relayserver

import (
	"net"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/internal/connlimit"
)

// ConnLimits bound what clients can hold open on the relay's HTTP server.
// A client that sends headers and never the body, or never the headers,
// holds a descriptor and a goroutine until a timeout fires; the caps bound
// how many it can hold meanwhile, so such a flood from one address cannot
// take the descriptors every other device needs.
type ConnLimits struct {
	PerAddr int // open connections from one client address (0: no cap)
	Total   int // open connections in all (0: no cap)

	ReadHeader time.Duration // a request's headers
	Read       time.Duration // a whole request, body included (the sign-in body is at most 256 KiB)
	Write      time.Duration // an answer (a WebSocket's frames have their own deadline)
	Idle       time.Duration // a kept-alive connection between requests
}

// Default limits.
const (
	defaultPerAddr   = 256 // a carrier NAT puts many phones behind one address
	maxTotalConns    = 100_000
	reservedFDs      = 256 // for the database, logs and the push webhook
	minTotalConns    = 64
	defaultReadHead  = 10 * time.Second
	defaultRead      = 30 * time.Second
	defaultWrite     = 30 * time.Second
	defaultIdle      = 60 * time.Second
	handshakeTimeout = 10 * time.Second // the WebSocket upgrade's answer
)

// DefaultConnLimits are the relay's limits: 256 connections per address,
// and in total what the descriptor limit leaves after a reserve (at most
// 100,000).
func DefaultConnLimits() ConnLimits {
	return ConnLimits{PerAddr: defaultPerAddr, Total: totalConns(), ReadHeader: defaultReadHead,
		Read: defaultRead, Write: defaultWrite, Idle: defaultIdle}
}

// totalConns is the total cap the descriptor limit allows.
func totalConns() int {
	n := openFileLimit() - reservedFDs
	return max(minTotalConns, min(n, maxTotalConns))
}

// Listen wraps l with the connection caps (see internal/connlimit).
func (lim ConnLimits) Listen(l net.Listener) net.Listener {
	return connlimit.Listen(l, lim.PerAddr, lim.Total)
}

// NewHTTPServer is the relay's HTTP server with lim's timeouts; serve it on
// a listener from lim.Listen. An upgraded WebSocket leaves these timeouts
// behind: the upgrade's answer has its own (10 s), and a socket is closed
// when nothing arrives for 75 s, the first frame included.
func NewHTTPServer(h http.Handler, lim ConnLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: lim.ReadHeader, ReadTimeout: lim.Read,
		WriteTimeout: lim.Write, IdleTimeout: lim.Idle, MaxHeaderBytes: 16 << 10}
}
