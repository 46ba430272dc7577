package relay

import "errors"

// Binary frames carry protocol 2's sealed bodies (rpc/frame.go) as
// WebSocket binary messages, so that neither the devices nor the relay
// base64 or scan a body: the relay reads three short fields and copies the
// body through. A binary frame is only ever an addressed, sealed frame;
// control frames stay JSON text.
//
//	byte 0    BinaryVersion (0x02)
//	byte 1    n, then n bytes: from (empty from a device; the relay fills it)
//	byte      n, then n bytes: to
//	byte      n, then n bytes: ref (empty in what the relay forwards)
//	the rest  the sealed body, at least one byte, never read by the relay
//
// The whole frame is bounded by MaxFrame (the socket's read limit), each
// field by its byte count, and to and ref by ValidDeviceID and ValidRef as
// in a text frame. A relay or client before binary frames drops a binary
// message unread; a relay that forwards them says so in presence
// (PresenceFrame.Frames), and a device sends one only then, to a host that
// said it reads them.

// BinaryVersion is a binary frame's first byte: never '{', so it is never
// taken for a text frame, nor a text frame for it.
const BinaryVersion = 0x02

// FramesBinary is PresenceFrame.Frames from a relay that forwards binary
// frames.
const FramesBinary = 2

var errBinary = errors.New("binary frame is malformed")

// BinaryFrame is a binary frame's fields; Body aliases the frame read.
type BinaryFrame struct {
	From, To, Ref string
	Body          []byte
}

// ParseBinaryFrame reads a binary frame strictly: the version, three
// counted fields inside the frame, and a body of at least one byte.
func ParseBinaryFrame(b []byte) (BinaryFrame, error) {
	var f BinaryFrame
	if len(b) > MaxFrame || len(b) < 1 || b[0] != BinaryVersion {
		return f, errBinary
	}
	rest := b[1:]
	var fields [3][]byte
	for i := range fields {
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
			return f, errBinary
		}
		fields[i], rest = rest[1:1+int(rest[0])], rest[1+int(rest[0]):]
	}
	if len(rest) == 0 {
		return f, errBinary
	}
	return BinaryFrame{From: string(fields[0]), To: string(fields[1]), Ref: string(fields[2]), Body: rest}, nil
}

// AppendBinary writes a binary frame; each of from, to and ref must be at
// most 255 bytes (device ids are at most MaxDeviceID, refs MaxRef).
func AppendBinary(buf []byte, from, to, ref string, body []byte) []byte {
	buf = append(buf, BinaryVersion, byte(len(from)))
	buf = append(buf, from...)
	buf = append(buf, byte(len(to)))
	buf = append(buf, to...)
	buf = append(buf, byte(len(ref)))
	buf = append(buf, ref...)
	return append(buf, body...)
}

// IsBinary reports whether a frame the relay or a client queued is a
// binary frame (written as a binary message) rather than JSON text.
func IsBinary(frame []byte) bool { return len(frame) > 0 && frame[0] == BinaryVersion }
