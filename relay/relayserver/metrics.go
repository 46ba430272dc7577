package relayserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
