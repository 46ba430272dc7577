package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Shared validators: a handler never writes its own.

// TextParam checks a text parameter: valid UTF-8, at most max bytes.
func TextParam(s string, max int) error {
	if len(s) > max || !utf8.ValidString(s) {
		return ErrBadParams
	}
	return nil
}

// IDsParam checks a list of ids: 1 to MaxIDs, each printable.
func IDsParam(ids []string) error {
	if len(ids) == 0 || len(ids) > MaxIDs {
		return ErrBadParams
	}
	for _, id := range ids {
		if !printable(id, 1, 64) {
			return ErrBadParams
		}
	}
	return nil
}

// JSONSize is the encoded size of v.
func JSONSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return PageBudget + 1
	}
	return len(b)
}

// MaxDepth bounds how deeply a request nests arrays and objects, checked
// before anything decodes it. No method's parameters need more; without it a
// request 10,000 levels deep passed the device's encoder and failed the
// host's (encoding/json stops at 10,000), so it got no answer at all.
const MaxDepth = 64

// ErrTooDeep refuses parameters nested deeper than MaxDepth.
var ErrTooDeep = paramsRefusal(fmt.Sprintf("they nest more than %d levels deep", MaxDepth))

// ParamError refuses a parameter by name: field and want must be words a
// device may read (a declared parameter name, "a relative path").
func ParamError(field, want string) error {
	return paramsRefusal(fmt.Sprintf("%q should be %s", field, want))
}

// paramsRefusal is ErrBadParams with what is wrong said after it.
func paramsRefusal(detail string) error {
	return refusal.Errorf(ErrBadParams, "%s: %s.", strings.TrimSuffix(ErrBadParams.Sentence(), "."), detail)
}

// decodeParams reads a request's params strictly: unknown fields and
// trailing data are refused, each refusal naming what was wrong.
func decodeParams(rawParams json.RawMessage, into any) error {
	raw := bytes.TrimSpace(rawParams)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if depth, _, _ := scanJSON(raw); depth > MaxDepth {
		return ErrTooDeep
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return paramsRefusal("they hold more than one JSON value")
	}
	return nil
}

// unknownField is how encoding/json words a field the target lacks (it has
// no typed error for it): `json: unknown field "name"`.
const unknownField = "json: unknown field "

// decodeError says which parameter encoding/json stopped at and what it
// expected. Names that come from the request (an unknown field, a map key
// in a path) are shown only when short and printable.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return paramsRefusal("they should be " + wantOf(te.Type))
	case errors.As(err, &te):
		return paramsRefusal(fmt.Sprintf("%s should be %s, not %s", shownName(te.Field), wantOf(te.Type), gotOf(te.Value)))
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return paramsRefusal("they are not valid JSON")
	case strings.HasPrefix(err.Error(), unknownField):
		name, uerr := strconv.Unquote(strings.TrimPrefix(err.Error(), unknownField))
		if uerr != nil || !printable(name, 1, 64) {
			return paramsRefusal("this method takes no parameter by that name")
		}
		return paramsRefusal("this method takes no parameter " + strconv.Quote(name))
	}
	return ErrBadParams
}

// shownName quotes a parameter name, or says "a parameter" when the name is
// too long or not printable to echo back.
func shownName(name string) string {
	if !printable(name, 1, 64) {
		return "a parameter"
	}
	return strconv.Quote(name)
}

// wantOf words the Go type a parameter decodes into.
func wantOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return wantOf(t.Elem())
	}
	return "another kind of value"
}

// gotOf words the JSON value encoding/json found ("number -1": the kind
// only, never the value).
func gotOf(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "string":
		return "text"
	case "number":
		return "a number like that"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return "that"
}
