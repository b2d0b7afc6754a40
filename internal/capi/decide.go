package capi

import (
	"context"

	"github.com/dlroute/dlroute/internal/abi"
	"github.com/dlroute/dlroute/internal/exchange"
)

// Resolve decides a binary input (wasm/ABI.md, "Binary input": one field
// per input in the order Describe lists them) and returns the binary
// decision ("Binary decision"), or an error object with StatusInputError,
// StatusEvalError or, for a malformed input, StatusBadArgument. A field
// left absent takes the input's default; nothing asks the machine.
func Resolve(ctx context.Context, h uint64, in []byte) ([]byte, Status) {
	r, ok := ruleSetOf(h)
	if !ok {
		return nil, StatusBadHandle
	}
	if len(in) > MaxInputLen {
		return TooLong(FormBinary)
	}
	input, err := abi.BinaryInput(in, r.decls)
	if err != nil {
		return errorJSON(err), StatusBadArgument
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	d, err := r.rs.Resolve(ctx, input)
	if err != nil {
		if lineStatus(err) == StatusInputError {
			return errorJSON(err), StatusInputError
		}
		return errorJSON(err), StatusEvalError
	}
	return abi.AppendDecision(nil, r.rules[d.Rule], d), StatusOK
}

// Steps of an exchange, as dlroute_exchange_json reports them
// (DLROUTE_STEP_* in dlroute.h).
const (
	StepRaise      = int32(exchange.StepNothing)    // the decision is an exception: raise it
	StepInPlace    = int32(exchange.StepInPlace)    // export the producer's buffer as it is
	StepCopyToHost = int32(exchange.StepCopyToHost) // copy into host memory, export the copy
)

// ExchangeJSON decides one JSON input of an exchange rule set (rules/
// exchange) as ResolveJSON does, and says what carrying it out takes: the
// step. A decision that copies anywhere but into host memory cannot be
// carried out by a host (it has no device copier): an eval_error line with
// the code no_copier.
func ExchangeJSON(ctx context.Context, h uint64, line []byte) ([]byte, int32, Status) {
	r, ok := ruleSetOf(h)
	if !ok {
		return nil, StepRaise, StatusBadHandle
	}
	step := StepRaise
	ctx, cancel := bounded(ctx)
	defer cancel()
	out, status := answerLine(line, func() ([]byte, error) {
		in, err := r.rs.DecodeInput(line)
		if err != nil {
			return nil, err
		}
		d, err := r.rs.Resolve(ctx, in)
		if err != nil {
			return nil, err
		}
		s, err := exchange.StepOf(d)
		if err != nil {
			return nil, err
		}
		step = int32(s)
		return d.MarshalJSON()
	})
	return out, step, status
}
