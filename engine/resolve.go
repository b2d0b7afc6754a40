package engine

import (
	"context"
	"errors"
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// Resolve decides one input: the first rule whose condition holds gives the
// decision. The input is checked first (CodeUnknownField, CodeMissingField,
// CodeWrongType, CodeTooLong, CodeInvalidUTF8). A decision, device or
// exception, is a result, not an error; the error is for an evaluation that
// could not decide (CodeEval, CodeCostLimit, CodeCanceled, CodeNoMatch,
// CodeBadOutcome). Equal inputs give equal decisions, so decisions are
// memoised; a memoised Resolve allocates nothing.
func (rs *RuleSet) Resolve(ctx context.Context, in Input) (Decision, error) {
	var buf [256]byte
	key, err := rs.check(buf[:0], in)
	if err != nil {
		return Decision{}, err
	}
	if d, ok := rs.memo.Get(key); ok {
		return d, nil
	}
	if err := rs.checkUTF8(in); err != nil {
		return Decision{}, err
	}
	d, err := rs.evaluate(ctx, in)
	if err != nil {
		return Decision{}, err
	}
	rs.memo.Put(key, d)
	return d, nil
}

// activation is the variables of one evaluation: inputs and tables bound up
// front, values computed the first time a rule reads them.
type activation struct {
	rs   *RuleSet
	ctx  context.Context
	vals []ref.Val // by slot
	err  *Error    // the first failure inside a value
}

var _ interpreter.Activation = (*activation)(nil)

func (a *activation) ResolveName(name string) (any, bool) {
	slot, ok := a.rs.slots[name]
	if !ok {
		return nil, false
	}
	if v := a.vals[slot]; v != nil {
		return v, true
	}
	val := &a.rs.values[slot-len(a.rs.inputs)-len(a.rs.tables)]
	out, err := a.eval(val.compiled)
	if err != nil {
		if a.err == nil {
			a.err = err
		}
		return types.NewErr("value %s failed", val.name), true
	}
	a.vals[slot] = out
	return out, true
}

func (a *activation) Parent() interpreter.Activation { return nil }

// eval evaluates one expression. The context is checked before each
// expression rather than inside it: cel-go's ContextEval sets up a
// cancelable context per call, which cost a third of an uncached decision,
// and the cost limit already bounds how long one expression can run.
func (a *activation) eval(c compiled) (ref.Val, *Error) {
	if err := a.ctx.Err(); err != nil {
		return nil, &Error{Code: CodeCanceled, Message: err.Error(), err: err}
	}
	out, _, err := c.prg.Eval(a)
	if a.err != nil {
		return nil, a.err
	}
	if err != nil {
		code := CodeEval
		var cancel interpreter.EvalCancelledError
		if errors.As(err, &cancel) && cancel.Cause == interpreter.CostLimitExceeded {
			code = CodeCostLimit
		}
		e := c.expr.errAt(code, 1, 0, "%v", err)
		e.err = err
		return nil, e
	}
	return out, nil
}

// evaluate runs the rules in order; see Resolve.
func (rs *RuleSet) evaluate(ctx context.Context, in Input) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, &Error{Code: CodeCanceled, Message: err.Error(), err: err}
	}
	a := &activation{rs: rs, ctx: ctx, vals: make([]ref.Val, len(rs.slots))}
	for i, decl := range rs.inputs {
		v, ok := in[decl.Name]
		if !ok {
			v = decl.Default
		}
		a.vals[i] = decl.typ.celValue(v)
	}
	for i, t := range rs.tables {
		a.vals[len(rs.inputs)+i] = t.val
	}
	for i := range rs.rules {
		r := &rs.rules[i]
		ok, err := a.evalKind(r.when, types.BoolType, "a bool")
		if err != nil {
			return Decision{}, err
		}
		if ok != types.True {
			continue
		}
		d := Decision{Rule: r.id, RuleSet: rs.ref}
		if r.raise != nil {
			msg, err := a.evalKind(r.raise.message, types.StringType, "a string")
			if err != nil {
				return Decision{}, err
			}
			d.Error = &Exception{Type: r.raise.typ, Message: string(msg.(types.String))}
			return d, nil
		}
		code, err := a.evalKind(r.device.typ, types.IntType, "a device type code")
		if err != nil {
			return Decision{}, err
		}
		d.DeviceTypeCode = int64(code.(types.Int))
		name, known := rs.deviceNames[d.DeviceTypeCode]
		if !known {
			return Decision{}, r.device.typ.expr.errAt(CodeBadOutcome, 1, 0, "rule %s: device type code %d is not in %s", r.id, d.DeviceTypeCode, DeviceTypesFile)
		}
		d.DeviceType = name
		id, err := a.evalKind(r.device.id, types.IntType, "an int")
		if err != nil {
			return Decision{}, err
		}
		d.DeviceID = int64(id.(types.Int))
		return d, nil
	}
	return Decision{}, &Error{Code: CodeNoMatch, Message: fmt.Sprintf("no rule of %s matched", rs.ref),
		Hint: "end the rules with a catch-all rule (when: true)"}
}

// evalKind evaluates an expression whose checked type allows dyn, and checks
// the run-time type: a null where a device id belongs is a bad outcome.
func (a *activation) evalKind(c compiled, want *cel.Type, desc string) (ref.Val, *Error) {
	v, err := a.eval(c)
	if err != nil {
		return nil, err
	}
	if v.Type() != want {
		return nil, c.expr.errAt(CodeBadOutcome, 1, 0, "evaluated to %s (%v); want %s", v.Type().TypeName(), v, desc)
	}
	return v, nil
}
