package rpc

import (
	"encoding/json"
	"errors"
	"time"
)

// Request is a device's call, the plaintext inside a sealed body.
type Request struct {
	Type   string          `json:"type"` // "req"
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	TS     int64           `json:"ts"`    // unix milliseconds
	Nonce  string          `json:"nonce"` // 16 to 64 printable characters
	// Z says the caller opens packed replies.
	Z int `json:"z,omitempty"`
}

// Response answers one request.
type Response struct {
	Type   string          `json:"type"` // "res"
	ID     string          `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"` // the sentence a person reads
	Code   Code            `json:"code,omitempty"`
	TS     int64           `json:"ts"`
	Nonce  string          `json:"nonce"`
}

// Event is something the host tells a subscribed device unasked.
type Event struct {
	Type  string          `json:"type"` // "event"
	Name  string          `json:"name"`
	Data  json.RawMessage `json:"data,omitempty"`
	TS    int64           `json:"ts"`
	Nonce string          `json:"nonce"`
}

// Bounds of the envelope's own fields.
const (
	maxID      = 200
	maxMethod  = 100
	minNonce   = 16
	maxNonce   = 64
	replayTime = 60 * time.Second
)

var (
	errEnvelope = errors.New("rpc: malformed envelope")
	errStale    = errors.New("rpc: stale or future timestamp")
	errReplay   = errors.New("rpc: nonce already seen")
)

// printable reports whether s is 1..max bytes of printable ASCII without
// spaces.
func printable(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// parseRequest reads a request's plaintext and checks its fixed fields. The
// replay check (timestamp and nonce) is the caller's, per peer.
func parseRequest(plain []byte) (Request, error) {
	var req Request
	if err := json.Unmarshal(plain, &req); err != nil {
		return req, errEnvelope
	}
	if req.Type != "req" || !printable(req.ID, 1, maxID) || !printable(req.Method, 1, maxMethod) ||
		!printable(req.Nonce, minNonce, maxNonce) || req.TS <= 0 {
		return req, errEnvelope
	}
	return req, nil
}

// ParseResponse reads a response's plaintext (the device side).
func ParseResponse(plain []byte) (Response, error) {
	var res Response
	if err := json.Unmarshal(plain, &res); err != nil || res.Type != "res" || !printable(res.Nonce, minNonce, maxNonce) {
		return res, errEnvelope
	}
	return res, nil
}

// ParseEvent reads an event's plaintext (the device side).
func ParseEvent(plain []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(plain, &ev); err != nil || ev.Type != "event" || !printable(ev.Nonce, minNonce, maxNonce) {
		return ev, errEnvelope
	}
	return ev, nil
}
