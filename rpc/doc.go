// Package rpc is gatehouse's request protocol and the host that answers
// it, for every transport (the LAN server in rpc/lan, the relay in
// relay/link, gatehouse do).
//
// A device's call is a Request {id, method, params, ts, nonce}, sealed
// end to end with XChaCha20-Poly1305 under a key both sides derive from
// their X25519 keys and ids (PairKey), with the sender and receiver bound
// in the additional data, so a body cannot be replayed to another peer or
// back to its sender. The host then walks every request the same way:
// open, replay check (ReplayGuard: 60 s window, every nonce remembered for
// as long as it could be accepted), who is calling (the transport's
// Device, the host's Grants bound to the key's fingerprint, the Full-access
// switch read once at admission), the method's scope and switch from the
// Registry, its lane, the sendId memory for once-methods, the handler
// (rpc/methods), and one sealed Response. Refusals carry a sentence the
// device may read; the cause stays on the host.
//
// Guarantees: a request that does not open, is stale or repeated, names an
// unknown method, or asks above its grant never reaches a handler. Bounds
// are the constants that enforce them: MaxFrame for a sealed frame,
// PageBudget for a reply before packing, MaxBatch calls in a batch, MaxIDs
// in a list; lanes bound how many requests of a device run and wait at
// once, and for how long; the sendId memory is bounded in entries, bytes
// and time.
//
// Known limits: this package holds no policy of its own: what a git or
// file operation may do is decided in gate and fsguard, which handlers
// call. Events (checkout.changed) are best effort: a device that is not
// connected misses them. A device's identity is what its transport proved
// (a pairing's key on the LAN, relay presence and a pinned key through a
// relay); the protocol adds no sign-in of its own.
package rpc
