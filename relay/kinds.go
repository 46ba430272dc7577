package relay

import (
	"encoding/json"
	"errors"
)

// Kind is a frame's "kind": what it is and which one handler reads it. A
// sealed body between devices has none (KindSealed); every other frame is
// one of the kinds below, made by one side and read by the other through
// the struct of its kind. The relay reads no other kind; a client ignores
// one it does not know (a newer relay may add some).
type Kind string

// Frame kinds, each with its struct and direction.
const (
	// KindSealed: a sealed body, addressed by a device {to, body, ref}
	// and forwarded by the relay {from, to, body}. The relay never opens
	// the body.
	KindSealed Kind = ""
	// KindHost, device to relay: this socket serves (HostFrame).
	KindHost Kind = "host"
	// KindNotify, device to relay: ask for a push notice (NotifyFrame).
	KindNotify Kind = "notify"
	// KindPresence, relay to device: the account's devices (PresenceFrame).
	KindPresence Kind = "presence"
	// KindUndeliverable, relay to device: a sealed frame did not reach its
	// device (UndeliverableFrame).
	KindUndeliverable Kind = "undeliverable"
	// KindError, relay to device: a frame was refused (ErrorFrame).
	KindError Kind = "error"
)

// Why a sealed frame was undeliverable.
const (
	ReasonOffline = "offline" // the device has no socket
	ReasonRate    = "rate"    // the sender's frame rate, or the target's queue, is full
)

// ErrFrameKind: a frame does not decode as its kind, or fails its kind's
// bounds.
var ErrFrameKind = errors.New("frame is not a valid frame of its kind")

// HostFrame is {kind:"host", enabled}.
type HostFrame struct {
	Kind    Kind  `json:"kind"`
	Enabled *bool `json:"enabled"`
}

// DecodeHost reads a host frame; enabled is required.
func DecodeHost(b []byte) (HostFrame, error) {
	f, err := decode[HostFrame](b)
	if err == nil && f.Enabled == nil {
		err = ErrFrameKind
	}
	return f, err
}

// NotifyFrame is {kind:"notify", body:{kind, count}}: count requests
// waiting for the person, or finished.
type NotifyFrame struct {
	Kind Kind       `json:"kind"`
	Body NotifyBody `json:"body"`
}

// NotifyBody is what a notify frame counts.
type NotifyBody struct {
	Kind  string `json:"kind"` // "waiting" or "finished"
	Count int    `json:"count"`
}

// DecodeNotify reads a notify frame: its body's kind is waiting or
// finished, and its count 0 to MaxNotifyCount.
func DecodeNotify(b []byte) (NotifyFrame, error) {
	f, err := decode[NotifyFrame](b)
	if err != nil || (f.Body.Kind != "waiting" && f.Body.Kind != "finished") ||
		f.Body.Count < 0 || f.Body.Count > MaxNotifyCount {
		return f, ErrFrameKind
	}
	return f, nil
}

// PresenceFrame is {devices, kind:"presence"} (devices first, as the relay
// has always written it).
type PresenceFrame struct {
	Devices []Device `json:"devices"`
	Kind    Kind     `json:"kind"`
	// Frames is FramesBinary from a relay that forwards binary frames
	// (binary.go); absent from one before them.
	Frames int `json:"frames,omitempty"`
}

// NewPresence is the presence frame of devices, from a relay that
// forwards binary frames.
func NewPresence(devices []Device) PresenceFrame {
	return PresenceFrame{Devices: devices, Kind: KindPresence, Frames: FramesBinary}
}

// UndeliverableFrame is {kind:"undeliverable", to, ref, reason}.
type UndeliverableFrame struct {
	Kind   Kind   `json:"kind"`
	To     string `json:"to"`
	Ref    string `json:"ref,omitempty"`
	Reason string `json:"reason"`
}

// NewUndeliverable tells a sender its frame for to (carrying ref) did not
// arrive, and why (ReasonOffline, ReasonRate).
func NewUndeliverable(to, ref, reason string) UndeliverableFrame {
	return UndeliverableFrame{Kind: KindUndeliverable, To: to, Ref: ref, Reason: reason}
}

// ErrorFrame is {kind:"error", error}: a sentence, never a cause.
type ErrorFrame struct {
	Kind  Kind   `json:"kind"`
	Error string `json:"error"`
}

// NewError is the error frame saying sentence.
func NewError(sentence string) ErrorFrame { return ErrorFrame{Kind: KindError, Error: sentence} }

// SealedFrame is a sealed body as a device sends it {to, body, ref}, or as
// the relay forwards it {from, to, body} (AppendForward writes that one
// without decoding the body).
type SealedFrame struct {
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	Body string `json:"body"`
	Ref  string `json:"ref,omitempty"`
}

// FrameKind reads a frame's "kind"; a frame without one is KindSealed.
func FrameKind(b []byte) (Kind, error) {
	var f struct {
		Kind Kind `json:"kind"`
	}
	if json.Unmarshal(b, &f) != nil {
		return "", ErrFrameKind
	}
	return f.Kind, nil
}

// decode reads b as the frame struct v of its kind.
func decode[T any](b []byte) (T, error) {
	var v T
	if json.Unmarshal(b, &v) != nil {
		return v, ErrFrameKind
	}
	return v, nil
}

// DecodeSealed reads a forwarded sealed frame; from is required.
func DecodeSealed(b []byte) (SealedFrame, error) {
	f, err := decode[SealedFrame](b)
	if err == nil && f.From == "" {
		err = ErrFrameKind
	}
	return f, err
}

// DecodePresence reads a presence frame.
func DecodePresence(b []byte) (PresenceFrame, error) { return decode[PresenceFrame](b) }

// DecodeUndeliverable reads an undeliverable frame.
func DecodeUndeliverable(b []byte) (UndeliverableFrame, error) { return decode[UndeliverableFrame](b) }

// DecodeError reads an error frame.
func DecodeError(b []byte) (ErrorFrame, error) { return decode[ErrorFrame](b) }
