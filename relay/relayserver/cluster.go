package relayserver

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatehouse/gatehouse/relay"
)

// Several relay nodes share one NATS and one PostgreSQL: the database holds
// accounts, devices and the counts behind per-account limits; NATS carries
// frames and presence between the nodes.
//
// Routing is by a subject per device, <prefix>.dev.<hex account>.<hex
// device>, subscribed by the node that holds the device's socket, and only
// while it does. NATS sends a message only where there is interest, so a
// frame crosses to the one node that holds its target and to no other (a
// subject per account would reach every node holding any device of the
// account). A node's subscriptions are exactly its sockets; each delivers
// into one of a few channels shared by all of them (nats.go ChanSubscribe),
// so a subscription costs no goroutine, and an idle socket on a node of a
// cluster measured 0.7-0.9 KiB more than on one node (BENCHMARKS.md). A device's subscription always lands in the same
// channel, read by one goroutine, so its frames keep their order.
//
// Presence is shared on <prefix>.nodes: each node announces the sockets
// that join and leave it, a heartbeat every BeatEvery, and its whole list
// when another node says hello (at start, after a NATS reconnect, or when a
// node it had given up on is heard again). A node not heard for DeadAfter
// is taken as gone and its devices as offline; they come back when they
// reconnect elsewhere. Frames stay opaque: a node copies the forwarded
// frame it built (relay.AppendForward) into the message and the receiving
// node copies it out to the socket, never decoding the body.
//
// The newer socket wins across nodes as on one: a node that takes a
// device's socket tells the device's subject to close every other socket of
// it with relay.CloseReplaced. Removing a device or an account closes its
// sockets on every node through the same subject, and each node also checks
// its sockets against the database (the device's gen) after a NATS
// reconnect and every RecheckEvery, a wall that holds even if a message was
// lost while a node was cut off.
//
// Messages between nodes carry a protocol version, so that nodes can be
// upgraded one at a time. Every node event says the version its sender
// speaks (clusterProtocol, the "v" field; an event without one is from a
// node before the field, which spoke version 1). Within the scheme a newer
// version only adds: a new field in an event (encoding/json ignores one it
// does not know), a new event op or a new device-message op (a node drops
// an op it does not know). A node learns each peer's version from its
// events, and sends something version N added only while every node it
// hears speaks N (clusterVersion). So while old and new nodes run side by
// side the new ones speak the old version, and the cluster moves to the new
// one when the last old node has gone. A change older nodes could not
// ignore needs a new subject prefix (Cluster.Prefix), not a version.

// Cluster joins a relay to other nodes.
type Cluster struct {
	// NATS is the connection to the cluster's NATS (DialNATS: it must not
	// echo this node's own messages back to it).
	NATS *nats.Conn
	// Prefix starts every subject (default "gatehouse.relay"); relays that
	// share a NATS but not their accounts use different ones.
	Prefix string
	// BeatEvery is the heartbeat (1 s); a node unheard for DeadAfter
	// (3 beats) is gone.
	BeatEvery, DeadAfter time.Duration
	// RecheckEvery is how often every socket's device is checked against
	// the database (1 minute).
	RecheckEvery time.Duration
}

// DialNATS connects to the NATS servers in urls (comma-separated, as
// nats.go takes them, user and password in the URL if any) for a relay
// node named node; opts add credentials and TLS (nats.UserCredentials,
// nats.RootCAs, nats.ClientCert). It reconnects forever: a node without
// NATS serves its own sockets and says it is not ready (/readyz).
func DialNATS(urls, node string, opts ...nats.Option) (*nats.Conn, error) {
	base := []nats.Option{nats.Name("gatehouse relay " + node), nats.NoEcho(), nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second), nats.ReconnectJitter(500*time.Millisecond, time.Second)}
	nc, err := nats.Connect(urls, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	if max := nc.MaxPayload(); max < minNATSPayload {
		nc.Close()
		return nil, fmt.Errorf("the NATS server takes messages of at most %d bytes; a relay frame needs %d (set max_payload to at least 1MB)", max, minNATSPayload)
	}
	return nc, nil
}

