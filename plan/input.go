package plan

import (
	"math"
	"unicode/utf8"
)

// The input limits, the engine's (engine.MaxStringLen, engine.MaxListLen).
const (
	MaxStringLen = 4096
	MaxListLen   = 64
)

// decodeInput parses one JSON input line and checks it against the
// declared inputs, with the engine's checks and messages
// (engine.RuleSet.DecodeInput). The line's object is read into fields'
// room when it fits (fields may be nil).
func (p *Plan) decodeInput(data []byte, fields object) (object, *Error) {
	if !utf8.Valid(data) {
		return nil, &Error{Code: CodeInvalidUTF8, Message: sprintf("input is not valid UTF-8 (at byte %d)", invalidUTF8At(data))}
	}
	obj, err := readObject(data, p.Inputs, p.strs, fields)
	if err != nil {
		return nil, err
	}
	if err := p.check(obj); err != nil {
		return nil, err
	}
	return obj, nil
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
func (p *Plan) check(in object) *Error {
	found := 0
	for i := range p.Inputs {
		decl := &p.Inputs[i]
		v, ok := in.get(decl.Name)
		switch {
		case ok:
			found++
		case decl.Required:
			if err := p.unknownField(in); err != nil {
				return err
			}
			return &Error{Code: CodeMissingField, Message: sprintf("input %s is missing; want %s", decl.Name, decl.Type.describe())}
		default:
			v = decl.Default
		}
		if err := decl.Type.check(v); err != nil {
			return &Error{Code: err.code, Message: sprintf("input %s %s", decl.Name, err.msg)}
		}
	}
	if found != len(in) {
		return p.unknownField(in)
	}
	// No string input needs a UTF-8 check of its own: decodeInput
	// checked the whole line, and the reader makes only valid UTF-8 of
	// valid UTF-8 (a broken surrogate escape becomes U+FFFD).
	return nil
}

// unknownField reports the first field of in, by name, that is not a
// declared input, or nil.
func (p *Plan) unknownField(in object) *Error {
	first, found := "", false
	for _, f := range in {
		if !p.declares(f.key) {
			first, found = f.key, true
			break
		}
	}
	if !found {
		return nil
	}
	names := make([]string, len(p.Inputs))
	for i, d := range p.Inputs {
		names[i] = d.Name
	}
	return &Error{Code: CodeUnknownField, Message: sprintf("unknown input %q", first),
		Hint: "the inputs of " + p.Ref + " are: " + join(names, ", ")}
}

// typeError is what check finds: a message that follows the input's
// name, and its code.
type typeError struct {
	_    [0]func() // not comparable: no equality function in the module
	code Code
	msg  string
}

//go:noinline
func (t *Type) describe() string {
	s := t.Text
	if t.Nullable {
		if hasSuffix(s, "?") {
			s = s[:len(s)-1]
		}
		s += " or null"
	}
	return s
}

var (
	dynType  = &Type{Kind: KindDyn, Text: "dyn"}
	dynTypes = [...]*Type{ // by Kind: an array, not a map, which would cost the module its initialization code
		KindString: {Kind: KindString, Text: "dyn"},
		KindInt:    {Kind: KindInt, Text: "dyn"},
		KindDouble: {Kind: KindDouble, Text: "dyn"},
		KindBool:   {Kind: KindBool, Text: "dyn"},
		KindList:   {Kind: KindList, Elem: dynType, Text: "dyn"},
		KindMap:    {Kind: KindMap, Elem: dynType, Text: "dyn"},
	}
	dynUnknown = &Type{Kind: KindString, Text: "a JSON value"}
)

//go:noinline
func dynOf(v any) *Type {
	switch v.(type) {
	case string:
		return dynTypes[KindString]
	case bool:
		return dynTypes[KindBool]
	case []any:
		return dynTypes[KindList]
	case object:
		return dynTypes[KindMap]
	}
	if _, ok := intOf(v); ok {
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
		return &typeError{code: CodeWrongType, msg: "is null; want " + t.describe()}
	}
	switch t.Kind {
	case KindString:
		if s, ok := v.(string); ok {
			if len(s) > MaxStringLen {
				return &typeError{code: CodeTooLong, msg: sprintf("is %d bytes long; the limit is %d", len(s), MaxStringLen)}
			}
			return nil
		}
	case KindInt:
		if _, ok := intOf(v); ok {
			return nil
		}
	case KindUint:
		if i, ok := intOf(v); ok && i >= 0 {
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
	return &typeError{code: CodeWrongType, msg: sprintf("is %s; want %s", goTypeName(v), t.describe())}
}

// wrap prefixes an inner error's message, keeping its code (the engine
// wraps with %w, and takes the innermost *Error's code).
//
//go:noinline
func (e *typeError) wrap(prefix string) *typeError {
	return &typeError{code: e.code, msg: prefix + " " + e.msg}
}

func (t *Type) checkComposite(v any) *typeError {
	switch t.Kind {
	case KindList:
		if items, ok := v.([]any); ok {
			if len(items) > MaxListLen {
				return &typeError{code: CodeWrongType, msg: sprintf("has %d items; the limit is %d", len(items), MaxListLen)}
			}
			for i, item := range items {
				if err := t.Elem.checkComposite(item); err != nil {
					return err.wrap(sprintf("item %d", i))
				}
			}
			return nil
		}
	case KindMap:
		if m, ok := v.(object); ok {
			if len(m) > MaxListLen {
				return &typeError{code: CodeWrongType, msg: sprintf("has %d keys; the limit is %d", len(m), MaxListLen)}
			}
			for _, f := range m {
				if err := checkString(f.key); err != nil {
					return err.wrap(sprintf("key %q", f.key))
				}
				if err := t.Elem.checkComposite(f.val); err != nil {
					return err.wrap(sprintf("key %q", f.key))
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
	return &typeError{code: CodeWrongType, msg: sprintf("is %s; want %s", goTypeName(v), t.describe())}
}

func checkString(s string) *typeError {
	if len(s) > MaxStringLen {
		return &typeError{code: CodeTooLong, msg: sprintf("is %d bytes long; the limit is %d", len(s), MaxStringLen)}
	}
	if !utf8.ValidString(s) {
		return &typeError{code: CodeInvalidUTF8, msg: "is not valid UTF-8"}
	}
	return nil
}

func asDouble(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case jsonNumber:
		return parseDouble(string(x))
	}
	if i, ok := intOf(v); ok {
		return float64(i), true
	}
	return 0, false
}

func goTypeName(v any) string {
	if _, ok := intOf(v); ok {
		return "an int"
	}
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case float64, float32, jsonNumber:
		if f, ok := asDouble(v); ok && f == math.Trunc(f) {
			return "a number too large for an int"
		}
		return "a number with a fraction"
	case []any:
		return "a list"
	case object:
		return "an object"
	}
	return "a value of another Go type"
}

// celValue converts a value that check accepted to a run-time value.
func (t *Type) celValue(v any) any {
	if v == nil {
		return nil
	}
	switch t.Kind { // v itself where it is the value already: no copy
	case KindString, KindBool:
		return v
	case KindInt:
		if _, ok := v.(int64); ok {
			return v
		}
		i, _ := intOf(v)
		return i
	case KindUint:
		i, _ := intOf(v)
		return uint64(i)
	case KindDouble:
		if _, ok := v.(float64); ok {
			return v
		}
		f, _ := asDouble(v)
		return f
	case KindList:
		items := v.([]any)
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = t.Elem.celValue(item)
		}
		return out
	case KindMap:
		m := v.(object)
		out := &Map{Keys: make([]any, len(m)), Vals: make([]any, len(m))}
		for i, f := range m {
			out.Keys[i], out.Vals[i] = f.key, t.Elem.celValue(f.val)
		}
		return out
	}
	return dynOf(v).celValue(v)
}

//go:noinline
func (p *Plan) declares(name string) bool {
	for i := range p.Inputs {
		if p.Inputs[i].Name == name {
			return true
		}
	}
	return false
}

// intOf is internal/number.Int for the values a plan meets: v as an
// int64, and whether it is an integer that fits. A JSON number is an int
// when its text is, or when it is a float64 without a fraction below
// 2^53 (1.0, 1e0), as a float64 is.
func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case jsonNumber:
		if i, ok := parseInt(string(x)); ok {
			return i, true
		}
		if f, ok := parseDouble(string(x)); ok {
			return intOf(f)
		}
	}
	return 0, false
}
