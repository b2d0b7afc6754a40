package engine

import (
	"cmp"
	"fmt"
	"slices"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/dlroute/dlroute/internal/number"
	"github.com/dlroute/dlroute/plan"
)

// CodePlanUnsupported is an expression that a plan cannot hold: CEL
// outside what package plan evaluates. Plan itself only reports it;
// lint and every host's gate (live.Plans) refuse such a rule set, so
// that every host accepts the same rule sets.
const CodePlanUnsupported Code = "plan_unsupported"

// PlanStepsPerCost is how many plan steps (nodes evaluated) a decision
// may take for each unit of its cost bound (MaxDecisionCost's measure).
// A step is cheaper than what cel-go charges a unit for: a call costs at
// least 1 and evaluates at most its arguments and itself (3 steps for the
// binary calls the rules use), so 4 leaves every decision within its
// bound room, and a plan whose bytes were tampered with still stops.
const PlanStepsPerCost = 4

// planMinSteps is the least step budget, for rule sets whose bound is
// tiny.
const planMinSteps = 10_000

// Plan compiles the rule set into a plan (package plan): its decision,
// imports included, in bytes that plan.Decode reads and Plan.Decide
// evaluates with no cel-go, answering what ResolveJSON answers. An
// expression outside the CEL a plan covers is an *Error with
// CodePlanUnsupported at its position in the rule file.
func (rs *RuleSet) Plan() ([]byte, error) {
	p, err := rs.buildPlan(map[*RuleSet]*plan.Plan{})
	if err != nil {
		return nil, err
	}
	return p.MarshalBinary()
}

// planBuilder lowers one version's checked expressions into a plan.
type planBuilder struct {
	rs    *RuleSet
	p     *plan.Plan
	slots map[string]int // inputs and values
	scope []localVar     // comprehension variables in scope, innermost last
	err   *Error
	expr  expression // the expression being lowered, for positions
	ast   *ast.AST
	what  string
}

type localVar struct {
	name string
	slot int
}

func (rs *RuleSet) buildPlan(built map[*RuleSet]*plan.Plan) (*plan.Plan, *Error) {
	if p, ok := built[rs]; ok {
		return p, nil
	}
	p := &plan.Plan{Ref: rs.ref, StepLimit: max(PlanStepsPerCost*rs.decisionCost, planMinSteps)}
	b := &planBuilder{rs: rs, p: p, slots: map[string]int{}}
	for _, in := range rs.inputs {
		typ := planType(in.typ)
		def, err := planDefault(in.Default)
		if err != nil {
			return nil, &Error{Code: CodePlanUnsupported, Pos: &in.pos, Message: fmt.Sprintf("input %s: %v", in.Name, err)}
		}
		b.slots[in.Name] = len(p.Inputs)
		p.Inputs = append(p.Inputs, plan.Input{Name: in.Name, Type: typ, Required: in.Required, Default: def})
	}
	for _, dt := range rs.deviceTypes {
		p.DeviceTypes = append(p.DeviceTypes, plan.DeviceType{Name: dt.Name, Code: dt.Code})
	}
	for i, v := range rs.values {
		b.slots[v.name] = len(p.Inputs) + i
	}
	for _, v := range rs.values {
		// Where an explanation places the value (tracer.value).
		pv := plan.Value{Name: v.name, Expr: -1, Import: -1, Pos: plan.Position(v.pos)}
		if v.imp != nil {
			imp, err := v.imp.buildPlan(built)
			if err != nil {
				return nil, err
			}
			pv.Import = slices.Index(p.Imports, imp)
			if pv.Import < 0 {
				pv.Import = len(p.Imports)
				p.Imports = append(p.Imports, imp)
			}
		} else {
			pv.Expr = b.expression(v.compiled, "value "+v.name)
			pv.Pos = plan.Position(v.expr.position(1, 0))
		}
		p.Values = append(p.Values, pv)
	}
	for _, r := range rs.rules {
		what := "rule " + r.id
		pr := plan.Rule{ID: r.id, Pos: plan.Position(r.pos), When: b.expression(r.when, what+": when"), Message: -1, Type: -1, DeviceID: -1, Copy: -1, Capsule: -1, Flags: -1}
		if r.raise != nil {
			pr.Raise = r.raise.typ
			pr.Message = b.expression(r.raise.message, what+": message")
		} else {
			o := r.device
			pr.Type = b.expression(o.typ, what+": device type")
			pr.DeviceID = b.expression(o.id, what+": device id")
			pr.Copy = b.optional(o.copy, what+": copy")
			pr.Capsule = b.optional(o.capsule, what+": capsule")
			pr.Flags = b.optional(o.flags, what+": flags")
		}
		p.Rules = append(p.Rules, pr)
	}
	if b.err != nil {
		return nil, b.err
	}
	built[rs] = p
	return p, nil
}