// minNATSPayload is the largest message a node sends: a whole frame with
// its routing prefix, or a snapshot chunk.
const minNATSPayload = relay.MaxFrame + 1024

// clusterProtocol is the version of the messages between nodes that this
// node speaks; see the comment above Cluster for what a version may change.
// Version 1: the events and device messages below.
const clusterProtocol = 1

// Cluster limits.
const (
	clusterShards   = 2   // channels (and goroutines) that deliver device messages
	shardDepth      = 256 // messages waiting in one; past it NATS drops (slow consumer)
	snapshotChunk   = 500 // sockets in one snapshot message
	resyncBeats     = 30  // a node sends its whole list every 30 beats
	defaultBeat     = time.Second
	defaultRecheck  = time.Minute
	defaultPrefix   = "gatehouse.relay"
	readyWait       = time.Second // NATS's answer to /readyz's round trip
	maxEventBytes   = 1 << 20     // a node event, before it is decoded
	opForward       = 'F'         // a forwarded frame: from, ref, then the frame
	opRelayFrame    = 'R'         // a frame the relay made (undeliverable), as is
	opClose         = 'C'         // close the device's socket, but the one named
	eventHello      = "hello"     // a node (re)joined: send it your sockets
	eventBeat       = "beat"
	eventBye        = "bye"
	eventJoin       = "join"
	eventLeave      = "leave"
	eventChanged    = "changed" // an account's device list changed
	eventSnapshot   = "snapshot"
	nodeEventsTopic = "nodes"
)

// nodeEvent is what nodes tell each other on <prefix>.nodes.
type nodeEvent struct {
	Op      string      `json:"op"`
	Inst    string      `json:"inst"` // the sending process: node name and a random part
	Account string      `json:"a,omitempty"`
	Device  string      `json:"d,omitempty"`
	Conn    string      `json:"c,omitempty"`
	Sockets [][3]string `json:"s,omitempty"` // snapshot: account, device, conn
	Gen     int64       `json:"g,omitempty"` // snapshot: which one
	Last    bool        `json:"l,omitempty"` // snapshot: its last chunk
	V       int         `json:"v,omitempty"` // the sender's clusterProtocol; absent: 1
}

// protocol is the version the event's sender speaks.
func (e *nodeEvent) protocol() int {
	return max(e.V, 1)
}

// remote is where a device's socket is on another node, and the snapshot
// of that node it was last confirmed by.
type remote struct {
	inst, conn string
	gen        int64
}

type devKey struct{ account, device string }

// natsHub is a hub over NATS: this node's sockets in a localHub, the other
// nodes' reached through their devices' subjects.
type natsHub struct {
	here   *localHub
	s      *Server
	nc     *nats.Conn
	o      Cluster
	inst   string
	seed   maphash.Seed
	shards [clusterShards]chan *nats.Msg

	mu     sync.Mutex
	subs   map[devKey]*nats.Subscription
	view   map[string]map[string]remote // account -> device -> where, other nodes only
	nodes  map[string]time.Time         // instance -> last heard
	protos map[string]int               // instance -> the protocol it speaks
	gens   map[string]int64             // instance -> its latest snapshot
	gen    int64                        // this node's latest snapshot
	done   bool                         // closed: no more subscriptions

	events *nats.Subscription
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

func newNATSHub(s *Server, o Cluster) (*natsHub, error) {
	if o.NATS == nil {
		return nil, errors.New("relay: the cluster has no NATS connection")
	}
	if !o.NATS.Opts.NoEcho {
		return nil, errors.New("relay: the NATS connection must not echo (use DialNATS)")
	}
	if o.Prefix == "" {
		o.Prefix = defaultPrefix
	}
	if o.BeatEvery <= 0 {
		o.BeatEvery = defaultBeat
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = 3 * o.BeatEvery
	}
	if o.RecheckEvery <= 0 {
		o.RecheckEvery = defaultRecheck
	}
	h := &natsHub{here: newLocalHub(), s: s, nc: o.NATS, o: o, inst: s.node + "/" + randomText(5), seed: maphash.MakeSeed(),
		subs: map[devKey]*nats.Subscription{}, view: map[string]map[string]remote{}, nodes: map[string]time.Time{}, protos: map[string]int{}, gens: map[string]int64{}, stop: make(chan struct{})}
	for i := range h.shards {
		h.shards[i] = make(chan *nats.Msg, shardDepth)
		h.wg.Go(func() { h.deliverLoop(h.shards[i]) })
	}
	var err error
	h.events, err = h.nc.Subscribe(h.subject(nodeEventsTopic), h.onEvent)
	if err != nil {
		h.close()
		return nil, fmt.Errorf("relay: nats: %w", err)
	}
	_ = h.events.SetPendingLimits(4096, 64<<20)
	h.nc.SetReconnectHandler(func(*nats.Conn) {
		s.log.Info("NATS reconnected: announcing this node's sockets and checking them against the database")
		h.hello()
		go s.recheck()
	})
	h.nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) {
		s.log.Warn("NATS disconnected: other nodes' devices are unreachable until it is back", "err", err)
	})
	h.nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrSlowConsumer) {
			s.m.dropped.WithLabelValues("cluster_slow").Inc()
		}
		s.log.Debug("NATS", "err", err)
	})
	h.hello()
	h.wg.Go(h.beat)
	return h, nil
}

