package wasmhost

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/plan"
)

// The decision module against package plan on synthetic plans: every
// function and operation on every pair of a set of values (the odd ones
// included: overflows, NaN, infinities, out-of-range indexes, non-UTF-8
// text), every outcome field with values of every type, named values,
// imports and step limits. The shipped rule sets reach few of cel-go's
// error messages; these plans reach each, and the module must answer
// package plan's bytes for each, its decision and its explanation.

// planBuilder appends nodes to a plan under construction.
type planBuilder struct {
	nodes  []plan.Node
	locals int
}

func (b *planBuilder) add(n plan.Node) int { b.nodes = append(b.nodes, n); return len(b.nodes) - 1 }
func (b *planBuilder) c(v any) int {
	return b.add(plan.Node{Op: plan.OpConst, Const: v, Line: 1, Column: 1})
}
func (b *planBuilder) call(f plan.Func, args ...int) int {
	return b.add(plan.Node{Op: plan.OpCall, Func: f, Args: args, Line: 1, Column: 2})
}
func (b *planBuilder) op(o plan.Op, args ...int) int {
	return b.add(plan.Node{Op: o, Args: args, Line: 1, Column: 3})
}
func (b *planBuilder) slot(s int) int { return b.add(plan.Node{Op: plan.OpSlot, Slot: s}) }

// failing stands for an argument that fails: [][0].
type failing struct{}

func (b *planBuilder) val(v any) int {
	if _, ok := v.(failing); ok {
		return b.op(plan.OpIndex, b.c([]any{}), b.c(int64(0)))
	}
	return b.c(v)
}

var synthValues = []any{
	nil, true, false,
	int64(0), int64(1), int64(-1), int64(3), int64(math.MaxInt64), int64(math.MinInt64),
	uint64(0), uint64(2), uint64(math.MaxUint64), uint64(1<<62 + 1),
	0.5, math.Copysign(0, -1), math.NaN(), math.Inf(1), 1e300, 2.0, 1e21, -3.0, 9.223372036854775807e18,
	"", "abc", "héllo wörld", "a,b,,c", ",", "é", "9223372036854775808", "-9223372036854775808", "+12", "l\u2028x",
	[]any{int64(1), "x"}, []any{}, []any{int64(2), uint64(2), 2.5}, []any{[]any{nil}},
	&plan.Map{Keys: []any{"k", int64(2), true}, Vals: []any{int64(1), "two", false}},
	&plan.Map{Keys: []any{uint64(1)}, Vals: []any{"one"}},
	&plan.Map{},
	failing{},
}

var synthPos = plan.Position{File: "rules.yaml", Line: 7, Column: 9}

// synthPlan is a plan of one rule whose device type is node root.
func synthPlan(b *planBuilder, root int, limit uint64) *plan.Plan {
	t, z := b.c(true), b.c(int64(0))
	return &plan.Plan{
		Ref: "t@v1", StepLimit: limit, Locals: b.locals,
		DeviceTypes: []plan.DeviceType{{Name: "cpu", Code: 1}, {Name: "cuda", Code: 2}},
		Exprs: []plan.Expr{
			{Root: t, Pos: plan.Position{File: "rules.yaml", Line: 3, Column: 11}, Source: "    when: true"},
			{Root: root, Pos: synthPos, Source: "    type: x + y\t# ü"},
			{Root: z, Pos: plan.Position{File: "rules.yaml", Line: 8, Column: 5}, Source: "id"},
		},
		Nodes: b.nodes,
		Rules: []plan.Rule{{ID: "r1", Pos: plan.Position{File: "rules.yaml", Line: 2, Column: 3}, When: 0, Message: -1, Type: 1, DeviceID: 2, Copy: -1, Capsule: -1, Flags: -1}},
	}
}

type synthCase struct {
	name string
	p    *plan.Plan
}

