// Package relay is what a device and the relay server share, and the
// device's side of it: the frame format both read (frame.go), the account,
// device and token shapes the relay's API answers with, the reconnecting
// client (Client), the device's identity on disk (Identity: its X25519 key,
// its sign-in token, one per role so serve and call on one computer do not
// replace each other), and the host keys a device has pinned. The server
// itself is package relayserver; tailscale keeps derp and derpserver apart
// the same way.
//
// A relay forwards end-to-end sealed bodies between the devices of one
// account and tells each device who else is there (presence). It is trusted
// with routing only: the sealing, opening and replay checks are package
// rpc's, and access is the host's (grants bound to each device's key).
//
// Guarantees:
//   - a device's key is made once, kept 0600 in its state folder under an
//     flock, and never replaced; a sign-in that answers 409 (the id is
//     registered with another key) makes a new id instead;
//   - the client holds at most maxWaiting frames for the relay and refuses
//     more (ErrQueueFull); it pings, declares a silent socket dead, backs
//     off with jitter, waits a minute after a newer socket replaced it, and
//     signs out (ErrSignedOut) when the relay revokes it;
//   - a token with less than a week left is refreshed, on connect and while
//     connected;
//   - a host's key is pinned per relay and host id on first use
//     (CheckHostKey); a key that changes later is refused (HostKeyError),
//     and an unreadable pins file refuses rather than trusts;
//   - ParseDeviceFrame reads a device's frame without decoding its body,
//     within MaxFrame, MaxControl and MaxRef; ParseBinaryFrame reads a
//     binary frame (protocol 2, binary.go: three counted fields and the
//     body, no base64) strictly within MaxFrame, and the client sends one
//     only while the relay's presence says it forwards them.
//
// Known limits: presence is the relay's word. A relay (or whoever runs it)
// can withhold frames, drop a device from presence, or show a key of its
// own; pins and the host's fingerprint-bound grants stop the last, nothing
// here stops the first two. The relay sees who talks to whom, when, and how
// much.
package relay