func (h *natsHub) subject(parts ...string) string {
	return h.o.Prefix + "." + strings.Join(parts, ".")
}

// devSubject is a device's subject: ids are hex so that no id can carry
// NATS's separators or wildcards ('.', '*', '>').
func (h *natsHub) devSubject(account, device string) string {
	return h.subject("dev", hex.EncodeToString([]byte(account)), hex.EncodeToString([]byte(device)))
}

// parseDevSubject is devSubject's inverse.
func (h *natsHub) parseDevSubject(subj string) (account, device string, ok bool) {
	rest, found := strings.CutPrefix(subj, h.o.Prefix+".dev.")
	a, d, found2 := strings.Cut(rest, ".")
	ab, err1 := hex.DecodeString(a)
	db, err2 := hex.DecodeString(d)
	if !found || !found2 || err1 != nil || err2 != nil {
		return "", "", false
	}
	return string(ab), string(db), true
}

// ready asks NATS for a round trip: a connection that looks up while the
// server hangs (stopped, or its network silent) is not ready either (found
// by the red team: kill -STOP of nats-server left /readyz at 200).
func (h *natsHub) ready() error {
	if st := h.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("NATS is %s", strings.ToLower(st.String()))
	}
	if err := h.nc.FlushTimeout(readyWait); err != nil {
		return fmt.Errorf("NATS did not answer within %v: %w", readyWait, err)
	}
	return nil
}

func (h *natsHub) join(c *conn) *conn {
	h.mu.Lock()
	defer h.mu.Unlock() // events go out in the order of the changes (snapshot)
	old := h.here.join(c)
	key := devKey{c.account, c.device}
	if h.subs[key] == nil && !h.done {
		shard := maphash.String(h.seed, c.account+"\x00"+c.device) % clusterShards
		sub, err := h.nc.ChanSubscribe(h.devSubject(c.account, c.device), h.shards[shard])
		if err != nil {
			h.s.log.Error("NATS subscribe", "err", err)
		} else { // its pending limit is the shard's channel: full, NATS drops (slow consumer)
			h.subs[key] = sub
		}
	}
	h.publishDev(c.account, c.device, closeMessage(relay.CloseReplaced, c.id, "replaced by a newer socket"))
	h.event(nodeEvent{Op: eventJoin, Account: c.account, Device: c.device, Conn: c.id})
	return old
}

func (h *natsHub) leave(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	left := h.here.leave(c)
	key := devKey{c.account, c.device}
	if sub := h.subs[key]; left && sub != nil {
		_ = sub.Unsubscribe()
		delete(h.subs, key)
	}
	if left {
		h.event(nodeEvent{Op: eventLeave, Account: c.account, Device: c.device, Conn: c.id})
	}
	return left
}

func (h *natsHub) online(account, device string) bool {
	return h.here.local(account, device) != nil || h.elsewhere(account, device)
}

