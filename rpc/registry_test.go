package rpc

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
)

// registryHost is a host answering reg's methods for the person at the
// computer (every grant, no switch).
func registryHost(t *testing.T, reg *Registry) *Host {
	t.Helper()
	targets := NewTargets(fsguard.Options{}, gate.Options{})
	t.Cleanup(targets.Close)
	h := NewHost(HostOptions{Registry: reg, Targets: targets, Grants: &grantTable{g: map[string]trust.Grant{}},
		FullAccess: func() bool { return false }})
	t.Cleanup(h.Close)
	return h
}

var desktop = Device{ID: "desktop", Desktop: true}

// A once-method is one whose parameters embed SendID, and nothing else
// makes one. Before, Once was set by hand beside a sendId field written by
// hand, in twelve parameter structs; a field without the flag (or the flag
// without the field) was accepted, and then every call a device sent with
// a sendId was refused, so the change it meant to dedupe never ran from a
// phone at all. Now Register derives Once from the type and refuses a
// sendId declared any other way.
func TestOnceComesFromSendID(t *testing.T) {
	type plain struct {
		Target string `json:"target"`
		SendID string `json:"sendId,omitempty"`
	}
	// Without the rule (the old form, accepted again for this part): a
	// plain sendId field on a method not declared Once is accepted, and a
	// call under a sendId is refused.
	legacyFormsForTest.Store(true)
	t.Cleanup(func() { legacyFormsForTest.Store(false) })
	reg := NewRegistry()
	var runs atomic.Int64
	count := func(context.Context, *Call, plain) (any, error) { return runs.Add(1), nil }
	if err := Register(reg, Method{Name: "test.plain", Scope: trust.Full, Lane: LaneBackground}, count); err != nil {
		t.Fatalf("the transitional form: %v", err)
	}
	h := registryHost(t, reg)
	for range 2 {
		if r := h.Handle(context.Background(), desktop, req("test.plain", `{"target":"p","sendId":"s1"}`)); r.Code != CodeBadParams || runs.Load() != 0 {
			t.Fatalf("without the rule, a plain sendId field: %+v, %d runs", r, runs.Load())
		}
	}

	// With the rule: refused at registration, with either half by hand.
	legacyFormsForTest.Store(false)
	for _, m := range []Method{
		{Name: "test.plain", Scope: trust.Full, Lane: LaneBackground},
		{Name: "test.plainOnce", Scope: trust.Full, Lane: LaneBackground, Once: true},
	} {
		err := Register(NewRegistry(), m, count)
		if err == nil || !strings.Contains(err.Error(), "embed rpc.SendID") {
			t.Errorf("%s with a plain sendId field: %v", m.Name, err)
		}
	}
	type embedded struct {
		Target string `json:"target"`
		SendID
	}
	once := func(context.Context, *Call, embedded) (any, error) { return runs.Add(1), nil }
	if err := Register(NewRegistry(), Method{Name: "test.twice", Scope: trust.Full, Lane: LaneBackground, Once: true}, once); err == nil ||
		!strings.Contains(err.Error(), "leave Once out") {
		t.Errorf("Once declared beside SendID: %v", err)
	}
	if err := Register(NewRegistry(), Method{Name: "test.none", Scope: trust.Full, Lane: LaneBackground, Once: true},
		func(context.Context, *Call, struct{}) (any, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "do not embed rpc.SendID") {
		t.Errorf("Once declared without a sendId: %v", err)
	}

	// Embedding SendID makes it once: a repeat is answered from memory.
	reg = NewRegistry()
	if err := Register(reg, Method{Name: "test.once", Scope: trust.Full, Lane: LaneBackground}, once); err != nil {
		t.Fatal(err)
	}
	m, _ := reg.Lookup("test.once")
	if !m.Once || m.Params != "{target, sendId?}" {
		t.Fatalf("derived: once %v, params %q", m.Once, m.Params)
	}
	h = registryHost(t, reg)
	runs.Store(0)
	for i := range 2 {
		r := h.Handle(context.Background(), desktop, req("test.once", `{"target":"p","sendId":"s1"}`))
		if !r.OK || string(r.Result) != "1" {
			t.Fatalf("call %d under one sendId: %+v", i+1, r)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("a repeat under the same sendId ran again: %d runs", runs.Load())
	}
}

// The dispatcher reads "target" itself, as text, for the sendId memory's
// key and the log (host.go common), and encoding/json matches a name
// whatever its case; a method that spelled or typed it otherwise would read
// one parameter two ways (a target that is not text is "" to the
// dispatcher, so one sendId would answer for two projects).
func TestRegisterRefusesParamsReadTwoWays(t *testing.T) {
	h := func(context.Context, *Call, struct {
		Target []string `json:"target"`
	}) (any, error) {
		return nil, nil
	}
	if err := Register(NewRegistry(), Method{Name: "test.list", Scope: trust.View, Lane: LaneRead, ReadOnly: true}, h); err == nil ||
		!strings.Contains(err.Error(), `"target"`) {
		t.Errorf("a target that is a list: %v", err)
	}
	if err := Register(NewRegistry(), Method{Name: "test.case", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
		func(context.Context, *Call, struct {
			Target string `json:"Target"`
		}) (any, error) {
			return nil, nil
		}); err == nil || !strings.Contains(err.Error(), `"target"`) {
		t.Errorf("a target spelled Target: %v", err)
	}
	if err := Register(NewRegistry(), Method{Name: "test.dup", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
		func(context.Context, *Call, struct {
			Path  string `json:"path"`
			Other string `json:"PATH"`
		}) (any, error) {
			return nil, nil
		}); err == nil || !strings.Contains(err.Error(), "two parameters") {
		t.Errorf("two names differing in case: %v", err)
	}
	if err := Register(NewRegistry(), Method{Name: "test.map", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
		func(context.Context, *Call, map[string]string) (any, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "not a struct") {
		t.Errorf("parameters that are a map (no unknown field refused): %v", err)
	}
	if err := Register(NewRegistry(), Method{Name: "test.hand", Scope: trust.View, Lane: LaneRead, ReadOnly: true, Params: "{x}"},
		func(context.Context, *Call, struct{}) (any, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "not Params") {
		t.Errorf("Params written by hand: %v", err)
	}
	if err := Register(NewRegistry(), Method{Name: "test.ptr", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
		func(context.Context, *Call, struct{ *describedHidden }) (any, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "pointer") {
		t.Errorf("an embedded pointer, which encoding/json cannot fill: %v", err)
	}
}

type describedInner struct {
	Query string `json:"query"`
	Case  bool   `json:"matchCase,omitempty"`
}

type describedHidden struct {
	Deep int `json:"deep,omitempty"`
}

// The description names every parameter encoding/json decodes, in its
// order, and only those: embedded structs flattened, exported or not,
// unexported and "-" fields left out, optional ones marked.
func TestParamsDescription(t *testing.T) {
	type item struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	type p struct {
		Target string `json:"target"`
		describedInner
		describedHidden
		Kind    string `json:"kind" value:"a|b"`
		Limit   *int   `json:"limit"`
		Calls   []item `json:"calls"`
		NoTag   string // the Go name is the JSON name
		Skipped string `json:"-"`
		hidden  string
		SendID
	}
	_ = p{}.hidden
	reg := NewRegistry()
	if err := Register(reg, Method{Name: "test.p", Scope: trust.Full, Lane: LaneBackground, Reply: "{}", Note: "a note"},
		func(context.Context, *Call, p) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	m, _ := reg.Lookup("test.p")
	const want = "{target, query, matchCase?, deep?, kind: a|b, limit?, calls: [{method, params}], NoTag, sendId?}"
	if m.Params != want {
		t.Errorf("params\n got %s\nwant %s", m.Params, want)
	}
	if got := m.Description(); got != want+" -> {} (a note)" {
		t.Errorf("description %q", got)
	}
	if !m.Once || !m.TakesTarget() {
		t.Errorf("once %v, takes target %v", m.Once, m.TakesTarget())
	}
	// What encoding/json itself accepts: each named field, nothing else.
	h := registryHost(t, reg)
	for _, name := range []string{"target", "query", "matchCase", "deep", "kind", "limit", "calls", "NoTag", "sendId"} {
		if r := h.Handle(context.Background(), desktop, req("test.p", `{"`+name+`":null}`)); r.Code == CodeBadParams {
			t.Errorf("%s refused: %s", name, r.Error)
		}
	}
	for _, name := range []string{"Skipped", "hidden", "describedInner"} {
		if r := h.Handle(context.Background(), desktop, req("test.p", `{"`+name+`":null}`)); r.Code != CodeBadParams {
			t.Errorf("%s accepted: %+v", name, r)
		}
	}
}
