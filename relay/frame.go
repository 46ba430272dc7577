package relay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Frames are WebSocket text messages holding one JSON object. The relay
// reads only what it routes by (to, ref, kind) and copies the sealed body
// through as raw bytes: decoding and re-encoding a 64 KiB body costs ten
// times the AEAD that made it, and the relay has no business reading it.

// Limits on frames, from the spec.
const (
	MaxFrame       = 256 << 10 // bytes on the wire, one frame
	MaxControl     = 4 << 10   // a frame that is not addressed is at most this
	MaxRef         = 200       // bytes of a ref
	MaxNotifyCount = 1 << 20   // counts in a notify frame
)

var (
	errFrameSyntax = errors.New("frame is not a JSON object of strings")
	errFrameField  = errors.New("frame has an unknown or repeated field")
	errNotAddr     = errors.New("frame over 4 KiB is not addressed")
)

// DeviceFrame is what a device sent: either addressed (to, body, ref) or a
// control frame (kind and its own fields, parsed only when small).
type DeviceFrame struct {
	To, Ref string
	Kind    Kind   // KindSealed for an addressed frame
	Body    []byte // the raw JSON string, quotes included
}

// ParseDeviceFrame reads a device's frame without decoding its body. Only the
// top-level keys to, body, ref and kind are accepted as strings; a control
// frame's other fields (enabled, body as an object) are left for the control
// handler, which parses the (small) frame fully.
func ParseDeviceFrame(b []byte) (DeviceFrame, error) {
	ascii := printableASCII(b)
	if !ascii && !utf8.Valid(b) { // a text frame is UTF-8; a device must not get bytes its JSON reader would change
		return DeviceFrame{}, errFrameSyntax
	}
	return parseFrame(newScanner(b, ascii))
}

// parseFrame reads the frame s holds (see ParseDeviceFrame).
func parseFrame(s scanner) (DeviceFrame, error) {
	var f DeviceFrame
	b := s.b
	if !s.byte('{') {
		return f, errFrameSyntax
	}
	seen, unknown := 0, false
	for first := true; ; first = false {
		s.space()
		if s.peek() == '}' && first {
			s.i++
			break
		}
		key, ok := s.str()
		if !ok || !s.byte(':') {
			return f, errFrameSyntax
		}
		s.space()
		bit := fieldBit(key)
		if bit == 0 || seen&bit != 0 {
			if len(b) > MaxControl || seen&bit != 0 {
				return f, errFrameField
			}
			unknown = true
			if !s.skipValue() { // a control frame's own field: checked later
				return f, errFrameSyntax
			}
		} else {
			seen |= bit
			start := s.i
			val, ok := s.str()
			switch {
			case !ok && bit == 2 && len(b) <= MaxControl: // notify's body is an object
				s.i = start
				if !s.skipValue() {
					return f, errFrameSyntax
				}
			case !ok:
				return f, errFrameSyntax
			case bit == 1:
				f.To = string(val)
			case bit == 2:
				f.Body = b[start:s.i]
			case bit == 4:
				f.Ref = string(val)
			case bit == 8:
				f.Kind = Kind(val)
			}
		}
		s.space()
		if s.byte(',') {
			continue
		}
		if s.byte('}') {
			break
		}
		return f, errFrameSyntax
	}
	s.space()
	if s.i != len(b) {
		return f, errFrameSyntax
	}
	if len(b) > MaxControl && f.To == "" {
		return f, errNotAddr
	}
	if unknown && f.Kind == "" { // only control frames have fields of their own
		return f, errFrameField
	}
	return f, nil
}

// ValidRef reports whether ref can be a frame's ref: empty, or at most 200 printable ASCII bytes.
func ValidRef(ref string) bool {
	if len(ref) > MaxRef {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] < 0x21 || ref[i] > 0x7e {
			return false
		}
	}
	return true
}

// fieldBit numbers the routing fields, for the repeated-field check.
func fieldBit(key []byte) int {
	switch string(key) {
	case "to":
		return 1
	case "body":
		return 2
	case "ref":
		return 4
	case "kind":
		return 8
	}
	return 0
}

// AppendForward writes {"from":from,"to":to,"body":body} with the body's
// raw JSON string copied as is. from and to are device ids (letters,
// digits, '.', '_', '-'), which need no escaping.
func AppendForward(buf []byte, from, to string, body []byte) []byte {
	buf = append(buf, `{"from":"`...)
	buf = append(buf, from...)
	buf = append(buf, `","to":"`...)
	buf = append(buf, to...)
	buf = append(buf, `","body":`...)
	buf = append(buf, body...)
	return append(buf, '}')
}