// elsewhere reports whether another node has the device's socket.
func (h *natsHub) elsewhere(account, device string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.view[account][device]
	return ok
}

func (h *natsHub) sockets(account string) []*conn { return h.here.sockets(account) }
func (h *natsHub) all() []*conn                   { return h.here.all() }

func (h *natsHub) deliver(from *conn, to, ref string, frame *[]byte) delivery {
	if t := h.here.local(from.account, to); t != nil {
		if !t.send(frame) {
			return queueFull
		}
		return delivered
	}
	defer putFrame(frame)
	if !h.elsewhere(from.account, to) {
		return offline
	}
	msg := getFrame()
	defer putFrame(msg)
	*msg = append(*msg, opForward, byte(len(from.device)))
	*msg = append(*msg, from.device...)
	*msg = append(*msg, byte(len(ref)))
	*msg = append(*msg, ref...)
	*msg = append(*msg, *frame...)
	if !h.publish(h.devSubject(from.account, to), *msg) {
		return offline
	}
	return delivered
}

func (h *natsHub) closeDevice(account, device string, code int, reason string) {
	h.here.closeDevice(account, device, code, reason)
	h.publishDev(account, device, closeMessage(code, "", reason))
}

func (h *natsHub) changed(account string) {
	h.event(nodeEvent{Op: eventChanged, Account: account})
}

// close says goodbye (the other nodes forget this one's sockets at once)
// and leaves NATS after what is queued has gone out.
func (h *natsHub) close() {
	h.once.Do(func() {
		close(h.stop)
		h.event(nodeEvent{Op: eventBye})
		if h.events != nil {
			_ = h.events.Unsubscribe()
		}
		_ = h.nc.Flush()
		h.mu.Lock()
		h.done = true
		for k, sub := range h.subs {
			_ = sub.Unsubscribe()
			delete(h.subs, k)
		}
		h.mu.Unlock()
		for _, ch := range h.shards {
			close(ch)
		}
		h.wg.Wait()
	})
}

// closeMessage asks the nodes holding a device's socket to close it with
// code, unless it is the socket named except.
func closeMessage(code int, except, reason string) []byte {
	b := []byte{opClose, 0, 0, byte(len(except))}
	binary.BigEndian.PutUint16(b[1:3], uint16(code))
	b = append(b, except...)
	return append(b, reason...)
}

func (h *natsHub) publishDev(account, device string, data []byte) {
	h.publish(h.devSubject(account, device), data)
}

func (h *natsHub) publish(subj string, data []byte) bool {
	if err := h.nc.Publish(subj, data); err != nil {
		h.s.log.Debug("NATS publish", "err", err)
		return false
	}
	h.s.m.cluster.WithLabelValues("out").Inc()
	return true
}

// deliverLoop hands the device messages of one shard to this node's
// sockets, in the order they came.
func (h *natsHub) deliverLoop(ch chan *nats.Msg) {
	for m := range ch {
		h.s.m.cluster.WithLabelValues("in").Inc()
		h.onDeviceMessage(m)
	}
}

func (h *natsHub) onDeviceMessage(m *nats.Msg) {
	account, device, ok := h.parseDevSubject(m.Subject)
	if !ok || len(m.Data) == 0 {
		return
	}
	data := m.Data[1:]
	switch m.Data[0] {
	case opForward:
		from, rest, ok1 := cutShort(data)
		ref, frame, ok2 := cutShort(rest)
		if ok1 && ok2 {
			h.forwarded(account, device, string(from), string(ref), frame)
		}
	case opRelayFrame:
		if c := h.here.local(account, device); c != nil {
			out := getFrame()
			*out = append(*out, data...)
			c.send(out)
		}
	case opClose:
		if len(data) < 3 {
			return
		}
		code := int(binary.BigEndian.Uint16(data[:2]))
		except, reason, ok := cutShort(data[2:])
		if c := h.here.local(account, device); ok && c != nil && c.id != string(except) {
			c.close(code, string(reason))
		}
	default: // an op a newer node added; it sends one only to nodes that speak it
		h.s.log.Debug("a cluster message of an unknown op was dropped", "op", m.Data[0])
	}
}

