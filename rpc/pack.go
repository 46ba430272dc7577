package rpc

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
)

const (
	// packOver is the plaintext size above which a reply is packed.
	packOver = 1 << 10
	// PackedPageMax bounds what a packed frame may inflate to.
	PackedPageMax = 2_000_000
)

var errPacked = errors.New("rpc: packed frame too large or malformed")

// pack returns a reply's or event's plaintext as sent to a peer that opens
// packed frames: "z" + raw deflate (level 6) when the JSON is over 1 KB and
// that is smaller, else the JSON itself (which starts with '{', so the two
// are told apart).
func pack(plain []byte) []byte {
	if len(plain) <= packOver {
		return plain
	}
	var b bytes.Buffer
	b.WriteByte('z')
	w, _ := flate.NewWriter(&b, 6)
	_, _ = w.Write(plain)
	_ = w.Close()
	if b.Len() >= len(plain) {
		return plain
	}
	return b.Bytes()
}

// Unpack returns the JSON of a frame that may be packed, inflating at most
// PackedPageMax bytes.
func Unpack(frame []byte) ([]byte, error) {
	if len(frame) == 0 {
		return nil, errPacked
	}
	if frame[0] != 'z' {
		return frame, nil
	}
	r := flate.NewReader(bytes.NewReader(frame[1:]))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, PackedPageMax+1))
	if err != nil || len(out) > PackedPageMax {
		return nil, errPacked
	}
	return out, nil
}
