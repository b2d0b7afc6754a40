package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/dlroute/dlroute/internal/number"
)

// MaxStringLen is the longest string an input may carry, in bytes. Real
// platform_version strings are under 200 bytes; the limit keeps one request
// from costing the engine (and its memo) more than a page.
const MaxStringLen = 4096

// MaxListLen is the longest list an input may carry.
const MaxListLen = 64

type kind uint8

const (
	kindString kind = iota + 1
	kindInt
	kindUint
	kindDouble
	kindBool
	kindDyn
	kindList
	kindMap
	kindDeviceType // an int code, written in rule files by name
)

// valueType is a declared type of an input or a table column: a CEL type, the
// device_type name of table columns, and "?" for a value that may be null.
type valueType struct {
	kind     kind
	elem     *valueType // list element, map value
	nullable bool
	text     string // as written
}

var scalarKinds = map[string]kind{
	"string": kindString, "int": kindInt, "uint": kindUint, "double": kindDouble,
	"bool": kindBool, "dyn": kindDyn,
}

// parseType parses "string", "int?", "list(int)", "map(string, dyn)" and
// (where deviceType is allowed) "device_type".
func parseType(s string, deviceType bool) (*valueType, error) {
	text := strings.TrimSpace(s)
	t := &valueType{text: text}
	if strings.HasSuffix(text, "?") {
		t.nullable = true
		text = strings.TrimSpace(strings.TrimSuffix(text, "?"))
	}
	if k, ok := scalarKinds[text]; ok {
		t.kind = k
		return t, nil
	}
	if text == "device_type" && deviceType {
		t.kind = kindDeviceType
		return t, nil
	}
	if inner, ok := cutWrapped(text, "list("); ok {
		elem, err := parseType(inner, false)
		if err != nil || elem.nullable {
			return nil, fmt.Errorf("list element type %q must be a type without ?", inner)
		}
		t.kind, t.elem = kindList, elem
		return t, nil
	}
	if inner, ok := cutWrapped(text, "map("); ok {
		key, val, found := strings.Cut(inner, ",")
		if !found || strings.TrimSpace(key) != "string" {
			return nil, fmt.Errorf("map types must be map(string, T)")
		}
		elem, err := parseType(val, false)
		if err != nil || elem.nullable {
			return nil, fmt.Errorf("map value type %q must be a type without ?", strings.TrimSpace(val))
		}
		t.kind, t.elem = kindMap, elem
		return t, nil
	}
	want := "string, int, uint, double, bool, dyn, list(T) or map(string, T), with ? for null"
	if deviceType {
		want = "device_type, " + want
	}
	return nil, fmt.Errorf("unknown type %q: want %s", s, want)
}

func cutWrapped(s, prefix string) (string, bool) {
	if strings.HasPrefix(s, prefix) && strings.HasSuffix(s, ")") {
		return s[len(prefix) : len(s)-1], true
	}
	return "", false
}

// celType is the type the CEL checker sees. A nullable scalar is CEL's
// wrapper type, which compares with null and converts to its scalar; a
// nullable list or map is dyn, checked at run time.
func (t *valueType) celType() *cel.Type {
	var base *cel.Type
	switch t.kind {
	case kindString:
		base = cel.StringType
	case kindInt, kindDeviceType:
		base = cel.IntType
	case kindUint:
		base = cel.UintType
	case kindDouble:
		base = cel.DoubleType
	case kindBool:
		base = cel.BoolType
	case kindList:
		base = cel.ListType(t.elem.celType())
	case kindMap:
		base = cel.MapType(cel.StringType, t.elem.celType())
	default:
		return cel.DynType
	}
	if t.nullable {
		if t.kind == kindList || t.kind == kindMap {
			return cel.DynType
		}
		return cel.NullableType(base)
	}
	return base
}

// describe says what a value of the type is, for messages.
func (t *valueType) describe() string {
	s := t.text
	if t.nullable {
		s = strings.TrimSuffix(s, "?") + " or null"
	}
	return s
}

// check validates a Go value against the type and appends its memo key to
// b: a canonical, unambiguous encoding, so that equal keys mean equal inputs.
// Integers may arrive as any Go integer, as a float64 with no fraction (what
// JavaScript and generic JSON decoders produce) or as a json.Number.
//
// For scalars, check allocates nothing and leaves UTF-8 to checkUTF8: a
// memoised resolve costs a few type switches, and a string already in the
// memo was checked when it was added. Lists, maps and dyn values are
// encoded apart and then appended, so that their recursion does not make
// the caller's buffer escape to the heap.
func (t *valueType) check(b []byte, v any) ([]byte, error) {
	if v != nil && (t.kind == kindList || t.kind == kindMap || t.kind == kindDyn) {
		enc, err := t.checkComposite(nil, v)
		return append(b, enc...), err
	}
	return t.checkScalar(b, v)
}