// cutShort splits a byte-counted field off b.
func cutShort(b []byte) (field, rest []byte, ok bool) {
	if len(b) < 1 || len(b) < 1+int(b[0]) {
		return nil, nil, false
	}
	n := int(b[0])
	return b[1 : 1+n], b[1+n:], true
}

// forwarded queues a frame another node forwarded to a socket here. When
// the socket has gone, or reads too slowly, the sender is told, as it would
// be on one node; when it has gone to a third node, that node has the frame
// too (it subscribed first) and nothing is said.
func (h *natsHub) forwarded(account, device, from, ref string, frame []byte) {
	c := h.here.local(account, device)
	if c == nil || c.isClosed() {
		if c == nil && !h.elsewhere(account, device) {
			h.s.m.undeliverble.WithLabelValues(relay.ReasonOffline).Inc()
			h.tell(account, from, relay.NewUndeliverable(device, ref, relay.ReasonOffline))
		}
		return
	}
	out := getFrame()
	*out = append(*out, frame...)
	if !c.send(out) {
		h.s.m.undeliverble.WithLabelValues(relay.ReasonRate).Inc()
		h.tell(account, from, relay.NewUndeliverable(device, ref, relay.ReasonRate))
	}
}

// tell sends a relay-made frame to a device, on this node or another.
func (h *natsHub) tell(account, device string, v any) {
	if c := h.here.local(account, device); c != nil {
		c.sendJSON(v)
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		h.publishDev(account, device, append([]byte{opRelayFrame}, b...))
	}
}

func (h *natsHub) event(e nodeEvent) {
	e.Inst, e.V = h.inst, clusterProtocol
	b, err := json.Marshal(e)
	if err == nil {
		h.publish(h.subject(nodeEventsTopic), b)
	}
}

// hello announces this node and its sockets; every other node answers with
// its own.
func (h *natsHub) hello() {
	h.snapshot()
	h.event(nodeEvent{Op: eventHello})
}

// snapshot announces every socket of this node, in chunks; the other nodes
// drop what they had of this node that the snapshot no longer has (a leave
// they missed). It holds h.mu, as join and leave do while they announce,
// so that a join is either in the snapshot or announced after it.
func (h *natsHub) snapshot() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	var list [][3]string
	for _, c := range h.here.all() {
		list = append(list, [3]string{c.account, c.device, c.id})
		if len(list) == snapshotChunk {
			h.event(nodeEvent{Op: eventSnapshot, Sockets: list, Gen: h.gen})
			list = nil
		}
	}
	h.event(nodeEvent{Op: eventSnapshot, Sockets: list, Gen: h.gen, Last: true})
}

// beat sends the heartbeat and gives up on nodes not heard for DeadAfter.
func (h *natsHub) beat() {
	t := time.NewTicker(h.o.BeatEvery)
	defer t.Stop()
	recheck := time.NewTicker(h.o.RecheckEvery)
	defer recheck.Stop()
	for beats := 1; ; beats++ {
		select {
		case <-h.stop:
			return
		case <-recheck.C:
			h.s.recheck()
		case now := <-t.C:
			if beats%resyncBeats == 0 {
				h.snapshot() // heals a view that lost an event (a NATS slow consumer)
			}
			h.event(nodeEvent{Op: eventBeat})
			h.mu.Lock()
			var gone []string
			for inst, heard := range h.nodes {
				if now.Sub(heard) > h.o.DeadAfter {
					gone = append(gone, inst)
				}
			}
			h.mu.Unlock()
			for _, inst := range gone {
				h.s.log.Warn("a relay node went silent: its devices are offline until they reconnect", "peer", inst)
				h.forget(inst)
			}
		}
	}
}

// clusterVersion is the protocol every node this one hears speaks: the
// lowest of its own and its live peers'. A message a later version added
// is sent only when this is at least that version.
func (h *natsHub) clusterVersion() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := clusterProtocol
	for _, p := range h.protos {
		v = min(v, p)
	}
	return v
}

