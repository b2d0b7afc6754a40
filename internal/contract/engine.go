package contract

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dlroute/dlroute/engine"
)

// What the module and the C library hand a host for one rule set, and
// the binary codec's engine side: inputs decoded into an engine.Input,
// decisions encoded from an engine.Decision, errors as JSON objects.

// Description is what dlroute_describe returns for a handle: what a host
// needs to write binary inputs and read binary decisions.
type Description struct {
	Ref         string              `json:"ref"`
	Inputs      []engine.InputDecl  `json:"inputs"`
	Rules       []string            `json:"rules"`
	DeviceTypes []engine.DeviceType `json:"device_types"`
}

// BinaryInput decodes a binary input (DecodeFields), one field for
// each of decls, into an engine.Input; an absent field is left out.
func BinaryInput(in []byte, decls []engine.InputDecl) (engine.Input, error) {
	input := make(engine.Input, len(decls))
	if err := BinaryInputInto(input, in, decls); err != nil {
		return nil, err
	}
	return input, nil
}

// BinaryInputInto is BinaryInput into dst, which it clears first: a
// caller that decides one input at a time keeps one map, where
// BinaryInput makes a map and two slices a call. On an error dst holds
// the fields before the bad one.
func BinaryInputInto(dst engine.Input, in []byte, decls []engine.InputDecl) error {
	clear(dst)
	b := in
	for i, d := range decls {
		v, present, rest, err := decodeField(b, i)
		if err != nil {
			return binaryInputError(err)
		}
		if present {
			dst[d.Name] = v
		}
		b = rest
	}
	if len(b) != 0 {
		return binaryInputError(fmt.Errorf("%d bytes after the last field", len(b)))
	}
	return nil
}

// binaryInputError is a malformed binary input: json_syntax, or
// invalid_utf8 for a JSON field that is not UTF-8, as the JSON line path
// codes the same bytes.
func binaryInputError(err error) error {
	code := engine.CodeJSON
	if errors.Is(err, errNotUTF8) {
		code = engine.CodeInvalidUTF8
	}
	return &engine.Error{Code: code, Message: "binary input: " + err.Error()}
}

// AppendDecision appends the binary decision of d (wasm/ABI.md), rule
// being the index of d.Rule in the rule set's RuleIDs: AppendDevice,
// AppendExport where the decision sets copy, capsule or flags, or
// AppendException.
func AppendDecision(b []byte, rule uint32, d engine.Decision) []byte {
	switch {
	case d.Error != nil:
		return AppendException(b, rule, d.Error.Type, d.Error.Message)
	case d.Copy || d.Capsule != "" || d.Flags != 0:
		return AppendExport(b, rule, d.DeviceTypeCode, d.DeviceID, d.Copy, capsuleCode[d.Capsule], uint64(d.Flags))
	}
	return AppendDevice(b, rule, d.DeviceTypeCode, d.DeviceID)
}

// capsuleCode is the binary decision's code of each capsule kind the
// engine decides (it refuses any other).
var capsuleCode = map[string]byte{
	"":                        CapsuleNone,
	engine.CapsuleUnversioned: CapsuleUnversioned,
	engine.CapsuleVersioned:   CapsuleVersioned,
}

// ErrorJSON is the JSON of err as an *engine.Error: its own, or an
// eval_error with its text.
func ErrorJSON(err error) []byte {
	var e *engine.Error
	if !errors.As(err, &e) {
		e = &engine.Error{Code: engine.CodeEval, Message: err.Error()}
	}
	data, _ := json.Marshal(e)
	return data
}
