// Package relayserver is the relay: it signs devices in, keeps accounts
// and devices in SQLite (or PostgreSQL), tells each account's devices who is there
// (presence), forwards sealed frames between them, and sends generic push
// notices. It never sees a body's plaintext: a frame is routed by its to
// and ref, and its body is copied through as the raw bytes that came
// (relay.ParseDeviceFrame, relay.AppendForward; for a binary frame,
// relay.ParseBinaryFrame and relay.AppendBinary, with the same rate, size
// and queue bounds, and written out as a binary message). Package relay
// holds the frame formats and the client.
//
// Sign-in is by invite code or by a GitHub token issued to the relay's own
// OAuth app (GitHubApp). A token is an HMAC-SHA256 over its claims, valid
// 30 days and only while its device row still exists with the same gen, so
// removing a device kills its tokens at once. A removed device's id (in any
// letter case) is never given to another key.
//
// Guarantees, each bounded before the work it guards:
//   - frames: at most relay.MaxFrame bytes, relay.MaxControl when not
//     addressed, 20 a second sustained per socket (burst 100); a socket's
//     send queue holds at most 4 frames' worth of bytes, every write has a
//     deadline, and a socket silent for 75 s is closed, so a slow reader
//     loses its own frames and never holds the sender or the relay;
//   - sign-ins: 10 a minute from one address (an IPv6 /64; behind a
//     proxy, the address the trusted proxy appended to its header, never
//     one the client wrote: clientaddr.go), GitHub sign-ins 300 a minute
//     in all; an invite is bounded per address only, so many addresses
//     cannot lock out a valid code; authenticated calls 30 a minute per
//     account; 10 devices per account; bodies bounded while streaming;
//   - connections: capped per address and in all, below the process's
//     descriptor limit (ConnLimits, NewHTTPServer);
//   - a request from a web page (an Origin header) is refused: the relay
//     serves no page; plain HTTP is served only on loopback;
//   - the data folder, token secret and database must be this user's and
//     not writable (or, for the secret and database, readable) by others
//     (CheckDataDir, LoadSecret, OpenStore);
//   - bodies never reach the log or the database.
//
// The sockets of an account meet in a hub, an interface: localHub keeps
// them in this process (one node, SQLite); natsHub (cluster.go) joins
// several nodes through NATS, a subject per device, with the accounts in
// one PostgreSQL (OpenPostgres) and the per-account limits counted there
// (Store.Hit). /healthz says the process serves, /readyz whether the node
// should get devices (not while it drains, nor while its database or NATS
// does not answer). The metrics are not on the API: MetricsHandler serves
// them on a listener of their own, behind a bearer token when given.
//
// Known limits: the relay sees metadata (ids, sizes, times) and can
// withhold or drop frames; push notices carry counts only; a frame in
// flight when a node or NATS dies is lost without an undeliverable; behind
// several proxies (Options.ProxyHops), a client that reaches an inner one
// directly chooses the address it is counted as.
package relayserver