func (t *valueType) checkScalar(b []byte, v any) ([]byte, error) {
	if v == nil {
		if t.nullable || t.kind == kindDyn {
			return append(b, 'n'), nil
		}
		return b, fmt.Errorf("is null; want %s", t.describe())
	}
	switch t.kind {
	case kindString:
		if s, ok := v.(string); ok {
			if len(s) > MaxStringLen {
				return b, &Error{Code: CodeTooLong, Message: fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxStringLen)}
			}
			b = append(b, 's')
			b = binary.AppendUvarint(b, uint64(len(s)))
			return append(b, s...), nil
		}
	case kindInt, kindDeviceType:
		if i, ok := number.Int(v); ok {
			return binary.LittleEndian.AppendUint64(append(b, 'i'), uint64(i)), nil
		}
	case kindUint:
		if i, ok := number.Int(v); ok && i >= 0 {
			return binary.LittleEndian.AppendUint64(append(b, 'u'), uint64(i)), nil
		}
	case kindDouble:
		if f, ok := asDouble(v); ok {
			return binary.LittleEndian.AppendUint64(append(b, 'd'), math.Float64bits(f)), nil
		}
	case kindBool:
		if x, ok := v.(bool); ok {
			if x {
				return append(b, 't'), nil
			}
			return append(b, 'f'), nil
		}
	}
	return b, fmt.Errorf("is %s; want %s", goTypeName(v), t.describe())
}

// checkComposite checks and encodes lists, maps and dyn values, strings in
// them included.
func (t *valueType) checkComposite(b []byte, v any) ([]byte, error) {
	switch t.kind {
	case kindList:
		if items, ok := v.([]any); ok {
			if len(items) > MaxListLen {
				return b, fmt.Errorf("has %d items; the limit is %d", len(items), MaxListLen)
			}
			b = binary.AppendUvarint(append(b, 'l'), uint64(len(items)))
			for i, item := range items {
				var err error
				if b, err = t.elem.checkComposite(b, item); err != nil {
					return b, fmt.Errorf("item %d %w", i, err)
				}
			}
			return b, nil
		}
	case kindMap:
		if m, ok := v.(map[string]any); ok {
			return t.checkMap(b, m)
		}
	case kindDyn:
		if v == nil {
			return append(b, 'n'), nil
		}
		return dynOf(v).checkComposite(b, v)
	case kindString:
		if s, ok := v.(string); ok {
			if err := checkString(s); err != nil {
				return b, err
			}
		}
		return t.checkScalar(b, v)
	default:
		return t.checkScalar(b, v)
	}
	return b, fmt.Errorf("is %s; want %s", goTypeName(v), t.describe())
}

func (t *valueType) checkMap(b []byte, m map[string]any) ([]byte, error) {
	if len(m) > MaxListLen {
		return b, fmt.Errorf("has %d keys; the limit is %d", len(m), MaxListLen)
	}
	b = binary.AppendUvarint(append(b, 'm'), uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkString(k); err != nil {
			return b, fmt.Errorf("key %q %w", k, err)
		}
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		var err error
		if b, err = t.elem.checkComposite(b, m[k]); err != nil {
			return b, fmt.Errorf("key %q %w", k, err)
		}
	}
	return b, nil
}

var (
	dynType    = &valueType{kind: kindDyn, text: "dyn"}
	dynTypes   = map[kind]*valueType{}
	dynUnknown = &valueType{kind: kindString, text: "a JSON value"}
)

func init() {
	for _, k := range []kind{kindString, kindInt, kindDouble, kindBool} {
		dynTypes[k] = &valueType{kind: k, text: "dyn"}
	}
	dynTypes[kindList] = &valueType{kind: kindList, elem: dynType, text: "dyn"}
	dynTypes[kindMap] = &valueType{kind: kindMap, elem: dynType, text: "dyn"}
}

// dynOf is the type a dyn value has at run time.
func dynOf(v any) *valueType {
	switch v.(type) {
	case string:
		return dynTypes[kindString]
	case bool:
		return dynTypes[kindBool]
	case []any:
		return dynTypes[kindList]
	case map[string]any:
		return dynTypes[kindMap]
	}
	if _, ok := number.Int(v); ok {
		return dynTypes[kindInt]
	}
	if _, ok := asDouble(v); ok {
		return dynTypes[kindDouble]
	}
	return dynUnknown
}

// celValue converts a value that check accepted to CEL.
func (t *valueType) celValue(v any) ref.Val {
	if v == nil {
		return types.NullValue
	}
	switch t.kind {
	case kindString:
		return types.String(v.(string))
	case kindInt, kindDeviceType:
		i, _ := number.Int(v)
		return types.Int(i)
	case kindUint:
		i, _ := number.Int(v)
		return types.Uint(uint64(i))
	case kindDouble:
		f, _ := asDouble(v)
		return types.Double(f)
	case kindBool:
		return types.Bool(v.(bool))
	case kindList:
		items := v.([]any)
		vals := make([]ref.Val, len(items))
		for i, item := range items {
			vals[i] = t.elem.celValue(item)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, vals)
	case kindMap:
		m := v.(map[string]any)
		vals := make(map[ref.Val]ref.Val, len(m))
		for k, item := range m {
			vals[types.String(k)] = t.elem.celValue(item)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, vals)
	}
	return dynOf(v).celValue(v)
}

func asDouble(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	if i, ok := number.Int(v); ok {
		return float64(i), true
	}
	return 0, false
}

func checkString(s string) error {
	if len(s) > MaxStringLen {
		return &Error{Code: CodeTooLong, Message: fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxStringLen)}
	}
	if !utf8.ValidString(s) {
		return &Error{Code: CodeInvalidUTF8, Message: "is not valid UTF-8"}
	}
	return nil
}

func goTypeName(v any) string {
	if _, ok := number.Int(v); ok {
		return "an int"
	}
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case float64, float32, json.Number:
		if f, ok := asDouble(v); ok && f == math.Trunc(f) {
			return "a number too large for an int"
		}
		return "a number with a fraction"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a Go %T", v)
}
