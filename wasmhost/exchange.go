package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/machine"
)

// Codes of an *ExchangeError: an exchange the rules decided and the host
// could not carry out. Like the engine's codes they are stable.
const (
	CodeCopyFailed = contract.CodeCopyFailed // the copier tried and failed; the cause is the copier's error
	CodeNoCopier   = contract.CodeNoCopier   // no copier of this host makes the copy decided (a copy on a GPU)
)

// ExchangeError is an exchange the rules decided and the host could not
// carry out. Nothing was exported, and the source buffer is as it was. Its
// JSON form is {"code","message","hint"}.
type ExchangeError struct {
	Code    engine.Code `json:"code"`
	Message string      `json:"message"`
	Hint    string      `json:"hint,omitempty"`

	err error // the copier's error, for errors.Is and errors.As
}

// Error returns the message.
func (e *ExchangeError) Error() string { return e.Message }

// Unwrap returns the copier's error, if any.
func (e *ExchangeError) Unwrap() error { return e.err }

// exchangeError makes an *engine.Error of the guest package (the
// module's error object, or the same built natively) an *ExchangeError.
func exchangeError(e *engine.Error, cause error) *ExchangeError {
	return &ExchangeError{Code: e.Code, Message: e.Message, Hint: e.Hint, err: cause}
}

// copyFailed is the error of a copier that failed, the same from either
// engine.
func copyFailed(cause error) *ExchangeError {
	return exchangeError(contract.CopyFailed(cause.Error()), cause)
}

// ExchangeResult is an exchange carried out: the decision, and what was
// exported.
type ExchangeResult struct {
	Decision engine.Decision
	// Buffer is the buffer exported: for an export in place, the source's
	// memory, on the decision's device (pinned memory exported on kDLCPU
	// is the same bytes); for a copy, a new buffer on (kDLCPU, 0) that the
	// caller owns alone (IS_COPIED). Nil when the decision is an exception.
	Buffer *machine.Buffer
}

// CarryOut carries out a decision for src natively, the way
// RuleSet.Exchange does through the module, with the same results and
// errors: an exception exports nothing, an export in place exports src,
// and a copy into host memory is made by c (nil: this host has none). A
// copy anywhere else (copy=True on a GPU) is an *ExchangeError with
// CodeNoCopier, and a copier's failure one with CodeCopyFailed.
func CarryOut(ctx context.Context, d engine.Decision, src machine.Buffer, c machine.Copier) (ExchangeResult, error) {
	step, err := contract.StepOf(d)
	if err != nil {
		return ExchangeResult{}, exchangeError(engine.Errors(err)[0], nil)
	}
	res := ExchangeResult{Decision: d}
	switch step {
	case contract.StepRaise:
		return res, nil
	case contract.StepInPlace:
		res.Buffer = inPlace(d, src)
		return res, nil
	}
	if c == nil {
		return ExchangeResult{}, exchangeError(contract.NoCopier(), nil)
	}
	// As the host function does: a copier that hangs past ctx, or panics,
	// is a failed copy.
	dst, err := withDeadline(ctx, func(ctx context.Context) (machine.Buffer, error) { return c.CopyToHost(ctx, src) })
	if err != nil {
		return ExchangeResult{}, copyFailed(err)
	}
	res.Buffer = &dst
	return res, nil
}

// inPlace is src exported as it is, on the decision's device.
func inPlace(d engine.Decision, src machine.Buffer) *machine.Buffer {
	return &machine.Buffer{DeviceType: int32(d.DeviceTypeCode), DeviceID: int32(d.DeviceID), Ptr: src.Ptr, Data: src.Data, Size: src.Size}
}

// Exchange decides one JSON input of an exchange rule set (a line of
// `dlroute resolve --json --ruleset exchange`) in the module and carries
// the decision out for src: the module exports src in place, or asks the
// host to copy it into host memory (copy_to_host, which runs the runner's
// Host.Copier). src is registered in the runner's table of buffers for the call
// and the table holds neither it nor its copy afterwards. Errors are an
// *engine.Error for an input or evaluation error, and an *ExchangeError
// for a decision that could not be carried out, as CarryOut's.
func (rs *RuleSet) Exchange(ctx context.Context, line []byte, src machine.Buffer) (ExchangeResult, error) {
	buffers := rs.r.cfg.Host.buffers
	h := buffers.add(src)
	var answer struct {
		Decision engine.Decision `json:"decision"`
		Buffer   *uint32         `json:"buffer"`
	}
	err := rs.call(ctx, "dlroute_exchange", line, func(out []byte) error {
		if err := json.Unmarshal(out, &answer); err != nil {
			return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("dlroute_exchange answered %q: %v", out, err)}
		}
		return nil
	}, uint64(h))
	// Any copy a call made that then trapped and ran again is dropped here
	// with the rest.
	copies, copyErr := buffers.release(h)
	if err != nil {
		return ExchangeResult{}, exchangeFailure(err, copyErr)
	}
	return exchangeResult(answer.Decision, answer.Buffer, h, src, copies)
}

// exchangeResult is an exchange's result from the module's answer: the
// buffer it exported (nil: none) is the source h, exported in place, or
// one of the copies the host made for the call.
func exchangeResult(d engine.Decision, buffer *uint32, h uint32, src machine.Buffer, copies map[uint32]machine.Buffer) (ExchangeResult, error) {
	res := ExchangeResult{Decision: d}
	switch {
	case buffer == nil:
	case *buffer == h:
		res.Buffer = inPlace(res.Decision, src)
	default:
		dst, ok := copies[*buffer]
		if !ok {
			return ExchangeResult{}, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("dlroute_exchange exported buffer %d, which is neither the source nor a copy of it", *buffer)}
		}
		res.Buffer = &dst
	}
	return res, nil
}

// exchangeFailure is the error of a call of dlroute_exchange: the module's
// copy_failed and no_copier objects become *ExchangeError, with the
// copier's own error where the host function noted one.
func exchangeFailure(err, copyErr error) error {
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != CodeCopyFailed && e.Code != CodeNoCopier {
		return err
	}
	if e.Code == CodeCopyFailed && copyErr != nil {
		return copyFailed(copyErr)
	}
	return exchangeError(e, nil)
}