func synthCases() []synthCase {
	var out []synthCase
	add := func(name string, p *plan.Plan) { out = append(out, synthCase{name, p}) }
	for _, f := range []plan.Func{plan.FuncNot, plan.FuncNotStrictlyFalse, plan.FuncSize, plan.FuncInt, plan.FuncString, plan.FuncDyn} {
		for i, v := range synthValues {
			b := &planBuilder{}
			add(fmt.Sprintf("%s(%d)", f, i), synthPlan(b, b.call(f, b.val(v)), 100))
		}
	}
	// Every pair for the functions and operations whose messages turn on
	// both operands' types; a fifth of the pairs for the others, whose
	// code each shares with one of those.
	every := []plan.Func{plan.FuncAdd, plan.FuncMultiply, plan.FuncLess, plan.FuncIn, plan.FuncIndexOf, plan.FuncSplit}
	some := []plan.Func{plan.FuncLessEquals, plan.FuncGreater, plan.FuncGreaterEquals, plan.FuncContains, plan.FuncStartsWith, plan.FuncEndsWith}
	for i, x := range synthValues {
		for j, y := range synthValues {
			fs, ops := every, []plan.Op{plan.OpEq, plan.OpIndex, plan.OpOr}
			if (i+j)%5 == 0 {
				fs = append(fs[:len(fs):len(fs)], some...)
				ops = append(ops, plan.OpNe, plan.OpAnd, plan.OpList, plan.OpMap)
			}
			for _, f := range fs {
				b := &planBuilder{}
				add(fmt.Sprintf("%s(%d,%d)", f, i, j), synthPlan(b, b.call(f, b.val(x), b.val(y)), 100))
			}
			for _, o := range ops {
				b := &planBuilder{}
				args := []int{b.val(x), b.val(y)}
				if o == plan.OpMap {
					args = append(args, b.c("z"), b.c(int64(1)))
				}
				add(fmt.Sprintf("op%d(%d,%d)", o, i, j), synthPlan(b, b.op(o, args...), 100))
			}
		}
		b := &planBuilder{}
		add(fmt.Sprintf("or3(%d)", i), synthPlan(b, b.op(plan.OpOr, b.c(false), b.val(x), b.c(false)), 100))
		for _, field := range []string{"k", "x"} {
			b := &planBuilder{}
			add(fmt.Sprintf("select(%d,%s)", i, field), synthPlan(b, b.add(plan.Node{Op: plan.OpSelect, Args: []int{b.val(x)}, Const: field}), 100))
		}
		b = &planBuilder{}
		add(fmt.Sprintf("cond(%d)", i), synthPlan(b, b.op(plan.OpCond, b.val(x), b.c(int64(1)), b.c("no")), 100))
		for k := range 3 { // over x: exists(e, e == 2), a sum, a list of strings
			b := &planBuilder{locals: 2}
			r := b.val(x)
			var init, cond, step int
			switch k {
			case 0:
				init, cond = b.c(false), b.call(plan.FuncNotStrictlyFalse, b.call(plan.FuncNot, b.slot(1)))
				step = b.op(plan.OpOr, b.slot(1), b.op(plan.OpEq, b.slot(0), b.c(int64(2))))
			case 1:
				init, cond, step = b.c(int64(0)), b.c(true), b.call(plan.FuncAdd, b.slot(1), b.slot(0))
			case 2:
				init, cond = b.c([]any{}), b.c(true)
				step = b.call(plan.FuncAdd, b.slot(1), b.op(plan.OpList, b.call(plan.FuncString, b.slot(0))))
			}
			n := b.add(plan.Node{Op: plan.OpFold, Args: []int{r, init, cond, step, b.slot(1)}, Slot: 0, Slot2: 1})
			add(fmt.Sprintf("fold%d(%d)", k, i), synthPlan(b, n, 1000))
			for limit := uint64(1); limit < 20 && k == 1; limit++ {
				add(fmt.Sprintf("fold%d(%d) limit %d", k, i, limit), synthPlan(b, n, limit))
			}
		}
	}
	for limit := range uint64(12) {
		b := &planBuilder{}
		r := b.op(plan.OpOr, b.call(plan.FuncAdd, b.c(int64(1)), b.c(int64(2))), b.c(true), b.val(failing{}))
		add(fmt.Sprintf("limit %d", limit), synthPlan(b, r, limit))
	}
	out = append(out, synthOutcomes()...)
	return append(out, synthValuesAndImports()...)
}

