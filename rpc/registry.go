package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// Lane is where a request waits on the host, per device.
type Lane uint8

const (
	// LaneRead: 4 at a time, for quick read-only methods.
	LaneRead Lane = iota
	// LaneSlowRead: 2 at a time, for read-only methods that can take
	// seconds (grep, a diff of a large tree), so they never hold up the
	// quick ones.
	LaneSlowRead
	// LaneOrdered: one at a time in arrival order, for small changes; a
	// request that waited over 18 s is answered NOT_RUN.
	LaneOrdered
	// LaneBackground: beside the ordered lane, for long changes; a request
	// still queued past its caller's wait less 2 s is answered NOT_RUN.
	LaneBackground
)

func (l Lane) String() string {
	return [...]string{"read", "slow-read", "ordered", "background"}[l]
}

// Method is one method, declared once. From the declaration alone the host
// checks access and the switch, picks the lane, dedupes once-methods, allows
// it in batch, and lists it in host.hello and `gatehouse policy`.
type Method struct {
	Name  string
	Scope trust.Grant // the narrowest grant that may call it
	Lane  Lane
	// ReadOnly: changes nothing (batchable when in the read lane).
	ReadOnly bool
	// Once: takes an optional sendId; a repeat answers the first answer.
	Once bool
	// Switch, when set, is the action a refusal names ("edit files"): the
	// method also needs Full access for remote devices on.
	Switch string
	// Wait is how long the device waits for the answer (default 30 s).
	Wait time.Duration
	// Params describes the parameters, for `gatehouse policy`.
	Params      string
	takesTarget bool
	run         func(ctx context.Context, c *Call, raw json.RawMessage) (any, error)
}

// TakesTarget reports whether the method's parameters have a "target".
func (m *Method) TakesTarget() bool { return m.takesTarget }

// hasJSONField reports whether struct type t (or a struct it embeds) has a
// field encoded as name.
func hasJSONField(t reflect.Type, name string) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && hasJSONField(f.Type, name) {
			return true
		}
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return true
		}
	}
	return false
}

// wait is the method's caller timeout.
func (m *Method) wait() time.Duration {
	if m.Wait > 0 {
		return m.Wait
	}
	return 30 * time.Second
}

// Registry holds the declared methods.
type Registry struct {
	methods map[string]*Method
}

// NewRegistry makes a registry holding the built-in methods (host.hello,
// batch).
func NewRegistry() *Registry {
	r := &Registry{methods: map[string]*Method{}}
	registerBuiltins(r)
	return r
}

// Register declares a method whose parameters decode into P (unknown fields
// refused) and whose handler h answers with a JSON-encodable result.
func Register[P any](r *Registry, m Method, h func(ctx context.Context, c *Call, p P) (any, error)) error {
	if _, dup := r.methods[m.Name]; dup || !printable(m.Name, 1, maxMethod) {
		return fmt.Errorf("rpc: method %q declared twice or badly named", m.Name)
	}
	if m.Scope < trust.View || m.Scope > trust.Full {
		return fmt.Errorf("rpc: method %q has no scope", m.Name)
	}
	if m.ReadOnly != (m.Lane == LaneRead || m.Lane == LaneSlowRead) {
		return fmt.Errorf("rpc: method %q: read-only methods, and only they, run in a read lane", m.Name)
	}
	m.takesTarget = hasJSONField(reflect.TypeFor[P](), "target")
	m.run = func(ctx context.Context, c *Call, raw json.RawMessage) (any, error) {
		var p P
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return h(ctx, c, p)
	}
	r.methods[m.Name] = &m
	return nil
}

// Lookup returns a declared method.
func (r *Registry) Lookup(name string) (*Method, bool) {
	m, ok := r.methods[name]
	return m, ok
}

// Methods lists every declared method by name.
func (r *Registry) Methods() []*Method {
	out := make([]*Method, 0, len(r.methods))
	for _, m := range r.methods {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// batchable: read-only and in the quick read lane (slow reads never ride in
// a batch).
func (m *Method) batchable() bool { return m.ReadOnly && m.Lane == LaneRead && m.Name != "batch" }
