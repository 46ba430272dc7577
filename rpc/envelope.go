package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
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
	// P is the highest protocol the caller speaks (absent: ProtocolText):
	// ProtocolBinary says it reads binary frames, so the host may answer
	// with one, and its host.hello says so (frame.go).
	P int `json:"p,omitempty"`
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
//
// Params nested deeper than MaxDepth are set aside before the envelope is
// decoded and put back raw, so the request keeps its id and is answered
// BAD_PARAMS by the method's decoder, instead of failing here (encoding/json
// gives up at 10,000 levels) and getting no answer at all.
func parseRequest(plain []byte) (Request, error) {
	var req Request
	var deep json.RawMessage
	if depth, start, end := scanJSON(plain); depth > MaxDepth+1 && start >= 0 && end > start { // +1: the envelope
		deep = bytes.Clone(bytes.TrimSpace(plain[start:end]))
		plain = slices.Concat(plain[:start], []byte("null"), plain[end:])
	}
	if err := json.Unmarshal(plain, &req); err != nil {
		return req, errEnvelope
	}
	if req.Type != "req" || !printable(req.ID, 1, maxID) || !printable(req.Method, 1, maxMethod) ||
		!printable(req.Nonce, minNonce, maxNonce) || req.TS <= 0 {
		return req, errEnvelope
	}
	if deep != nil {
		req.Params = deep
	}
	return req, nil
}

// scanJSON walks a JSON text once, skipping strings with their escapes, and
// reports how deeply it nests arrays and objects, and where the value of its
// top-level "params" key lies (start and end offsets, -1 when there is none;
// the last such key, as encoding/json takes the last). It does not check that
// the text is JSON: the decoder does, after it. A key spelled with escapes
// ("p\u0061rams") is not found, and such a request, if too deep, fails as
// before: unanswered.
func scanJSON(b []byte) (depth, start, end int) {
	start, end = -1, -1
	d, inStr, esc, isParams, strStart := 0, false, false, false, 0
	for i, c := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				isParams = d == 1 && string(b[strStart:i+1]) == `"params"`
			}
			continue
		}
		switch c {
		case '"':
			inStr, strStart = true, i
		case '{', '[':
			d++
			depth = max(depth, d)
		case '}', ']':
			if d == 1 && start >= 0 && end < 0 {
				end = i
			}
			d--
		case ':':
			if d == 1 && isParams {
				start, end = i+1, -1
			}
		case ',':
			if d == 1 && start >= 0 && end < 0 {
				end = i
			}
		}
	}
	return depth, start, end
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