// synthOutcomes: every outcome field given every value.
func synthOutcomes() []synthCase {
	var out []synthCase
	mk := func(name string, fill func(b *planBuilder, r *plan.Rule, expr func(root int) int)) {
		b := &planBuilder{}
		p := synthPlan(b, 0, 1000)
		b.nodes = p.Nodes
		r := p.Rules[0]
		r.Type = -1
		expr := func(root int) int {
			p.Exprs = append(p.Exprs, plan.Expr{Root: root, Pos: plan.Position{File: "r.yaml", Line: len(p.Exprs) + 10, Column: 4}, Source: "\tx: <y>"})
			return len(p.Exprs) - 1
		}
		fill(b, &r, expr)
		p.Nodes, p.Rules = b.nodes, []plan.Rule{r}
		out = append(out, synthCase{name, p})
	}
	for i, v := range synthValues {
		mk(fmt.Sprintf("type %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) { r.Type = expr(b.val(v)) })
		mk(fmt.Sprintf("id %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
			r.Type, r.DeviceID = expr(b.c(int64(2))), expr(b.val(v))
		})
		mk(fmt.Sprintf("when %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
			r.Type, r.When = expr(b.c(int64(2))), expr(b.val(v))
		})
		mk(fmt.Sprintf("raise %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
			r.Raise, r.Message = "BufferError", expr(b.val(v))
		})
		mk(fmt.Sprintf("copy %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
			r.Type, r.Copy = expr(b.c(int64(1))), expr(b.val(v))
		})
		mk(fmt.Sprintf("capsule %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
			r.Type, r.Capsule = expr(b.c(int64(1))), expr(b.val(v))
		})
		mk(fmt.Sprintf("flags %d", i), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
			r.Type, r.Capsule, r.Flags = expr(b.c(int64(1))), expr(b.c("dltensor_versioned")), expr(b.val(v))
		})
	}
	flags := [][]any{{int64(1)}, {int64(2), int64(4)}, {int64(1), int64(1)}, {int64(8)}, {int64(3)}, {int64(0)}, {int64(-1)},
		{uint64(1)}, {1.0}, {int64(1), int64(2), int64(4)}, {}, {int64(math.MinInt64)}}
	for i, fl := range flags {
		for _, capsule := range []string{"dltensor", "dltensor_versioned", ""} {
			mk(fmt.Sprintf("flags list %d %s", i, capsule), func(b *planBuilder, r *plan.Rule, expr func(int) int) {
				r.Type = expr(b.c(int64(1)))
				if capsule != "" {
					r.Capsule = expr(b.c(capsule))
				}
				r.Flags = expr(b.c(fl))
			})
		}
	}
	mk("no rule matches", func(b *planBuilder, r *plan.Rule, expr func(int) int) {
		r.Type, r.When = expr(b.c(int64(1))), expr(b.c(false))
	})
	return out
}

// synthValuesAndImports: named values read twice, failing, read by one
// another, and imports deciding a device, raising, or failing.
func synthValuesAndImports() []synthCase {
	var out []synthCase
	for i, v := range synthValues {
		for k := range 3 {
			b := &planBuilder{} // slots: input "in", values "v0" and "v1"
			var root int
			switch k {
			case 0:
				root = b.op(plan.OpList, b.slot(1), b.slot(1), b.slot(0))
			case 1:
				root = b.op(plan.OpOr, b.slot(2), b.c(true))
			case 2:
				root = b.op(plan.OpAnd, b.c(false), b.slot(1))
			}
			p := synthPlan(b, root, 1000)
			v0, v1 := b.val(v), b.call(plan.FuncAdd, b.slot(1), b.c(int64(1)))
			p.Nodes = b.nodes
			p.Exprs = append(p.Exprs, plan.Expr{Root: v0, Pos: plan.Position{File: "v.yaml", Line: 20, Column: 3}, Source: "  v0: x"},
				plan.Expr{Root: v1, Pos: plan.Position{File: "v.yaml", Line: 21, Column: 3}, Source: "  v1: v0 + 1"})
			p.Inputs = []plan.Input{{Name: "in", Type: &plan.Type{Kind: plan.KindDyn, Text: "dyn"}, Default: "default"}}
			p.Values = []plan.Value{{Name: "v0", Expr: 3, Import: -1, Pos: plan.Position{File: "v.yaml", Line: 20, Column: 3}},
				{Name: "v1", Expr: 4, Import: -1, Pos: plan.Position{File: "v.yaml", Line: 21, Column: 3}}}
			out = append(out, synthCase{fmt.Sprintf("values %d (%d)", k, i), p})
			for limit := uint64(1); limit < 12 && i%5 == 0; limit++ {
				q := *p
				q.StepLimit = limit
				out = append(out, synthCase{fmt.Sprintf("values %d (%d) limit %d", k, i, limit), &q})
			}
		}
		for k := range 2 { // an import whose device type is v, or which raises v
			ib := &planBuilder{}
			imp := synthPlan(ib, ib.val(v), 1000)
			imp.Ref = "imp@v2"
			if k == 1 {
				imp.Rules[0].Raise, imp.Rules[0].Message = "ValueError", 1
			}
			b := &planBuilder{}
			root := b.add(plan.Node{Op: plan.OpSelect, Args: []int{b.slot(0)}, Const: "device_type"})
			p := synthPlan(b, root, 1000)
			if k == 1 {
				p.Rules[0].Raise, p.Rules[0].Message = "E", 1
				p.Exprs[1].Root = b.call(plan.FuncString, b.slot(0))
				p.Nodes = b.nodes
			}
			p.Imports = []*plan.Plan{imp}
			p.Values = []plan.Value{{Name: "dec", Expr: -1, Import: 0, Pos: plan.Position{File: "i.yaml", Line: 4, Column: 1}}}
			out = append(out, synthCase{fmt.Sprintf("import %d (%d)", k, i), p})
			for limit := uint64(1); limit < 16 && i%7 == 0; limit++ {
				q := *p
				q.StepLimit = limit
				out = append(out, synthCase{fmt.Sprintf("import %d (%d) limit %d", k, i, limit), &q})
			}
		}
	}
	return out
}

// TestDecisionMatchesPlanOnSyntheticPlans: the module answers package
// plan's bytes, decision and explanation, on plans that reach each of
// cel-go's messages.
func TestDecisionMatchesPlanOnSyntheticPlans(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	ctx := context.Background()
	line := []byte(`{}`)
	var d *Decider
	for _, c := range synthCases() {
		bin, err := c.p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p, err := plan.Decode(bin)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, werr := p.Decide(line)
		wantStatus := contract.StatusOK
		if werr != nil {
			want, wantStatus = werr.(*plan.Error).AppendJSON(nil), contract.StatusEvalError
		}
		// One instance loads plan after plan (a new instance per plan
		// costs more than the case); a trap, which ends an instance,
		// fails the case and the next one starts afresh.
		if d == nil {
			if d, err = m.NewDecider(ctx, bin, ""); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		} else if err := d.load(ctx, bin, ""); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, status, err := d.Decide(ctx, line)
		if err != nil || status != wantStatus || !bytes.Equal(got, want) {
			t.Errorf("%s: Decide = %s %s, %v\nwant %s %s", c.name, status, got, err, wantStatus, want)
		}
		wantX, werr := p.ExplainJSON(line)
		gotX, gerr := d.ExplainJSON(ctx, line)
		if werr != nil {
			wantX = werr.(*plan.Error).AppendJSON(nil)
		}
		if gerr != nil {
			gotX = contract.ErrorJSON(gerr)
		}
		if (werr == nil) != (gerr == nil) || !bytes.Equal(gotX, wantX) {
			t.Errorf("%s: ExplainJSON = %.400s\nwant %.400s", c.name, gotX, wantX)
		}
		if t.Failed() {
			d.Close(ctx)
			d = nil
			if testing.Verbose() {
				return
			}
		}
	}
	if d != nil {
		d.Close(ctx)
	}
}
