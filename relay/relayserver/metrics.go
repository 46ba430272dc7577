package relayserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
)

// The metrics are never on the API: they name the node and count sockets,
// sign-in failures and frames, which is for the operator, and the API is
// whoever reaches the relay (found by a black-box attack: /metrics answered
// anyone on the internet). They are served by MetricsHandler on a listener
// of their own, behind a bearer token when one is given.

// Bounds of the metrics listener: Prometheus scrapes one request at a time
// per target, so a few are plenty, and more only cost the process.
const (
	metricsConns    = 16
	metricsInFlight = 4
	minMetricsToken = 32 // 16 random bytes in hex; there is no limit on guesses
	maxMetricsToken = 4096
)

// metrics are what the relay counts, on its own registry (never the
// global one: two relays in one test process must not collide).
type metrics struct {
	reg          *prometheus.Registry
	connections  prometheus.Gauge
	frames       *prometheus.CounterVec // by kind: forwarded, control, ping
	bytes        *prometheus.CounterVec // by direction: in, out
	dropped      *prometheus.CounterVec // by reason
	undeliverble *prometheus.CounterVec // by reason: offline, rate
	rateLimited  *prometheus.CounterVec // by what: frames, auth, api
	authFailures *prometheus.CounterVec // by provider and reason
	queueTime    prometheus.Histogram
	cluster      *prometheus.CounterVec // NATS messages, by direction
	nodes        prometheus.Gauge       // other nodes heard from
}

// newMetrics makes the relay's metrics, each labelled with the node's name
// (node), so that one Prometheus tells the nodes of a cluster apart.
func newMetrics(node string) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gatehouse_relay_connections",
			Help: "Open device sockets."}),
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_frames_total",
			Help: "Frames received from devices, by kind (forwarded, control, ping)."}, []string{"kind"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_bytes_total",
			Help: "Frame bytes, by direction (in from devices, out to devices)."}, []string{"direction"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_dropped_total",
			Help: "Frames dropped, by reason (bad_frame, queue_full, write_failed, closed)."}, []string{"reason"}),
		undeliverble: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_undeliverable_total",
			Help: "Frames answered undeliverable, by reason (offline, rate)."}, []string{"reason"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_rate_limited_total",
			Help: "Requests and frames refused by a rate limit, by what (frames, auth, api)."}, []string{"what"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_auth_failures_total",
			Help: "Refused sign-ins and tokens, by provider (invite, github, token) and reason."}, []string{"provider", "reason"}),
		queueTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gatehouse_relay_queue_seconds",
			Help:    "Time from a frame entering a socket's send queue to being written.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		cluster: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_relay_cluster_messages_total",
			Help: "Messages to and from the other nodes through NATS, by direction (in, out)."}, []string{"direction"}),
		nodes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gatehouse_relay_cluster_nodes",
			Help: "Other relay nodes this one hears from."}),
	}
	prometheus.WrapRegistererWith(prometheus.Labels{"node": node}, m.reg).MustRegister(
		m.connections, m.frames, m.bytes, m.dropped, m.undeliverble, m.rateLimited, m.authFailures, m.queueTime,
		m.cluster, m.nodes, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// MetricsHandler serves the relay's Prometheus metrics at GET /metrics
// and nothing else (404). With a token (LoadMetricsToken), a request must
// carry "Authorization: Bearer TOKEN", else it is answered 401; the token
// is compared in constant time, its length included (both sides are
// hashed first). Serve it on its own listener (MetricsConnLimits), never
// beside the API.
func (s *Server) MetricsHandler(token string) http.Handler {
	h := promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: metricsInFlight})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", requireBearer(token, h))
	return mux
}

// requireBearer passes on only requests bearing token (any, when token is
// empty).
func requireBearer(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		unsafeToken, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(unsafeToken))
		if !found || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="relay metrics"`)
			http.Error(w, "a bearer token is needed", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MetricsConnLimits bound the metrics listener: a few connections, with
// the API's timeouts.
func MetricsConnLimits() ConnLimits {
	return ConnLimits{Total: metricsConns, ReadHeader: defaultReadHead, Read: defaultReadHead,
		Write: defaultWrite, Idle: time.Minute}
}

// LoadMetricsToken reads the metrics listener's bearer token from path:
// a regular file of this user that no other user can read or write (the
// same rule as the token secret's), holding 32 to 4096 visible ASCII
// characters (an HTTP header carries it; a trailing newline is dropped).
func LoadMetricsToken(path string) (string, error) {
	if err := checkOwnFile(path); err != nil {
		return "", err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("relay: metrics token: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("relay: other users can read or write %s (mode %o), so it may be known; chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := atomicfile.ReadBounded(path, maxMetricsToken+2)
	if err != nil {
		return "", fmt.Errorf("relay: metrics token: %w", err)
	}
	token := strings.TrimRight(string(data), "\r\n")
	if len(token) < minMetricsToken || len(token) > maxMetricsToken {
		return "", fmt.Errorf("relay: the metrics token in %s is %d bytes; %d to %d are needed (openssl rand -hex 32)", path, len(token), minMetricsToken, maxMetricsToken)
	}
	if strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", fmt.Errorf("relay: the metrics token in %s holds a space, a control character or non-ASCII; an HTTP header cannot carry it", path)
	}
	return token, nil
}
