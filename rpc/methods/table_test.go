package methods_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

// orderedReply is how long a device must wait for a method of the ordered
// lane: the lane answers NOT_RUN after 18 s in the queue (rpc/lanes.go
// orderedWait), and a device that gave up first never hears that its change
// did not run.
const orderedReply = 20 * time.Second

// TestMethodTable checks, over every method gatehouse serves, each rule
// the registry's declarations state (rpc/registry.go, rpc/lanes.go,
// rpc/doc.go), reading the parameters' type through encoding/json itself
// rather than through the registry's own reflection.
func TestMethodTable(t *testing.T) {
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	all := reg.Methods()
	if len(all) < 40 {
		t.Fatalf("only %d methods registered", len(all))
	}
	for _, m := range all {
		names, err := jsonNames(m.ParamsType())
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		has := func(n string) bool { return strings.Contains(" "+strings.Join(names, " ")+" ", " "+n+" ") }
		read := m.Lane == rpc.LaneRead || m.Lane == rpc.LaneSlowRead
		embedsSendID := false
		if f, ok := m.ParamsType().FieldByName("SendID"); ok && f.Anonymous && f.Type == reflect.TypeFor[rpc.SendID]() {
			embedsSendID = true
		}
		for _, c := range []struct {
			holds bool
			rule  string
		}{
			{m.Scope >= trust.View && m.Scope <= trust.Full, "it has a scope: view, control or full"},
			{m.ReadOnly == read, "read-only methods, and only they, run in a read lane"},
			{m.ReadOnly || m.Lane == rpc.LaneOrdered || m.Lane == rpc.LaneBackground,
				"a change waits in the ordered or the background lane, never beside the reads"},
			{m.Once == embedsSendID && m.Once == has("sendId"), "it is once exactly when its parameters embed rpc.SendID, the one sendId"},
			{!m.Once || !m.ReadOnly, "a once-method is a change: a read has nothing to dedupe"},
			{m.Once == (m.Lane == rpc.LaneBackground),
				"the background lane's changes, and only they, are once: they are long, their device waits a minute or more and sends them again after a lost reply, and without a sendId the repeat would run again (a second push, comment or merge)"},
			{m.TakesTarget() == has("target"), "it takes a target exactly when it has the parameter \"target\""},
			{!has("target") || targetIsText(m.ParamsType()), "its target is text, as the dispatcher reads it for the sendId memory and the log (rpc/host.go common)"},
			{m.Switch == "" || (!m.ReadOnly && m.Scope == trust.Full),
				"the Full access switch guards a change a full device makes, never a read or a method a lower grant may call"},
			{m.Switch == "" || (strings.ToLower(m.Switch[:1]) == m.Switch[:1] && !strings.HasSuffix(m.Switch, ".")),
				"its switch is the end of a sentence: \"Turn on Full access ... to <switch>.\""},
			{m.Lane != rpc.LaneOrdered || (m.Wait >= orderedReply), "a device waits for an ordered change at least until the lane would answer NOT_RUN"},
			{m.Params == describe(m.ParamsType()), "its parameters as described are the parameters encoding/json decodes"},
			{m.Reply != "", "it says what it answers"},
		} {
			if !c.holds {
				t.Errorf("%s breaks the rule: %s (scope %s, lane %s, once %v, switch %q, wait %s, params %s, decoded %v)",
					m.Name, c.rule, m.Scope, m.Lane, m.Once, m.Switch, m.Wait, m.Params, names)
			}
		}
	}
}

// jsonNames is the parameters encoding/json reads from an object into t,
// in order: the keys of a value with every field set, as encoding/json
// writes them (it reads and writes the same fields).
func jsonNames(typ reflect.Type) ([]string, error) {
	v := reflect.New(typ).Elem()
	fill(v)
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var names []string
	depth := 0
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return names, nil
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			expectKey = depth == 1
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			expectKey = depth == 1
			continue
		}
		if depth == 1 && expectKey {
			names = append(names, tok.(string))
			expectKey = false
		} else if depth == 1 {
			expectKey = true
		}
	}
}

// fill sets every settable field of v to a value encoding/json writes
// even under omitempty.
func fill(v reflect.Value) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte("1"))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fill(v.Field(i))
			} else if f := v.Type().Field(i); f.Anonymous && f.Type.Kind() == reflect.Struct {
				fillUnexported(v, i)
			}
		}
	}
}

// fillUnexported fills the exported fields of an embedded struct whose
// type is unexported (encoding/json reads them into the parent).
func fillUnexported(v reflect.Value, i int) {
	inner := v.Field(i)
	for j := range inner.NumField() {
		if f := inner.Field(j); f.CanSet() {
			fill(f)
		}
	}
}

// targetIsText: a request's "target", as text, decodes into the type.
func targetIsText(typ reflect.Type) bool {
	return json.Unmarshal([]byte(`{"target":"p"}`), reflect.New(typ).Interface()) == nil
}

// describe is the description a method's parameters should carry,
// written from encoding/json's names and the type's tags: "name", "?" when
// optional (omitempty or a pointer), ": <value tag>", a list of objects as
// ": [{...}]".
func describe(typ reflect.Type) string {
	var parts []string
	for _, name := range jsonNamesOf(typ) {
		f, ok := fieldOf(typ, name)
		if !ok {
			parts = append(parts, name+"<no field>")
			continue
		}
		s := name
		_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() == reflect.Pointer || strings.Contains(","+opts+",", ",omitempty,") {
			s += "?"
		}
		if v := f.Tag.Get("value"); v != "" {
			s += ": " + v
		} else if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
			s += ": [" + describe(f.Type.Elem()) + "]"
		}
		parts = append(parts, s)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func jsonNamesOf(typ reflect.Type) []string {
	names, err := jsonNames(typ)
	if err != nil {
		return []string{"<" + err.Error() + ">"}
	}
	return names
}

// fieldOf finds the struct field encoding/json fills for name, through
// embedded structs.
func fieldOf(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tagName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tagName == "" && f.Type.Kind() == reflect.Struct {
			if g, ok := fieldOf(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if tagName == name || (tagName == "" && f.Name == name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
