package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
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

// Method is one row of the method table: name, grant, lane, switch, wait,
// and what the reply holds, declared once beside the handler whose
// parameters' type is the row's last column. From the row alone the host
// checks access and the switch, picks the lane, dedupes once-methods,
// allows it in batch, and lists it in host.hello, `gatehouse policy` and
// docs/methods.md. What the type already says (the parameter names, whether
// the method is once, whether it takes a target) Register derives from it,
// so it is never written twice and cannot drift.
type Method struct {
	Name  string
	Scope trust.Grant // the narrowest grant that may call it
	Lane  Lane
	// ReadOnly: changes nothing (batchable when in the read lane).
	ReadOnly bool
	// Switch, when set, is the action a refusal names ("edit files"): the
	// method also needs Full access for remote devices on.
	Switch string
	// Wait is how long the device waits for the answer (default 30 s).
	Wait time.Duration
	// Reply describes the answer ("{oid, pushed?}") and Note what neither
	// the parameters nor the reply say ("fast-forward only"), for
	// `gatehouse policy` and docs/methods.md.
	Reply string
	Note  string

	// Once is set by Register: true when the parameters embed SendID, so
	// the method takes an optional sendId and a repeat under it is
	// answered the first answer. A declaration leaves it unset.
	Once bool
	// Params is set by Register from the parameters' type: their JSON
	// names in encoding/json's order, "?" after one that may be left out
	// (omitempty, or a pointer), "name: a|b" for a field tagged
	// value:"a|b", a list of objects as "name: [{...}]". For git.commit:
	// "{target, message, push?, sendId?}". A declaration leaves it unset.
	Params string

	takesTarget bool
	params      reflect.Type
	run         func(ctx context.Context, c *Call, raw json.RawMessage) (any, error)
}

// SendID, embedded in a method's parameters, makes the method a
// once-method: it takes an optional "sendId", and the host answers a repeat
// under the same id from its memory (once.go) instead of running it again.
// It is the one way a method becomes one: Register derives Method.Once from
// it, and refuses a "sendId" parameter declared any other way (the
// dispatcher, host.go dispatch, refuses a sendId sent to a method that is
// not once, so such a field could never be filled).
type SendID struct {
	SendID string `json:"sendId,omitempty"`
}

var sendIDType = reflect.TypeFor[SendID]()

// TakesTarget reports whether the method's parameters have a "target".
func (m *Method) TakesTarget() bool { return m.takesTarget }

// ParamsType is the Go type the method's parameters decode into.
func (m *Method) ParamsType() reflect.Type { return m.params }