func (b *planBuilder) optional(c compiled, what string) int {
	if c.prg == nil {
		return -1
	}
	return b.expression(c, what)
}

// expression lowers one top-level expression and returns its index in
// Exprs.
func (b *planBuilder) expression(c compiled, what string) int {
	if b.err != nil {
		return -1
	}
	at := c.expr.errAt(CodeEval, 1, 0, "")
	b.expr, b.ast, b.what = c.expr, c.ast.NativeRep(), what
	root := b.lower(b.ast.Expr())
	b.p.Exprs = append(b.p.Exprs, plan.Expr{Root: root, Pos: plan.Position(*at.Pos), Source: at.Source})
	return len(b.p.Exprs) - 1
}

// refuse records the first expression outside what a plan covers.
func (b *planBuilder) refuse(e ast.Expr, format string, args ...any) int {
	if b.err == nil {
		loc := b.ast.SourceInfo().GetStartLocation(e.ID())
		b.err = b.expr.errAt(CodePlanUnsupported, loc.Line(), loc.Column(), "%s: %s", b.what, fmt.Sprintf(format, args...))
		b.err.Hint = "a plan covers null, bool, int, uint, double, string, list and map values, the comparisons, && || ! ?:, + on strings, lists and numbers, * on numbers, in, [] and field selection, size, int, string, dyn, contains, startsWith, endsWith, indexOf, split and the macros all, exists, exists_one, map and filter; rewrite the expression with these"
	}
	return 0
}

// add appends a node, folding it into a constant where every argument
// is one, and returns its index.
func (b *planBuilder) add(e ast.Expr, n plan.Node) int {
	loc := b.ast.SourceInfo().GetStartLocation(e.ID())
	pos := b.expr.position(loc.Line(), loc.Column())
	n.Line, n.Column = pos.Line, pos.Column
	if n.Op != plan.OpConst && n.Op != plan.OpSlot && n.Op != plan.OpFold {
		args := make([]any, len(n.Args))
		constant := true
		for i, a := range n.Args {
			an := &b.p.Nodes[a]
			constant = constant && an.Op == plan.OpConst
			args[i] = an.Const
		}
		if v, ok := plan.Fold(n, args); constant && ok {
			n = plan.Node{Op: plan.OpConst, Const: v, Line: n.Line, Column: n.Column}
		}
	}
	b.p.Nodes = append(b.p.Nodes, n)
	return len(b.p.Nodes) - 1
}

