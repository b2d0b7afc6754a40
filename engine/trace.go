package engine

import (
	"context"
	"fmt"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// Explanation is a decision with how it was reached: what a person asks
// for when a decision surprises them (`dlroute resolve --explain`).
type Explanation struct {
	Decision Decision `json:"decision"`
	Trace    Trace    `json:"trace"`
}

// MarshalJSON writes {"decision":{...},"trace":{...}} without escaping
// HTML, as the command line writes decisions.
func (x Explanation) MarshalJSON() ([]byte, error) {
	type plain Explanation
	return marshalJSON(plain(x))
}

// Trace is the rules tried and the values computed for one decision.
type Trace struct {
	// Rules are the rules tried, in order; the last one matched and
	// decided (or failed).
	Rules []RuleStep `json:"rules"`
	// Values are every named value of the rule set, in file order, with
	// what it evaluated to for this input. Used says whether the decision
	// read it; the others are computed for the explanation only.
	Values []ValueStep `json:"values"`
}

// RuleStep is one rule tried: whether its condition held.
type RuleStep struct {
	Rule     string   `json:"rule"`
	Matched  bool     `json:"matched"`
	Error    string   `json:"error,omitempty"` // its condition failed to evaluate
	Position Position `json:"position"`
}

// ValueStep is one named value and what it evaluated to: a JSON value
// (device types in tables are their codes), or the error it failed with.
// An import's value is its decision, and Import explains it.
type ValueStep struct {
	Name     string       `json:"name"`
	Value    any          `json:"value"`
	Error    string       `json:"error,omitempty"`
	Used     bool         `json:"used"`
	Position *Position    `json:"position,omitempty"`
	Import   *Explanation `json:"import,omitempty"`
}

// Explain decides one input like Resolve, and records how: the rules
// tried and every value. It does not use the memo, and evaluates every
// value, even those the decision did not read, so it is slower than
// Resolve; the decision is the same. An input error is returned as
// Resolve returns it; an evaluation error is returned with the trace up to
// the failure.
func (rs *RuleSet) Explain(ctx context.Context, in Input) (Explanation, error) {
	if _, err := rs.check(nil, in); err != nil {
		return Explanation{}, err
	}
	if err := rs.checkUTF8(in); err != nil {
		return Explanation{}, err
	}
	t := &tracer{rs: rs, values: make([]ValueStep, len(rs.values)), done: make([]bool, len(rs.values)),
		computed: make([]ref.Val, len(rs.values)), imports: map[int]*Explanation{}}
	d, err := rs.evaluate(ctx, in, t)
	x := Explanation{Decision: d, Trace: Trace{Rules: t.rules}}
	// The values the decision did not read, computed in a fresh activation
	// of the same input so that the steps above stay as they happened.
	used := append([]bool(nil), t.done...)
	a := rs.newActivation(ctx, in, t)
	first := len(rs.inputs) + len(rs.tables)
	for i, v := range t.computed {
		a.vals[first+i] = v // nil where not computed, or failed
	}
	for i, v := range rs.values {
		if !t.done[i] {
			a.err = nil
			a.ResolveName(v.name)
		}
	}
	for i := range t.values {
		t.values[i].Used = used[i]
		if imp, ok := t.imports[i]; ok {
			t.values[i].Import = imp
		}
	}
	x.Trace.Values = t.values
	return x, err
}

// tracer records an evaluation for Explain. Its methods do nothing on a
// nil tracer, so Resolve pays one nil check per step.
type tracer struct {
	rs       *RuleSet
	rules    []RuleStep
	values   []ValueStep // by value index
	done     []bool
	computed []ref.Val // what each value evaluated to, reused by the second pass
	imports  map[int]*Explanation
}

func (t *tracer) rule(r *rule, matched bool, err *Error) {
	if t == nil {
		return
	}
	step := RuleStep{Rule: r.id, Matched: matched && err == nil, Position: r.pos}
	if err != nil {
		step.Error = err.Message
	}
	t.rules = append(t.rules, step)
}

func (t *tracer) value(i int, v ref.Val, err *Error) {
	if t == nil || t.done[i] {
		return
	}
	t.done[i] = true
	val := t.rs.values[i]
	step := ValueStep{Name: val.name, Position: &val.pos}
	if val.imp == nil {
		p := val.expr.position(1, 0)
		step.Position = &p
	}
	if err != nil {
		step.Error = err.Message
	} else {
		step.Value = nativeValue(v)
		t.computed[i] = v
	}
	t.values[i] = step
}

// nativeValue is a CEL value as JSON sees it.
func nativeValue(v ref.Val) any {
	switch x := v.(type) {
	case types.Null:
		return nil
	case types.String:
		return string(x)
	case types.Int:
		return int64(x)
	case types.Uint:
		return uint64(x)
	case types.Double:
		return float64(x)
	case types.Bool:
		return bool(x)
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			out[fmt.Sprint(nativeValue(k))] = nativeValue(x.Get(k))
		}
		return out
	case traits.Lister:
		out := []any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			out = append(out, nativeValue(it.Next()))
		}
		return out
	}
	return fmt.Sprint(v.Value())
}
