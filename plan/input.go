package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dlroute/dlroute/internal/number"
)

// The input limits, the engine's (engine.MaxStringLen, engine.MaxListLen).
const (
	MaxStringLen = 4096
	MaxListLen   = 64
)

// decodeInput parses one JSON input line and checks it against the
// declared inputs, with the engine's checks and messages
// (engine.RuleSet.DecodeInput).
func (p *Plan) decodeInput(data []byte) (map[string]any, *Error) {
	if !utf8.Valid(data) {
		return nil, &Error{Code: CodeInvalidUTF8, Message: fmt.Sprintf("input is not valid UTF-8 (at byte %d)", invalidUTF8At(data))}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
		}
		if errors.Is(err, io.EOF) {
			msg = "empty input; want a JSON object"
		}
		return nil, &Error{Code: CodeJSON, Message: msg}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Code: CodeJSON, Message: fmt.Sprintf("unexpected data after the JSON object (at byte %d)", dec.InputOffset())}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Code: CodeJSON, Message: fmt.Sprintf("input is %s; want a JSON object", goTypeName(v))}
	}
	if members(data) != len(obj) { // a key given twice makes the map smaller
		if key, dup := duplicateKey(data); dup {
			return nil, &Error{Code: CodeJSON, Message: fmt.Sprintf("input has %q twice", key)}
		}
	}
	if err := p.check(obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// duplicateKey finds a key that occurs twice at the top level of a JSON
// object that has already decoded without error.
func duplicateKey(data []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return "", false
		}
		if seen[key] {
			return key, true
		}
		seen[key] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}

// members counts the members of the JSON object in data, which has
// decoded without error: one more than the commas outside strings at its
// top level, or none. duplicateKey, which decodes the line again, runs
// only when the count and the decoded object's size differ.
func members(data []byte) int {
	n, depth, first := 0, 0, false
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			first = first || depth == 1
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 1:
			n++
		}
	}
	if !first {
		return 0
	}
	return n + 1
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// check validates an input against the declared inputs, as the engine
// does: a missing required input, a value of the wrong type, a field not
// declared, a string that is too long or not UTF-8.
func (p *Plan) check(in map[string]any) *Error {
	found := 0
	for i := range p.Inputs {
		decl := &p.Inputs[i]
		v, ok := in[decl.Name]
		switch {
		case ok:
			found++
		case decl.Required:
			if err := p.unknownField(in); err != nil {
				return err
			}
			return &Error{Code: CodeMissingField, Message: fmt.Sprintf("input %s is missing; want %s", decl.Name, decl.Type.describe())}
		default:
			v = decl.Default
		}
		if err := decl.Type.check(v); err != nil {
			return &Error{Code: err.code, Message: fmt.Sprintf("input %s %s", decl.Name, err.msg)}
		}
	}
	if found != len(in) {
		return p.unknownField(in)
	}
	for i := range p.Inputs {
		if s, ok := in[p.Inputs[i].Name].(string); ok && !utf8.ValidString(s) {
			return &Error{Code: CodeInvalidUTF8, Message: fmt.Sprintf("input %s is not valid UTF-8 (at byte %d)", p.Inputs[i].Name, invalidUTF8At([]byte(s)))}
		}
	}
	return nil
}

func (p *Plan) unknownField(in map[string]any) *Error {
	for _, name := range slices.Sorted(maps.Keys(in)) {
		if !slices.ContainsFunc(p.Inputs, func(d Input) bool { return d.Name == name }) {
			names := make([]string, len(p.Inputs))
			for i, d := range p.Inputs {
				names[i] = d.Name
			}
			return &Error{Code: CodeUnknownField, Message: fmt.Sprintf("unknown input %q", name),
				Hint: "the inputs of " + p.Ref + " are: " + strings.Join(names, ", ")}
		}
	}
	return nil
}

// typeError is what check finds: a message that follows the input's
// name, and its code.
type typeError struct {
	code Code
	msg  string
}

func (t *Type) describe() string {
	s := t.Text
	if t.Nullable {
		s = strings.TrimSuffix(s, "?") + " or null"
	}
	return s
}

var (
	dynType  = &Type{Kind: KindDyn, Text: "dyn"}
	dynTypes = map[Kind]*Type{
		KindString: {Kind: KindString, Text: "dyn"},
		KindInt:    {Kind: KindInt, Text: "dyn"},
		KindDouble: {Kind: KindDouble, Text: "dyn"},
		KindBool:   {Kind: KindBool, Text: "dyn"},
		KindList:   {Kind: KindList, Elem: dynType, Text: "dyn"},
		KindMap:    {Kind: KindMap, Elem: dynType, Text: "dyn"},
	}
	dynUnknown = &Type{Kind: KindString, Text: "a JSON value"}
)

