package engine

import (
	"bytes"
	"encoding/json"
)

// Decision is what a rule set decided for one input: a DLPack device, or an
// exception the array library raises. Rule and RuleSet say which rule of
// which version decided, so every decision can be traced to a file.
type Decision struct {
	// DeviceType is the DLPack device type name, such as "kDLCUDA"; empty
	// when Error is set.
	DeviceType string
	// DeviceTypeCode is its DLDeviceType code, such as 2.
	DeviceTypeCode int64
	// DeviceID is the DLDevice device_id.
	DeviceID int64
	// Copy is set when the array is first copied into the device, and the
	// copy exported: the exchange's "copy, then export".
	Copy bool
	// Capsule is the capsule kind, CapsuleUnversioned or CapsuleVersioned,
	// where the rule set decides it; empty otherwise.
	Capsule string
	// Flags are the DLPack flags of a versioned capsule.
	Flags Flags
	// Error is the exception raised instead of a device, or nil. It is
	// shared between equal decisions: do not modify it.
	Error *Exception
	// Rule is the id of the rule that matched.
	Rule string
	// RuleSet is "name@version" of the rule set that decided.
	RuleSet string
}

// Exception is a decision to raise an exception, such as BufferError.
type Exception struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// decisionJSON is the public wire form of a Decision, field for field in
// the order the command line's contract gives.
type decisionJSON struct {
	DeviceType     string     `json:"device_type,omitempty"`
	DeviceTypeCode *int64     `json:"device_type_code,omitempty"`
	DeviceID       *int64     `json:"device_id,omitempty"`
	Copy           bool       `json:"copy,omitempty"`
	Capsule        string     `json:"capsule,omitempty"`
	Flags          Flags      `json:"flags,omitempty"`
	Error          *Exception `json:"error,omitempty"`
	Rule           string     `json:"rule"`
	RuleSet        string     `json:"ruleset"`
}

// Equal reports whether two decisions are the same, exception included.
func (d Decision) Equal(o Decision) bool {
	same := d.Error == o.Error || d.Error != nil && o.Error != nil && *d.Error == *o.Error
	d.Error, o.Error = nil, nil
	return same && d == o
}

// MarshalJSON writes the decision as
// {"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"...","ruleset":"jax@v3"}
// (with "copy":true, "capsule" and "flags" where the rules decide them) or {"error":{"type":"BufferError","message":"..."},"rule":"...","ruleset":"..."}.
// json.Marshal escapes '<', '>' and '&' in every output; a json.Encoder with
// SetEscapeHTML(false), as the command line uses, keeps "<unknown>" as is.
func (d Decision) MarshalJSON() ([]byte, error) {
	w := decisionJSON{Error: d.Error, Rule: d.Rule, RuleSet: d.RuleSet}
	if d.Error == nil {
		w.DeviceType, w.DeviceTypeCode, w.DeviceID = d.DeviceType, &d.DeviceTypeCode, &d.DeviceID
		w.Copy, w.Capsule, w.Flags = d.Copy, d.Capsule, d.Flags
	}
	return marshalJSON(w)
}

// marshalJSON is json.Marshal without HTML escaping: a platform version
// such as "<unknown>" reads as itself, not as "\u003cunknown\u003e".
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (d *Decision) UnmarshalJSON(data []byte) error {
	var w decisionJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = Decision{DeviceType: w.DeviceType, Copy: w.Copy, Capsule: w.Capsule, Flags: w.Flags, Error: w.Error, Rule: w.Rule, RuleSet: w.RuleSet}
	if w.DeviceTypeCode != nil {
		d.DeviceTypeCode = *w.DeviceTypeCode
	}
	if w.DeviceID != nil {
		d.DeviceID = *w.DeviceID
	}
	return nil
}

// String is the decision's JSON form, for messages.
func (d Decision) String() string {
	b, _ := d.MarshalJSON()
	return string(b)
}
