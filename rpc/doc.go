// Package rpc is gatehouse's request protocol and the host that answers
// it, for every transport (the LAN server in rpc/lan, the relay in
// relay/link, gatehouse do).
//
// A device's call is a Request {id, method, params, ts, nonce}, sealed
// end to end with XChaCha20-Poly1305 under a key both sides derive from
// their X25519 keys and ids (PairKey), with the sender and receiver bound
// in the additional data, so a body cannot be replayed to another peer or
// back to its sender. The host then walks every request the same way,
// single or batched:
//
//	open     host.go openRequest, seal.go Open: the frame opens under the
//	         pair key; envelope.go parseRequest checks its fields and sets
//	         aside params nested past MaxDepth (answered BAD_PARAMS later)
//	replay   host.go checkFresh, replay.go ReplayGuard: 60 s window, every
//	         nonce remembered while it could be accepted, one guard per
//	         device; stamped before the host started, stale or repeated is
//	         answered NOT_RUN, a full memory BUSY
//	admit    host.go newCall reads the Full-access switch once; admit reads
//	         the device's presence and grant once and holds them against the
//	         method's scope and switch (registry.go); a batch's calls
//	         (builtin.go) each pass the same admit with the batch's switch
//	lane     lanes.go, once.go: the device's lane, admit again as it starts
//	         (the grant checked then is the grant the handler gets), and the
//	         sendId memory for once-methods
//	handler  registry.go Register, validate.go decodeParams (a refusal names
//	         the parameter), rpc/methods
//	gate     gate/decide.go: the Read or Change gate, once per operation
//	runner   gate/runner.go run, through gate/spawn.go spawn: the one place
//	         git (and gh, gate/gh.go) starts; gate/failures.go
//	         turns git's usual failures into sentences that say what to do
//	reply    host.go respond/errorResponse: one Response, sealed (seal.go,
//	         pack.go); a refusal's cause (error chain, git's stderr) is
//	         logged there once with the request's id (HostOptions.Logger)
//
// A LAN event stream's opener (GET /rc/events) is a request naming
// EventsMethod and takes the same open and replay steps through
// transport.go OpenEvents, so a rule added to either holds for events too;
// it then opens the stream instead of reaching a handler. Through a relay a
// device subscribes with a call (subscribe), which walks as every call.
//
// Two waits meet a change, and they answer differently. The lane
// (lanes.go) is one device's: a small change queues behind that device's
// earlier ones in the ordered lane, one at a time in arrival order, and is
// answered NOT_RUN only after waiting 18 s (orderedWait; a background
// change waits its caller's wait less 2 s), so it never ran and may be sent
// again. The change lock (gate/stage.go Repo.lock, and Repo.Hold for a file
// saved from a device) is the checkout's, shared by every device and lane:
// a git change that finds another one still running on the same checkout
// (another device's, or this device's own from the lane beside it) never
// waits for it and is answered BUSY at once, "Another git change is still
// running on this checkout." So: the same device's changes in one lane
// queue (NOT_RUN past the wait); changes of the same checkout that run at
// once fail fast (BUSY); reads take neither the ordered lane nor the lock.
//
// Two protocols carry the same seal (frame.go). Protocol 1 puts
// base64(nonce || ciphertext) in a text frame; protocol 2 sends the binary
// frame 0x02 || nonce || ciphertext, without base64 (which cost more than
// the AEAD). A caller announces protocol 2 in its requests (Request.P);
// host.hello answers 2 only to such a request on a transport that carries
// binary frames (Device.WithFrames), and 1 to every other, whose frames
// stay exactly as before. Both seal the same bytes under the same
// additional data, so a frame turned from one form into the other opens
// to the same request, which the replay guard has seen: a downgrade by
// someone in the middle costs speed, never a guarantee.
//
// Refusals carry a sentence the device may read; the cause stays on the
// host.
//
// Guarantees: a request that does not open, is stale or repeated, names an
// unknown method, or asks above its grant never reaches a handler. Bounds
// are the constants that enforce them: MaxFrame for a sealed frame,
// PageBudget for a reply before packing, MaxBatch calls in a batch, MaxIDs
// in a list, MaxDepth levels of nesting in a request; lanes bound how many requests of a device run and wait at
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