// forget drops a node and the sockets it had.
func (h *natsHub) forget(inst string) {
	h.mu.Lock()
	delete(h.nodes, inst)
	delete(h.protos, inst)
	delete(h.gens, inst)
	touched := h.dropStale(inst, -1) // no snapshot is numbered -1: all of them
	h.s.m.nodes.Set(float64(len(h.nodes)))
	h.mu.Unlock()
	for _, a := range slices.Compact(slices.Sorted(slices.Values(touched))) {
		h.presence(a)
	}
}

// presence resends an account's presence to its sockets here, if any.
func (h *natsHub) presence(account string) {
	if h.here.hasAccount(account) {
		h.s.presenceSoon(account)
	}
}

// onEvent reads what another node says (one goroutine, in order).
func (h *natsHub) onEvent(m *nats.Msg) {
	var e nodeEvent
	if len(m.Data) > maxEventBytes || json.Unmarshal(m.Data, &e) != nil || e.Inst == "" || e.Inst == h.inst {
		return
	}
	if e.Op == eventBye {
		h.forget(e.Inst)
		return
	}
	h.mu.Lock()
	_, known := h.nodes[e.Inst]
	h.nodes[e.Inst] = time.Now()
	proto, was := e.protocol(), h.protos[e.Inst]
	h.protos[e.Inst] = proto
	h.s.m.nodes.Set(float64(len(h.nodes)))
	h.mu.Unlock()
	if proto != was && proto != clusterProtocol {
		h.s.log.Info("a relay node speaks another cluster protocol: the nodes use the lowest until every node is upgraded",
			"peer", e.Inst, "peerProtocol", proto, "protocol", clusterProtocol, "clusterProtocol", h.clusterVersion())
	}
	switch e.Op {
	case eventHello:
		h.snapshot()
		return
	case eventBeat:
		if !known { // a node given up on is back: ask for its sockets
			h.event(nodeEvent{Op: eventHello})
		}
		return
	case eventChanged:
		h.presence(e.Account)
		return
	}
	var touched []string
	h.mu.Lock()
	switch e.Op {
	case eventJoin:
		h.place(e.Account, e.Device, remote{e.Inst, e.Conn, h.gens[e.Inst]}, true)
		touched = append(touched, e.Account)
	case eventLeave:
		if r := h.view[e.Account][e.Device]; r.inst == e.Inst && r.conn == e.Conn {
			delete(h.view[e.Account], e.Device)
			if len(h.view[e.Account]) == 0 {
				delete(h.view, e.Account)
			}
			touched = append(touched, e.Account)
		}
	case eventSnapshot:
		h.gens[e.Inst] = e.Gen
		for _, s := range e.Sockets {
			if h.place(s[0], s[1], remote{e.Inst, s[2], e.Gen}, false) {
				touched = append(touched, s[0])
			}
		}
		if e.Last {
			touched = append(touched, h.dropStale(e.Inst, e.Gen)...)
		}
	}
	h.mu.Unlock()
	for _, a := range slices.Compact(slices.Sorted(slices.Values(touched))) {
		h.presence(a)
	}
}

// dropStale forgets the sockets of inst that its snapshot gen did not
// confirm. h.mu held.
func (h *natsHub) dropStale(inst string, gen int64) (touched []string) {
	for account, devs := range h.view {
		for d, r := range devs {
			if r.inst == inst && r.gen != gen {
				delete(devs, d)
				touched = append(touched, account)
			}
		}
		if len(devs) == 0 {
			delete(h.view, account)
		}
	}
	return touched
}

// place records a device's socket on another node. A snapshot (newer
// false) does not overwrite what another node announced since. h.mu held.
func (h *natsHub) place(account, device string, r remote, newer bool) bool {
	if !relay.ValidDeviceID(device) || account == "" {
		return false
	}
	devs := h.view[account]
	if devs == nil {
		devs = map[string]remote{}
		h.view[account] = devs
	}
	if cur, ok := devs[device]; ok && !newer && cur.inst != r.inst {
		return false
	}
	devs[device] = r
	return true
}

// nodeName is a node's default name: the host's.
func nodeName() string {
	if name, err := os.Hostname(); err == nil && name != "" {
		return name
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
