package engine

import (
	"errors"
	"strings"
)

// Answer is what a rule set gives one input: a Decision, or the *Error
// that kept it from deciding (an input it refuses, an expression that
// fails at run time). Diff compares answers, so an evaluation error on one
// side is a difference like any other, not a failure of the comparison.
type Answer struct {
	Decision Decision // when Err is nil
	Err      *Error
}

// answerOf makes an Answer of what Resolve returned.
func answerOf(d Decision, err error) Answer {
	if err == nil {
		return Answer{Decision: d}
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Code: CodeEval, Message: err.Error(), err: err}
	}
	return Answer{Err: e}
}

// MarshalJSON writes a decision as Decision.MarshalJSON does, and an error
// as `dlroute resolve --json` reports one: {"input_error":{...}} for an
// input the rule set refuses, {"eval_error":{...}} for any other.
func (a Answer) MarshalJSON() ([]byte, error) {
	if a.Err == nil {
		return a.Decision.MarshalJSON()
	}
	kind := "eval_error"
	if a.Err.Code.Input() {
		kind = "input_error"
	}
	return marshalJSON(map[string]*Error{kind: a.Err})
}

// Equal reports whether two answers are the same: equal decisions by
// Decision.Equal, leaving aside which rule set decided (the two sides of a
// diff are different versions), or errors with the same code and message
// (positions name different files).
func (a Answer) Equal(b Answer) bool {
	if a.Err != nil || b.Err != nil {
		return a.Err != nil && b.Err != nil && a.Err.Code == b.Err.Code && a.Err.Message == b.Err.Message
	}
	a.Decision.RuleSet, b.Decision.RuleSet = "", ""
	return a.Decision.Equal(b.Decision)
}

// Outcome is an answer without what varies with the input: the rule and
// the kind of decision it made. Diff groups inputs by the outcomes on
// either side. Messages and device ids are left out: a message quotes the
// input, and a device id is the input's hardware id.
//
// Outcome is the one place that says which parts of a decision group
// inputs: a field added to Decision that does not quote the input (whether
// it copies, the capsule name, flags) is added here, and to fieldsOf.
type Outcome struct {
	Rule       string `json:"rule,omitempty"`
	DeviceType string `json:"device_type,omitempty"`
	Copy       bool   `json:"copy,omitempty"`
	Capsule    string `json:"capsule,omitempty"`
	Flags      Flags  `json:"flags,omitempty"`
	Exception  string `json:"error_type,omitempty"` // the exception's type, such as BufferError
	Failure    Code   `json:"failure,omitempty"`    // the error's code, when the rules could not decide
}

// Outcome is the answer's Outcome.
func (a Answer) Outcome() Outcome {
	switch {
	case a.Err != nil:
		return Outcome{Failure: a.Err.Code}
	case a.Decision.Error != nil:
		return Outcome{Rule: a.Decision.Rule, Exception: a.Decision.Error.Type}
	}
	d := a.Decision
	return Outcome{Rule: d.Rule, DeviceType: d.DeviceType, Copy: d.Copy, Capsule: d.Capsule, Flags: d.Flags}
}

// String reads "gpu (kDLCUDA)", "gpu-unknown-platform (BufferError)",
// "copy-to-host (kDLCPU, copy, dltensor_versioned, DLPACK_FLAG_BITMASK_IS_COPIED)"
// or "eval_error".
func (o Outcome) String() string {
	if o.Failure != "" {
		return string(o.Failure)
	}
	parts := []string{o.DeviceType + o.Exception}
	if o.Copy {
		parts = append(parts, "copy")
	}
	if o.Capsule != "" {
		parts = append(parts, o.Capsule)
	}
	if o.Flags != 0 {
		parts = append(parts, o.Flags.String())
	}
	return o.Rule + " (" + strings.Join(parts, ", ") + ")"
}

// fieldSet is a set of the JSON fields of an answer.
type fieldSet uint16

const (
	fieldRule fieldSet = 1 << iota
	fieldDeviceType
	fieldDeviceID
	fieldCopy
	fieldCapsule
	fieldFlags
	fieldErrorType
	fieldErrorMessage
	fieldFailure
)

var fieldNames = []string{"rule", "device_type", "device_id", "copy", "capsule", "flags", "error.type", "error.message", "failure"}

// names lists the fields in the order of an answer's JSON.
func (s fieldSet) names() []string {
	out := []string{}
	for i, name := range fieldNames {
		if s&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// fieldsOf is the fields in which two answers differ.
func fieldsOf(a, b Answer) fieldSet {
	if a.Err != nil || b.Err != nil {
		return fieldFailure
	}
	x, y := a.Decision, b.Decision
	var s fieldSet
	if x.Rule != y.Rule {
		s |= fieldRule
	}
	if x.Error == nil || y.Error == nil {
		if x.DeviceType != y.DeviceType || x.DeviceTypeCode != y.DeviceTypeCode || (x.Error == nil) != (y.Error == nil) {
			s |= fieldDeviceType
		}
		if x.DeviceID != y.DeviceID || (x.Error == nil) != (y.Error == nil) {
			s |= fieldDeviceID
		}
		if x.Copy != y.Copy {
			s |= fieldCopy
		}
		if x.Capsule != y.Capsule {
			s |= fieldCapsule
		}
		if x.Flags != y.Flags {
			s |= fieldFlags
		}
	}
	if x.Error != nil || y.Error != nil {
		if x.Error == nil || y.Error == nil || x.Error.Type != y.Error.Type {
			s |= fieldErrorType
		}
		if x.Error == nil || y.Error == nil || x.Error.Message != y.Error.Message {
			s |= fieldErrorMessage
		}
	}
	return s
}
