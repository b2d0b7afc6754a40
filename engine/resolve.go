package engine

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
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
	d, err := rs.evaluate(ctx, in, nil)
	if err != nil {
		return Decision{}, err
	}
	rs.memo.Put(key, d)
	return d, nil
}

// activation is the variables of one evaluation: inputs and tables bound up
// front, values computed the first time a rule reads them.
type activation struct {
	rs    *RuleSet
	ctx   context.Context
	in    Input
	vals  []ref.Val // by slot
	err   *Error    // the first failure inside a value
	trace *tracer   // nil unless explaining
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
	i := slot - len(a.rs.inputs) - len(a.rs.tables)
	val := &a.rs.values[i]
	var out ref.Val
	var err *Error
	if val.imp != nil {
		out, err = a.importDecision(i, val)
	} else {
		out, err = a.eval(val.compiled)
	}
	a.trace.value(i, out, err)
	if err != nil {
		if a.err == nil {
			a.err = err
		}
		return types.NewErr("value %s failed", val.name), true
	}
	a.vals[slot] = out
	return out, true
}

// importDecision decides the input with an imported rule set.
func (a *activation) importDecision(i int, val *value) (ref.Val, *Error) {
	sub := importInput(val.imp, a.in)
	var d Decision
	var err error
	if a.trace != nil {
		var x Explanation
		x, err = val.imp.Explain(a.ctx, sub)
		d = x.Decision
		a.trace.imports[i] = &x
	} else {
		d, err = val.imp.Resolve(a.ctx, sub)
	}
	if err != nil {
		e := &Error{Code: CodeEval, Message: fmt.Sprintf("import %s (%s): %v", val.name, val.imp.ref, err), err: err}
		if inner, ok := err.(*Error); ok {
			e.Code, e.Pos, e.Source, e.Hint = inner.Code, inner.Pos, inner.Source, inner.Hint
		}
		return nil, e
	}
	return decisionValue(d), nil
}

func (a *activation) Parent() interpreter.Activation { return nil }

// eval evaluates one expression. The context is checked before each
// expression, and inside one whose worst case passes InterruptAbove
// (interruptible): cel-go's ContextEval sets up a cancelable context per
// call, which cost a third of an uncached decision, so an expression
// proved cheaper runs without it.
func (a *activation) eval(c compiled) (ref.Val, *Error) {
	if err := a.ctx.Err(); err != nil {
		return nil, &Error{Code: CodeCanceled, Message: err.Error(), err: err}
	}
	var out ref.Val
	var err error
	if p, ok := c.prg.(interruptible); ok {
		out, _, err = p.ContextEval(a.ctx, a)
	} else {
		out, _, err = c.prg.Eval(a)
	}
	if a.err != nil {
		return nil, a.err
	}
	if err != nil {
		if cerr := a.ctx.Err(); cerr != nil && errors.Is(err, interpreter.InterruptError{}) {
			e := c.expr.errAt(CodeCanceled, 1, 0, "%v", cerr)
			e.err = cerr
			return nil, e
		}
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

// newActivation binds an input's values, or their defaults, and the
// tables; values are left to be computed when read.
func (rs *RuleSet) newActivation(ctx context.Context, in Input, trace *tracer) *activation {
	a := &activation{rs: rs, ctx: ctx, in: in, vals: make([]ref.Val, len(rs.slots)), trace: trace}
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
	return a
}

// evaluate runs the rules in order; see Resolve. A tracer, when given,
// records each rule tried and each value computed.
func (rs *RuleSet) evaluate(ctx context.Context, in Input, trace *tracer) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, &Error{Code: CodeCanceled, Message: err.Error(), err: err}
	}
	a := rs.newActivation(ctx, in, trace)
	for i := range rs.rules {
		r := &rs.rules[i]
		ok, err := a.evalKind(r.when, types.BoolType, "a bool")
		a.trace.rule(r, ok == types.True, err)
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
		if err := a.exportFields(r, &d); err != nil {
			return Decision{}, err
		}
		return d, nil
	}
	return Decision{}, &Error{Code: CodeNoMatch, Message: fmt.Sprintf("no rule of %s matched", rs.ref),
		Hint: "end the rules with a catch-all rule (when: true)"}
}

// exportFields evaluates a device outcome's copy, capsule and flags, and
// checks that they make a DLPack export: flags only travel in a versioned
// capsule.
func (a *activation) exportFields(r *rule, d *Decision) *Error {
	o := r.device
	if o.copy.prg != nil {
		v, err := a.evalKind(o.copy, types.BoolType, "a bool")
		if err != nil {
			return err
		}
		d.Copy = v == types.True
	}
	if o.capsule.prg != nil {
		v, err := a.evalKind(o.capsule, types.StringType, "a string")
		if err != nil {
			return err
		}
		d.Capsule = string(v.(types.String))
		if d.Capsule != CapsuleUnversioned && d.Capsule != CapsuleVersioned {
			return o.capsule.expr.errAt(CodeBadOutcome, 1, 0, "rule %s: capsule %q is not %s or %s", r.id, d.Capsule, CapsuleUnversioned, CapsuleVersioned)
		}
	}
	if o.flags.prg != nil {
		v, err := a.eval(o.flags)
		if err != nil {
			return err
		}
		list, ok := v.(traits.Lister)
		if !ok {
			return o.flags.expr.errAt(CodeBadOutcome, 1, 0, "evaluated to %s; want a list of flags", v.Type().TypeName())
		}
		for it := list.Iterator(); it.HasNext() == types.True; {
			elem := it.Next()
			bit, ok := elem.(types.Int)
			if !ok || bit <= 0 || bit&(bit-1) != 0 || bits.TrailingZeros64(uint64(bit)) >= len(flagNames) {
				return o.flags.expr.errAt(CodeBadOutcome, 1, 0, "rule %s: %v is not a DLPACK_FLAG_BITMASK_* flag", r.id, elem)
			}
			d.Flags |= Flags(bit)
		}
		if d.Flags != 0 && d.Capsule != CapsuleVersioned {
			return o.flags.expr.errAt(CodeBadOutcome, 1, 0, "rule %s: flags %s need a %s capsule; an unversioned one has no flags", r.id, d.Flags, CapsuleVersioned)
		}
	}
	return nil
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