// scanner walks a JSON text without building values.
type scanner struct {
	b []byte
	i int

	// ascii: b is printable ASCII only (no control byte, nothing above
	// 0x7f), so only a quote or a backslash ends a run of string bytes,
	// and both are found with bytes.IndexByte (vector instructions, about
	// ten times the word-at-a-time scan on a 64 KiB body). quote is the
	// index of the next quote at or after i (len(b): none), kept so that
	// a string of many escapes is still read once, not once per escape.
	ascii bool
	quote int
}

func newScanner(b []byte, ascii bool) scanner { return scanner{b: b, ascii: ascii, quote: -1} }

// runEnd returns how far from i the plain string bytes run: the index,
// relative to i, of the next quote, backslash or control byte; -1 if none.
func (s *scanner) runEnd() int {
	if !s.ascii {
		return special(s.b[s.i:])
	}
	if s.quote < s.i {
		s.quote = len(s.b)
		if q := bytes.IndexByte(s.b[s.i:], '"'); q >= 0 {
			s.quote = s.i + q
		}
	}
	if k := bytes.IndexByte(s.b[s.i:s.quote], '\\'); k >= 0 {
		return k
	}
	if s.quote == len(s.b) {
		return -1
	}
	return s.quote - s.i
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) byte(c byte) bool {
	s.space()
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// str reads a JSON string and returns its contents. A string holding an
// escape is decoded with strconv (routing fields are short; a body is
// never decoded, only its extent found).
func (s *scanner) str() ([]byte, bool) {
	s.space()
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i
	s.i++
	escaped := false
	for {
		j := s.runEnd()
		if j < 0 {
			return nil, false
		}
		s.i += j
		if s.b[s.i] < 0x20 {
			return nil, false // a control byte must be escaped in JSON
		}
		if s.b[s.i] == '"' {
			s.i++
			break
		}
		escaped = true
		if s.i+1 >= len(s.b) {
			return nil, false
		}
		switch s.b[s.i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.i += 2
		case 'u':
			if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
				return nil, false
			}
			s.i += 6
		default:
			return nil, false // not an escape JSON knows: the device's reader would refuse the frame
		}
	}
	raw := s.b[start:s.i]
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	if len(raw) > MaxControl {
		return raw, true // a long escaped string is only ever a body: not decoded
	}
	u, err := strconv.Unquote(string(raw))
	if err != nil {
		return nil, false
	}
	return []byte(u), true
}

// skipValue skips one JSON value of a small frame (true, false, null, a
// number, a string, or an object or array of those, at most 8 deep).
func (s *scanner) skipValue() bool { return s.skip(0) }

func (s *scanner) skip(depth int) bool {
	if depth > 8 {
		return false
	}
	s.space()
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		s.space()
		if s.byte(end) {
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.str(); !ok || !s.byte(':') {
					return false
				}
			}
			if !s.skip(depth + 1) {
				return false
			}
			if s.byte(',') {
				continue
			}
			return s.byte(end)
		}
	default:
		j := s.i
		for j < len(s.b) && bytes.IndexByte([]byte("-+.0123456789eEtruefalsn"), s.b[j]) >= 0 {
			j++
		}
		if j == s.i {
			return false
		}
		s.i = j
		return true
	}
}

// printableASCII reports whether every byte of b is between 0x20 and 0x7f:
// a sealed frame's base64 body always is, and then b is UTF-8 and holds no
// control byte without a second look. Thirty-two bytes at a time: a byte
// below 0x20 borrows into its high bit when 0x20 is subtracted, a byte
// above 0x7f has it set already (and a borrow into the next byte only ever
// follows a byte that is itself caught).
func printableASCII(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	odd := func(w uint64) uint64 { return (w - ones*0x20) | w }
	for len(b) >= 32 {
		w0, w1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		w2, w3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		if (odd(w0)|odd(w1)|odd(w2)|odd(w3))&highs != 0 {
			return false
		}
		b = b[32:]
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7f {
			return false
		}
	}
	return true
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// special returns the index of the first byte in b that ends a run of plain
// string bytes: a quote, a backslash or a control byte; -1 if none. It
// looks at eight bytes at a time (a body is up to 256 KiB of base64, and
// this is the relay's only pass over it besides the UTF-8 check and the
// copy).
func special(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ (ones * '"')
		bs := w ^ (ones * '\\')
		// A byte of x is zero iff the high bit of (x - 0x01) &^ x is set;
		// a byte of w is below 0x20 iff the high bit of (w - 0x20) &^ w is.
		if ((q-ones)&^q|(bs-ones)&^bs|(w-ones*0x20)&^w)&highs != 0 {
			break // one of the eight; find it below
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return -1
}