func (b *planBuilder) lower(e ast.Expr) int {
	if b.err != nil {
		return 0
	}
	if r, ok := b.ast.ReferenceMap()[e.ID()]; ok && r.Value != nil {
		v, err := planValue(r.Value)
		if err != nil {
			return b.refuse(e, "constant %s: %v", r.Name, err)
		}
		return b.add(e, plan.Node{Op: plan.OpConst, Const: v})
	}
	switch e.Kind() {
	case ast.LiteralKind:
		v, err := planValue(e.AsLiteral())
		if err != nil {
			return b.refuse(e, "literal: %v", err)
		}
		return b.add(e, plan.Node{Op: plan.OpConst, Const: v})
	case ast.IdentKind:
		return b.ident(e, e.AsIdent())
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return b.refuse(e, "has() is not in the CEL a plan covers")
		}
		if r, ok := b.ast.ReferenceMap()[e.ID()]; ok && r.Name != "" {
			return b.ident(e, r.Name)
		}
		return b.add(e, plan.Node{Op: plan.OpSelect, Args: []int{b.lower(s.Operand())}, Const: s.FieldName()})
	case ast.CallKind:
		return b.call(e)
	case ast.ListKind:
		l := e.AsList()
		if len(l.OptionalIndices()) > 0 {
			return b.refuse(e, "an optional list element is not in the CEL a plan covers")
		}
		var args []int
		for _, el := range l.Elements() {
			args = append(args, b.lower(el))
		}
		return b.add(e, plan.Node{Op: plan.OpList, Args: args})
	case ast.MapKind:
		var args []int
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			if me.IsOptional() {
				return b.refuse(e, "an optional map entry is not in the CEL a plan covers")
			}
			args = append(args, b.lower(me.Key()), b.lower(me.Value()))
		}
		return b.add(e, plan.Node{Op: plan.OpMap, Args: args})
	case ast.ComprehensionKind:
		return b.comprehension(e)
	}
	return b.refuse(e, "a %v expression is not in the CEL a plan covers", e.Kind())
}

// ident is a comprehension variable, an input, a table (a constant) or
// a value.
func (b *planBuilder) ident(e ast.Expr, name string) int {
	for i := len(b.scope) - 1; i >= 0; i-- {
		if b.scope[i].name == name {
			return b.add(e, plan.Node{Op: plan.OpSlot, Slot: b.scope[i].slot})
		}
	}
	if s, ok := b.slots[name]; ok {
		return b.add(e, plan.Node{Op: plan.OpSlot, Slot: s})
	}
	for _, t := range b.rs.tables {
		if t.name == name {
			v, err := planValue(t.val)
			if err != nil {
				return b.refuse(e, "table %s: %v", name, err)
			}
			return b.add(e, plan.Node{Op: plan.OpConst, Const: v})
		}
	}
	return b.refuse(e, "%s names nothing a plan holds", name)
}

func (b *planBuilder) comprehension(e ast.Expr) int {
	c := e.AsComprehension()
	if c.HasIterVar2() {
		return b.refuse(e, "a comprehension with two variables is not in the CEL a plan covers")
	}
	rng, init := b.lower(c.IterRange()), b.lower(c.AccuInit())
	base := len(b.p.Inputs) + len(b.rs.values)
	elem, accu := base+b.p.Locals, base+b.p.Locals+1
	b.p.Locals += 2
	b.scope = append(b.scope, localVar{c.AccuVar(), accu}, localVar{c.IterVar(), elem})
	cond, step := b.lower(c.LoopCondition()), b.lower(c.LoopStep())
	b.scope = b.scope[:len(b.scope)-1] // the result sees the accumulator only
	result := b.lower(c.Result())
	b.scope = b.scope[:len(b.scope)-1]
	return b.add(e, plan.Node{Op: plan.OpFold, Args: []int{rng, init, cond, step, result}, Slot: elem, Slot2: accu})
}

// planOverloads are the overloads a plan evaluates, by function. A call
// is lowered when one of its candidate overloads is here: the others
// (bytes, timestamps, durations) take values no plan can make.
var planOverloads = map[string][]string{
	"!_":                  {"logical_not"},
	"@not_strictly_false": {"not_strictly_false"},
	"_+_":                 {"add_string", "add_list", "add_int64", "add_uint64", "add_double"},
	"_*_":                 {"multiply_int64", "multiply_uint64", "multiply_double"},
	"@in":                 {"in_list", "in_map"},
	"size":                {"list_size", "map_size", "string_size", "size_list", "size_map", "size_string"},
	"int":                 {"int64_to_int64", "uint64_to_int64", "double_to_int64", "string_to_int64"},
	"string":              {"string_to_string", "int64_to_string", "uint64_to_string", "double_to_string", "bool_to_string"},
	"dyn":                 {"to_dyn"},
	"contains":            {"contains_string"},
	"startsWith":          {"starts_with_string"},
	"endsWith":            {"ends_with_string"},
	"indexOf":             {"string_index_of_string"},
	"split":               {"string_split_string"},
}

