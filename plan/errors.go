package plan

import (
	"strconv"
	"unicode/utf8"
)

// Code is an error's stable kind: the engine's codes (engine.Code), so
// that a host answers a plan's errors as it answers the engine's.
type Code string

// The codes Decide returns, as the engine spells them.
const (
	CodeJSON         Code = "json_syntax"
	CodeUnknownField Code = "unknown_field"
	CodeMissingField Code = "missing_field"
	CodeWrongType    Code = "wrong_type"
	CodeTooLong      Code = "too_long"
	CodeInvalidUTF8  Code = "invalid_utf8"
	CodeEval         Code = "eval_error"
	CodeCostLimit    Code = "cost_limit"
	CodeNoMatch      Code = "no_rule_matched"
	CodeBadOutcome   Code = "bad_outcome"
	// CodeBadPlan is a plan's bytes that Decode cannot read.
	CodeBadPlan Code = "bad_plan"
)

// Input reports whether the code says the input was not valid.
//
//go:noinline
func (c Code) Input() bool {
	switch c {
	case CodeJSON, CodeUnknownField, CodeMissingField, CodeWrongType, CodeTooLong, CodeInvalidUTF8:
		return true
	}
	return false
}

// Error is every error of this package: the engine's *Error, field for
// field, so that its JSON and its text are the engine's.
type Error struct {
	Code    Code      `json:"code"`
	Message string    `json:"message"`
	Pos     *Position `json:"position,omitempty"`
	Source  string    `json:"source,omitempty"`
	Hint    string    `json:"hint,omitempty"`
}

// Error formats the error as the engine does: "file:line:col: message",
// then the source line and a caret under the column.
func (e *Error) Error() string {
	var b []byte
	if e.Pos != nil {
		b = append(b, e.Pos.String()...)
		b = append(b, ": "...)
	}
	b = append(b, e.Message...)
	if e.Pos != nil && e.Source != "" {
		b = append(b, "\n | "...)
		b = append(b, e.Source...)
		if e.Pos.Column > 0 {
			b = append(b, "\n | "...)
			for _, r := range e.Source[:min(max(e.Pos.Column-1, 0), len(e.Source))] {
				if r == '\t' {
					b = append(b, '\t')
				} else {
					b = append(b, '.')
				}
			}
			b = append(b, '^')
		}
	}
	return string(b)
}

// String formats the position as file:line:col, leaving out what is
// unknown, and quoting a file name a terminal would act on.
func (p Position) String() string {
	file := p.File
	if !utf8.ValidString(file) || !printable(file) {
		file = quote(file)
	}
	switch {
	case p.Line == 0:
		return file
	case p.Column == 0:
		return file + ":" + strconv.Itoa(p.Line)
	}
	return file + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// AppendJSON appends the error's JSON, byte for byte what json.Marshal
// writes for it (and for the engine's *Error of the same fields):
// {"code":...,"message":...} with "position", "source" and "hint" where
// set, HTML characters escaped.
func (e *Error) AppendJSON(b []byte) []byte {
	w := &jsonWriter{b: b}
	w.lit(`{"code":`)
	w.html(string(e.Code))
	w.lit(`,"message":`)
	w.html(e.Message)
	if e.Pos != nil {
		w.lit(`,"position":{"file":`)
		w.html(e.Pos.File)
		w.lit(`,"line":`)
		w.int64(int64(e.Pos.Line))
		w.lit(`,"column":`)
		w.int64(int64(e.Pos.Column))
		w.lit("}")
	}
	if e.Source != "" {
		w.lit(`,"source":`)
		w.html(e.Source)
	}
	if e.Hint != "" {
		w.lit(`,"hint":`)
		w.html(e.Hint)
	}
	w.lit("}")
	return w.b
}

//go:noinline
func printable(s string) bool {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
