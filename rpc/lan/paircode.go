package lan

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/gatehouse/gatehouse/rpc"
)

// The pair code tells two pair requests apart, as Bluetooth's numeric
// comparison does: the device and the computer's terminal (and `gatehouse
// devices`) show the same six digits for one request, and the person allows
// only the request whose code matches the device in their hand. A second
// holder of the link (a local user who read it from a process's arguments,
// someone who photographed the QR code) gets a different code.
//
// Both sides compute it from what they already share, with no extra round
// trip: the link (its id and key) and the sealed hello exactly as it was
// sent. The hello carries the device's random nonce, so each request has
// its own code, and only a holder of the link key can compute it.
//
// Known limit: the sender of a hello chooses its nonce, so a thief who
// already knew the code the real device will show could grind a hello to
// match it; it cannot know that code before the real device sends its own
// hello, and only one request waits at a time. A comparison code is a check
// for the person, not a key exchange.

// PairCode is the code shown for the hello sealedHello sent through link
// (id, key): six digits as "123 456". web/src/api.js computes the same.
func PairCode(linkID string, key rpc.Key, sealedHello string) string {
	h := sha256.New()
	h.Write([]byte("gatehouse pair code v1\x00"))
	h.Write(key[:])
	h.Write([]byte(linkID))
	h.Write([]byte{0})
	h.Write([]byte(sealedHello))
	n := binary.BigEndian.Uint32(h.Sum(nil)) % 1_000_000
	return fmt.Sprintf("%03d %03d", n/1000, n%1000)
}
