package engine

import (
	"context"
	"errors"
	"fmt"
)

// The JSON line contract. `dlroute resolve --json` reads one input object
// per line and writes one line for each; every host (the command line,
// serve, the WebAssembly guest, the C library) answers through these
// methods so that the bytes are the same everywhere.

// MaxLineLen is the longest JSON input line a host reads: `dlroute
// resolve --json`, serve's lines, the C library. It is well above the
// input's string limits, so a long field gets the field's own error.
const MaxLineLen = 4 << 20

// LineTooLong is the error of a line longer than MaxLineLen.
func LineTooLong() *Error {
	return &Error{Code: CodeTooLong, Message: fmt.Sprintf("line is longer than %d bytes", MaxLineLen)}
}

// ResolveJSON decides one JSON input object (a line of `dlroute resolve
// --json` without its newline) and returns the decision's JSON, byte for
// byte the line resolve --json writes for it. An input that is not valid
// for the rule set is an *Error whose Code.Input() is true; an
// evaluation that could not decide is any other *Error.
func (rs *RuleSet) ResolveJSON(ctx context.Context, line []byte) ([]byte, error) {
	in, err := rs.DecodeInput(line)
	if err != nil {
		return nil, err
	}
	d, err := rs.Resolve(ctx, in)
	if err != nil {
		return nil, err
	}
	return d.MarshalJSON()
}

// ExplainJSON decides one JSON input object as ResolveJSON does and
// returns the JSON of its Explanation: the decision and how it was
// reached. Errors are ResolveJSON's.
func (rs *RuleSet) ExplainJSON(ctx context.Context, line []byte) ([]byte, error) {
	in, err := rs.DecodeInput(line)
	if err != nil {
		return nil, err
	}
	x, err := rs.Explain(ctx, in)
	if err != nil {
		return nil, err
	}
	return x.MarshalJSON()
}

// LineError is what `dlroute resolve --json` writes, under "input_error"
// or "eval_error", for input line Line that it could not decide. Position
// is set for an evaluation error, which is in a rule file.
type LineError struct {
	Line     int       `json:"line"`
	Code     Code      `json:"code"`
	Message  string    `json:"message"`
	Position *Position `json:"position,omitempty"`
	Hint     string    `json:"hint,omitempty"`
}

// NewLineError is the LineError of err, an error of ResolveJSON, for
// input line n (1-based). An error that is not an *Error is an
// evaluation error with its text.
func NewLineError(n int, err error) LineError {
	var e *Error
	if errors.As(err, &e) {
		return LineError{n, e.Code, e.Message, e.Pos, e.Hint}
	}
	return LineError{Line: n, Code: CodeEval, Message: err.Error()}
}

// AnswerLine is the line, without its newline, that `dlroute resolve
// --json` writes for input line n (1-based) given what ResolveJSON (or
// ExplainJSON) returned for it: out itself, or {"input_error":{...}} or
// {"eval_error":{...}} for err.
func AnswerLine(n int, out []byte, err error) []byte {
	if err == nil {
		return out
	}
	kind := "eval_error"
	if list := Errors(err); len(list) == 1 && list[0].Code.Input() {
		kind = "input_error" // several errors are never one input's fault
	}
	// A LineError of strings and ints always marshals: encoding/json
	// replaces invalid UTF-8 rather than fail.
	b, _ := marshalJSON(map[string]LineError{kind: NewLineError(n, err)})
	return b
}
