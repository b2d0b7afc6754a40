package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Input is one set of named inputs for a rule set, such as
// {"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0}.
// Values are what encoding/json produces (string, float64 or json.Number,
// bool, nil, []any, map[string]any) or Go integers. A declared input with a
// default may be left out; a field the rule set does not declare is an error.
type Input map[string]any

// DecodeInput parses one JSON object, such as a line of `dlroute resolve
// --json`, and checks it against the rule set's declared inputs. Numbers
// keep their exact text (json.Number), so an int is never rounded. Invalid
// UTF-8 and a key given twice are errors, where encoding/json would
// silently replace the bytes or keep the last value.
func (rs *RuleSet) DecodeInput(data []byte) (Input, error) {
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
		return nil, &Error{Code: CodeJSON, Message: msg, err: err}
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
	in := Input(obj)
	if _, err := rs.check(nil, in); err != nil {
		return nil, err
	}
	if err := rs.checkUTF8(in); err != nil {
		return nil, err
	}
	return in, nil
}

// checkUTF8 is the part of input checking that check leaves out.
func (rs *RuleSet) checkUTF8(in Input) error {
	for i := range rs.inputs {
		if s, ok := in[rs.inputs[i].Name].(string); ok && !utf8.ValidString(s) {
			return &Error{Code: CodeInvalidUTF8, Message: fmt.Sprintf("input %s is not valid UTF-8 (at byte %d)", rs.inputs[i].Name, invalidUTF8At([]byte(s)))}
		}
	}
	return nil
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
// top level, or none. It is how DecodeInput sees that no key is given
// twice without decoding the line a second time, which took a quarter of
// a decision in the WebAssembly module; duplicateKey, which
// does decode it, runs only when the counts differ.
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

// check validates an input against the declared inputs and appends its
// canonical key to b; defaults fill what is left out. It allocates nothing
// for a valid input of scalars. Strings are checked for UTF-8 by checkUTF8,
// which Resolve runs only on inputs that are not memoised.
func (rs *RuleSet) check(b []byte, in Input) ([]byte, error) {
	found := 0
	for i := range rs.inputs {
		decl := &rs.inputs[i]
		v, ok := in[decl.Name]
		switch {
		case ok:
			found++
		case decl.Required:
			if err := rs.unknownField(in); err != nil {
				return b, err // most likely the missing one, misspelt
			}
			return b, &Error{Code: CodeMissingField, Message: fmt.Sprintf("input %s is missing; want %s", decl.Name, decl.typ.describe())}
		default:
			v = decl.Default
		}
		var err error
		if b, err = decl.typ.check(b, v); err != nil {
			code := CodeWrongType
			var inner *Error
			if errors.As(err, &inner) {
				code = inner.Code
			}
			return b, &Error{Code: code, Message: fmt.Sprintf("input %s %v", decl.Name, err), err: err}
		}
	}
	if found != len(in) {
		return b, rs.unknownField(in)
	}
	return b, nil
}

// unknownField reports the first field of in, by name, that is not a
// declared input, or nil.
func (rs *RuleSet) unknownField(in Input) error {
	for _, name := range slices.Sorted(maps.Keys(in)) {
		if !rs.isInput(name) {
			return &Error{Code: CodeUnknownField, Message: fmt.Sprintf("unknown input %q", name),
				Hint: "the inputs of " + rs.ref + " are: " + strings.Join(rs.inputNames(), ", ")}
		}
	}
	return nil
}

func (rs *RuleSet) isInput(name string) bool {
	return slices.ContainsFunc(rs.inputs, func(in input) bool { return in.Name == name })
}

func (rs *RuleSet) inputNames() []string {
	out := make([]string, len(rs.inputs))
	for i, in := range rs.inputs {
		out[i] = in.Name
	}
	return out
}