func dynOf(v any) *Type {
	switch v.(type) {
	case string:
		return dynTypes[KindString]
	case bool:
		return dynTypes[KindBool]
	case []any:
		return dynTypes[KindList]
	case map[string]any:
		return dynTypes[KindMap]
	}
	if _, ok := number.Int(v); ok {
		return dynTypes[KindInt]
	}
	if _, ok := asDouble(v); ok {
		return dynTypes[KindDouble]
	}
	return dynUnknown
}

// check is the engine's valueType.check without the memo key.
func (t *Type) check(v any) *typeError {
	if v != nil && (t.Kind == KindList || t.Kind == KindMap || t.Kind == KindDyn) {
		return t.checkComposite(v)
	}
	return t.checkScalar(v)
}

func (t *Type) checkScalar(v any) *typeError {
	if v == nil {
		if t.Nullable || t.Kind == KindDyn {
			return nil
		}
		return &typeError{CodeWrongType, "is null; want " + t.describe()}
	}
	switch t.Kind {
	case KindString:
		if s, ok := v.(string); ok {
			if len(s) > MaxStringLen {
				return &typeError{CodeTooLong, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxStringLen)}
			}
			return nil
		}
	case KindInt:
		if _, ok := number.Int(v); ok {
			return nil
		}
	case KindUint:
		if i, ok := number.Int(v); ok && i >= 0 {
			return nil
		}
	case KindDouble:
		if _, ok := asDouble(v); ok {
			return nil
		}
	case KindBool:
		if _, ok := v.(bool); ok {
			return nil
		}
	}
	return &typeError{CodeWrongType, fmt.Sprintf("is %s; want %s", goTypeName(v), t.describe())}
}

// wrap prefixes an inner error's message, keeping its code (the engine
// wraps with %w, and takes the innermost *Error's code).
func (e *typeError) wrap(prefix string) *typeError {
	return &typeError{e.code, prefix + " " + e.msg}
}

func (t *Type) checkComposite(v any) *typeError {
	switch t.Kind {
	case KindList:
		if items, ok := v.([]any); ok {
			if len(items) > MaxListLen {
				return &typeError{CodeWrongType, fmt.Sprintf("has %d items; the limit is %d", len(items), MaxListLen)}
			}
			for i, item := range items {
				if err := t.Elem.checkComposite(item); err != nil {
					return err.wrap(fmt.Sprintf("item %d", i))
				}
			}
			return nil
		}
	case KindMap:
		if m, ok := v.(map[string]any); ok {
			if len(m) > MaxListLen {
				return &typeError{CodeWrongType, fmt.Sprintf("has %d keys; the limit is %d", len(m), MaxListLen)}
			}
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if err := checkString(k); err != nil {
					return err.wrap(fmt.Sprintf("key %q", k))
				}
				if err := t.Elem.checkComposite(m[k]); err != nil {
					return err.wrap(fmt.Sprintf("key %q", k))
				}
			}
			return nil
		}
	case KindDyn:
		if v == nil {
			return nil
		}
		return dynOf(v).checkComposite(v)
	case KindString:
		if s, ok := v.(string); ok {
			if err := checkString(s); err != nil {
				return err
			}
		}
		return t.checkScalar(v)
	default:
		return t.checkScalar(v)
	}
	return &typeError{CodeWrongType, fmt.Sprintf("is %s; want %s", goTypeName(v), t.describe())}
}

func checkString(s string) *typeError {
	if len(s) > MaxStringLen {
		return &typeError{CodeTooLong, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxStringLen)}
	}
	if !utf8.ValidString(s) {
		return &typeError{CodeInvalidUTF8, "is not valid UTF-8"}
	}
	return nil
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

// celValue converts a value that check accepted to a run-time value.
func (t *Type) celValue(v any) any {
	if v == nil {
		return nil
	}
	switch t.Kind {
	case KindString:
		return v.(string)
	case KindInt:
		i, _ := number.Int(v)
		return i
	case KindUint:
		i, _ := number.Int(v)
		return uint64(i)
	case KindDouble:
		f, _ := asDouble(v)
		return f
	case KindBool:
		return v.(bool)
	case KindList:
		items := v.([]any)
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = t.Elem.celValue(item)
		}
		return out
	case KindMap:
		m := v.(map[string]any)
		out := &Map{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, t.Elem.celValue(m[k]))
		}
		return out
	}
	return dynOf(v).celValue(v)
}
