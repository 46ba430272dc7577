package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
)

// Protocol is the highest version this host speaks. host.hello reports it
// to a device that announced it (Request.P) on a transport that carries
// its frames, and ProtocolText to any other, which reads no binary frame.
const Protocol = ProtocolBinary

// Hello is host.hello's answer: what this host serves and what the calling
// device may do, built from the declarations alone.
type Hello struct {
	Protocol         int               `json:"protocol"`
	Version          string            `json:"version"`
	Methods          []string          `json:"methods"`
	Limits           map[string]int    `json:"limits"`
	Features         []string          `json:"features"`
	Access           *string           `json:"access"` // the device's grant; null if none
	MethodAccess     map[string]string `json:"methodAccess"`
	FullAccessSwitch []string          `json:"fullAccessSwitch"`
}

// Limits are the bounds the host enforces, each from its constant.
func Limits() map[string]int {
	return map[string]int{
		"maxText":       fsguard.MaxText,
		"pageBudget":    PageBudget,
		"packedPageMax": PackedPageMax,
		"maxBatch":      MaxBatch,
		"maxIds":        MaxIDs,
		"maxPaths":      gate.MaxStagePaths,
		"maxPath":       fsguard.MaxPath,
		"maxFrame":      MaxFrame,
		"imageChunk":    fsguard.ImageChunk,
		"maxImageBytes": fsguard.MaxImage,
	}
}

type batchParams struct {
	Calls []struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"calls"`
}

// BatchResult is one answer in a batch.
type BatchResult struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Code   Code            `json:"code,omitempty"`
}

func registerBuiltins(r *Registry) {
	must(Register(r, Method{Name: "host.hello", Scope: trust.View, Lane: LaneRead, ReadOnly: true,
		Reply: "{protocol, version, methods, limits, features, access, methodAccess, fullAccessSwitch}",
		Note:  "protocol is 2 (binary frames) only to a request that announced it (p: 2) on a transport that carries them, else 1"},
		func(ctx context.Context, c *Call, _ struct{}) (any, error) { return c.host.hello(c), nil }))
	must(Register(r, Method{Name: "batch", Scope: trust.View, Lane: LaneRead, ReadOnly: true,
		Reply: "[{ok, result?, error?, code?}]", Note: "read-only methods, at most maxBatch"},
		func(ctx context.Context, c *Call, p batchParams) (any, error) { return c.host.batch(ctx, c, p) }))
}

func must(err error) {
	if err != nil {
		panic(err) // the built-in table is fixed; a clash is a programming error caught by every test
	}
}

func (h *Host) hello(c *Call) Hello {
	hello := Hello{Protocol: c.protocol, Version: h.o.Version, Limits: Limits(),
		MethodAccess: map[string]string{}, FullAccessSwitch: []string{}, Methods: []string{},
		Features: []string{"packedFrames", "sendId"}}
	for _, m := range h.o.Registry.Methods() {
		hello.Methods = append(hello.Methods, m.Name)
		hello.MethodAccess[m.Name] = m.Scope.String()
		if m.Switch != "" {
			hello.FullAccessSwitch = append(hello.FullAccessSwitch, m.Name)
		}
	}
	if g := c.Grant; g != trust.None {
		s := g.String()
		hello.Access = &s
	}
	if c.Trust.FullAccess() && !c.Trust.IsDesktop() {
		hello.Features = append(hello.Features, "remoteFullAccess")
	}
	return hello
}

// batch runs read-only methods one after another inside the batch's own read
// slot, each through the same admission step as alone (run), with the
// switch the batch was admitted with. Each call is a line of the request
// log of its own, as if sent alone, before the batch's line.
func (h *Host) batch(ctx context.Context, c *Call, p batchParams) ([]BatchResult, error) {
	if len(p.Calls) == 0 || len(p.Calls) > MaxBatch {
		return nil, ParamError("calls", fmt.Sprintf("a list of 1 to %d calls", MaxBatch))
	}
	out := make([]BatchResult, 0, len(p.Calls))
	for i, call := range p.Calls {
		start := h.now()
		res, err := h.batchCall(ctx, c, call.Method, call.Params)
		outcome := "OK"
		if err != nil {
			code, sentence := codeOf(err)
			h.logRefusal(c.Device, c.id+"#"+strconv.Itoa(i), call.Method, code, err)
			out = append(out, BatchResult{Error: sentence, Code: code})
			outcome = string(code)
		} else {
			out = append(out, BatchResult{OK: true, Result: res})
		}
		h.logLine(c.Device, call.Method, targetOf(call.Params), outcome, h.now().Sub(start), i+1)
	}
	if size := batchSize(out); size > PageBudget {
		return nil, ErrTooLarge
	}
	return out, nil
}

// batchCall runs one call of a batch: a method the registry has, that may
// ride in a batch.
func (h *Host) batchCall(ctx context.Context, c *Call, unsafeMethod string, params json.RawMessage) ([]byte, error) {
	m, ok := h.o.Registry.Lookup(unsafeMethod)
	switch {
	case !ok:
		return nil, ErrUnknownMethod
	case !m.batchable():
		return nil, ErrNotInBatch
	}
	one := &Call{Trust: c.Trust, Device: c.Device, host: h, id: c.id, protocol: c.protocol}
	return h.run(ctx, one, m, params)
}

// targetOf is a batch call's target, for the log ("" when it names none).
// Its params lie inside the batch's, which were no deeper than MaxDepth.
func targetOf(rawParams json.RawMessage) string {
	var p common
	_ = json.Unmarshal(rawParams, &p) // a bad one is refused by the method's own decoder
	return p.Target
}

func batchSize(rs []BatchResult) int {
	n := 0
	for _, r := range rs {
		n += len(r.Result) + len(r.Error) + 32
	}
	return n
}