// orderings are compared across bool, int, uint, double and string.
var planOrderings = map[string]plan.Func{"_<_": plan.FuncLess, "_<=_": plan.FuncLessEquals, "_>_": plan.FuncGreater, "_>=_": plan.FuncGreaterEquals}

func (b *planBuilder) call(e ast.Expr) int {
	c := e.AsCall()
	fn := c.FunctionName()
	var args []int
	if c.IsMemberFunction() {
		args = append(args, b.lower(c.Target()))
	}
	for _, a := range c.Args() {
		args = append(args, b.lower(a))
	}
	ops := map[string]plan.Op{"_&&_": plan.OpAnd, "_||_": plan.OpOr, "_?_:_": plan.OpCond, "_==_": plan.OpEq, "_!=_": plan.OpNe, "_[_]": plan.OpIndex}
	if op, ok := ops[fn]; ok {
		return b.add(e, plan.Node{Op: op, Args: args})
	}
	ids := b.ast.GetOverloadIDs(e.ID())
	f, known := planOrderings[fn]
	switch {
	case known:
		if !slices.ContainsFunc(ids, func(id string) bool {
			return !slices.ContainsFunc([]string{"bytes", "timestamp", "duration"}, func(t string) bool { return containsWord(id, t) })
		}) {
			return b.refuse(e, "%s on %v is not in the CEL a plan covers", fn, ids)
		}
	default:
		f = plan.FuncNamed(fn)
		if f == 0 || !slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(planOverloads[fn], id) }) {
			return b.refuse(e, "function %s (%v) is not in the CEL a plan covers", fn, ids)
		}
	}
	return b.add(e, plan.Node{Op: plan.OpCall, Func: f, Args: args})
}

func containsWord(id, word string) bool {
	for i := 0; i+len(word) <= len(id); i++ {
		if id[i:i+len(word)] == word {
			return true
		}
	}
	return false
}

// planValue converts a constant to a plan value; a map's entries are
// ordered by key, so that equal rules give equal plans.
func planValue(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case traits.Mapper:
		m := &plan.Map{}
		type entry struct{ k, v any }
		var entries []entry
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			pk, err := planValue(k)
			if err != nil {
				return nil, err
			}
			pv, err := planValue(x.Get(k))
			if err != nil {
				return nil, err
			}
			entries = append(entries, entry{pk, pv})
		}
		slices.SortFunc(entries, func(a, b entry) int {
			return cmp.Or(cmp.Compare(fmt.Sprintf("%T", a.k), fmt.Sprintf("%T", b.k)), cmp.Compare(fmt.Sprint(a.k), fmt.Sprint(b.k)))
		})
		for _, en := range entries {
			m.Keys, m.Vals = append(m.Keys, en.k), append(m.Vals, en.v)
		}
		return m, nil
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			pv, err := planValue(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, pv)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s value", v.Type().TypeName())
}

// planDefault is an input's default as a plan holds it: Go integers as
// int64, lists and objects converted within.
func planDefault(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = planDefault(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			var err error
			if out[k], err = planDefault(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if i, ok := number.Int(v); ok {
		return i, nil
	}
	return nil, fmt.Errorf("a default of Go type %T", v)
}

// planType is a declared type as a plan holds it.
func planType(t *valueType) *plan.Type {
	kinds := map[kind]plan.Kind{kindString: plan.KindString, kindInt: plan.KindInt, kindDeviceType: plan.KindInt,
		kindUint: plan.KindUint, kindDouble: plan.KindDouble, kindBool: plan.KindBool, kindDyn: plan.KindDyn,
		kindList: plan.KindList, kindMap: plan.KindMap}
	out := &plan.Type{Kind: kinds[t.kind], Nullable: t.nullable, Text: t.text}
	if t.elem != nil {
		out.Elem = planType(t.elem)
	}
	return out
}