// Description is the method's line for a reader: "{params} -> {reply}
// (note)".
func (m *Method) Description() string {
	s := m.Params
	if m.Reply != "" {
		s += " -> " + m.Reply
	}
	if m.Note != "" {
		s += " (" + m.Note + ")"
	}
	return s
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
// refused) and whose handler h answers with a JSON-encodable result. It
// refuses a row that breaks a rule the host relies on: a scope; a read lane
// for read-only methods and only them; parameters that are an object whose
// names are each spelled once; a "target" the dispatcher reads as the
// handler does; a "sendId" only through SendID.
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
	if err := m.derive(reflect.TypeFor[P]()); err != nil {
		return fmt.Errorf("rpc: method %q: %w", m.Name, err)
	}
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

// legacyFormsForTest accepts the form every once-method was declared in
// before Register derived Once: Once set by hand beside a plain sendId field
// (checked to agree), and a plain sendId field on a method that is not once
// (never filled: the dispatcher refuses such a request). Only a test turns
// it on, to show what that form let through.
var legacyFormsForTest atomic.Bool

func legacyForms() bool { return legacyFormsForTest.Load() }

// derive sets what the parameters' type says (Params, Once, takesTarget),
// refusing a type the dispatcher and the handler would read differently.
func (m *Method) derive(t reflect.Type) error {
	fields, err := paramFields(t)
	if err != nil {
		return err
	}
	once, plainSendID := false, false
	for _, f := range fields {
		switch {
		case strings.EqualFold(f.name, "sendId") && f.sendID:
			once = true
		case strings.EqualFold(f.name, "sendId"):
			plainSendID = true
		case strings.EqualFold(f.name, "target"):
			// The dispatcher reads "target" as text, for the sendId
			// memory's key and the request log (host.go common), and
			// encoding/json matches names whatever their case: a
			// "Target" of another type would be one parameter read two
			// ways.
			if f.name != "target" || f.typ.Kind() != reflect.String {
				return errors.New(`a project is named by the text parameter "target"`)
			}
			m.takesTarget = true
		}
	}
	switch {
	case once && m.Once:
		return errors.New("the embedded rpc.SendID makes it once: leave Once out of the declaration")
	case m.Once && !plainSendID:
		return errors.New(`declared Once, but its parameters do not embed rpc.SendID`)
	case (m.Once || plainSendID) && !legacyForms():
		return errors.New(`a "sendId" parameter that is not rpc.SendID: embed rpc.SendID to make the method once (Once is derived from it)`)
	}
	m.Once = once || m.Once
	if m.Params != "" {
		return errors.New("its parameters are described from their type: declare only Reply and Note, not Params")
	}
	m.Params = describeFields(fields)
	m.params = t
	return nil
}

// paramField is one parameter as encoding/json decodes it.
type paramField struct {
	name     string
	typ      reflect.Type
	optional bool   // omitempty, or a pointer
	value    string // its value:"..." tag: what the value is ("thumb|full")
	sendID   bool   // reached through an embedded SendID
}

// paramFields lists the JSON fields of a parameters type in order, as
// encoding/json finds them (encoding/json's typeFields): exported fields;
// an embedded struct without a JSON name flattened into its parent,
// exported or not; a field tagged "-" left out. It refuses a
// type that is not a struct (its decoder would refuse no unknown
// parameter), and two fields whose names differ only in case: encoding/json
// matches a name whatever its case and would pick one of them by its own
// rules, which the description could not show.
func paramFields(t reflect.Type) ([]paramField, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("its parameters are a %s, not a struct", t.Kind())
	}
	var out []paramField
	var err error
	var walk func(t reflect.Type, sendID bool)
	walk = func(t reflect.Type, sendID bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				switch {
				case f.Type.Kind() == reflect.Struct:
					walk(f.Type, sendID || f.Type == sendIDType)
					continue
				case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
					// encoding/json cannot fill a nil one of an unexported
					// type, and refuses the whole request
					err = fmt.Errorf("it embeds a pointer (%s): embed the struct itself", f.Type)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out = append(out, paramField{name: name, typ: f.Type, sendID: sendID, value: f.Tag.Get("value"),
				optional: f.Type.Kind() == reflect.Pointer || slices.Contains(strings.Split(opts, ","), "omitempty")})
		}
	}
	walk(t, false)
	if err != nil {
		return nil, err
	}
	for i, f := range out {
		for _, g := range out[:i] {
			if strings.EqualFold(f.name, g.name) {
				return nil, fmt.Errorf("two parameters named %q", f.name)
			}
		}
	}
	return out, nil
}

// describeFields is the parameters' part of a description: "{target,
// offset?}", "{calls: [{method, params}]}".
func describeFields(fields []paramField) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		s := f.name
		if f.optional {
			s += "?"
		}
		et := f.typ
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		switch {
		case f.value != "":
			s += ": " + f.value
		case et.Kind() == reflect.Slice && et.Elem().Kind() == reflect.Struct:
			if sub, err := paramFields(et.Elem()); err == nil {
				s += ": [" + describeFields(sub) + "]"
			}
		}
		parts = append(parts, s)
	}
	return "{" + strings.Join(parts, ", ") + "}"
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
