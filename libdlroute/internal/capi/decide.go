package capi

import (
	"context"

	"github.com/dlroute/dlroute/internal/contract"
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
	input, err := contract.BinaryInput(in, r.decls)
	if err != nil {
		return errorJSON(err), StatusBadArgument
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	d, err := r.rs.Resolve(ctx, input)
	if err != nil {
		return errorJSON(err), contract.Classify(err)
	}
	return contract.AppendDecision(nil, r.rules[d.Rule], d), StatusOK
}

// ExchangeJSON decides one JSON input of an exchange rule set (rules/
// exchange) as ResolveJSON does, and says what carrying it out takes: the
// step (DLROUTE_STEP_* in dlroute.h). A decision that copies anywhere but
// into host memory cannot be carried out by a host (it has no device
// copier): StatusHostError with an error object, code no_copier, as the
// WebAssembly module answers it.
func ExchangeJSON(ctx context.Context, h uint64, line []byte) ([]byte, contract.Step, Status) {
	r, ok := ruleSetOf(h)
	if !ok {
		return nil, contract.StepRaise, StatusBadHandle
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	return contract.Exchange(ctx, r.rs, line)
}
