package engine

import (
	"cmp"
	"math"
	"math/bits"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"go.yaml.in/yaml/v3"
)

// The budgets of a load and of a decision: what a rules directory may
// ask of a host before any of it is compiled, and what one decision may
// cost, both checked at load so that lint refuses what a host would.

// MaxLoadNodes bounds what one Load compiles, every version it compiles
// counted together, imports included, in CEL expression nodes: each
// expression's nodes after parsing (the embedded rules come parsed),
// before type-checking and planning, which is where a compiled
// expression's memory goes, plus exprNodes for its program, plus a
// value's environment (spendValue). The shipped rules weigh 38,560, and
// the releases still to write (torch 1.10 to 2.8, jax 0.4 to 0.9) add
// perhaps 20 versions; 160,000 lets them grow to 106,000 within the 1.5
// times margin TestShippedRulesFitTheBudgets keeps, and no more, because
// a load at the budget must fit in the module's instance,
// wasmhost.DefaultMemoryLimitPages (512 MiB): there, rules at the budget
// need 128 MiB as the shipped rules with copies of torch@v3, 240 MiB as
// six-deep nests. Natively a node keeps about 560 bytes.
// engine/RATIONALE.md, "Why a budget of expression nodes per load, and
// why this one?", says why; BENCHMARKS.md, "The budgets' sizes", has the
// figures (BenchmarkLoadAtBudget in e2e/wasmhost).
const MaxLoadNodes = 160_000

// MaxDecisionCost bounds the CEL cost of one decision, as cel-go
// estimates it at load from the largest inputs allowed: the values, every
// rule's when, the costliest rule's outcome and the decisions of the
// imports, summed. An expression whose estimate passes the per-expression
// cost limit counts at the limit, where it is stopped. A decision at the
// budget took 24 ms of CPU natively on the 2-core machine (nested loops,
// the costliest shape per unit measured; BenchmarkDecisionAtBudget); the
// costliest shipped version, jax-import@v0.5, is bounded at 1,132,299.
// BENCHMARKS.md, "The budgets' sizes", has the figures; engine/RATIONALE.md,
// "Why a cost budget per decision, checked at load?", the reason. A caller that raises Options.CostLimit above
// DefaultCostLimit raises this budget in proportion (decisionBudget).
const MaxDecisionCost = 1_800_000

// decisionBudget is MaxDecisionCost for an expression cost limit: a limit
// n times DefaultCostLimit allows decisions n times as costly.
func decisionBudget(limit uint64) uint64 {
	if limit <= DefaultCostLimit {
		return MaxDecisionCost
	}
	hi, lo := bits.Mul64(limit/DefaultCostLimit, MaxDecisionCost)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// addCost is a+b, or math.MaxUint64 where that overflows.
func addCost(a, b uint64) uint64 {
	if s, carry := bits.Add64(a, b, 0); carry == 0 {
		return s
	}
	return math.MaxUint64
}

// loadBudget counts what one Load compiles against MaxLoadNodes.
type loadBudget struct {
	nodes int
	over  bool // a refusal was given: compile nothing more
}

// fits reports whether n more nodes fit in the budget.
func (l *loadBudget) fits(n int) bool { return l.nodes+n <= MaxLoadNodes }

// exprNodes is what an expression weighs beyond its nodes: its program's
// own parts take about as much memory as 4 nodes (12,000 rules of
// "when: false" take as much as 2,500 of 57-node conditions).
const exprNodes = 4

// namesPerNode is how many names in scope make a value weigh one node:
// each value gets an environment of its own, a copy of the one before
// (3,000 values of "1" take 268 MB natively, quadratic in their number;
// in the module 400 such values take 24 MiB).
const namesPerNode = 3

// astNodes counts the nodes of an expression, macros expanded, and
// exprNodes.
func astNodes(ast *cel.Ast) int {
	n := exprNodes
	celast.PostOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(celast.Expr) { n++ }))
	return n
}

// spendNodes charges the nodes of ast to the load. The expression that
// takes the load past MaxLoadNodes is refused with CodeLoadTooLarge, and
// nothing is compiled after it: what is left would only take memory.
func (b *builder) spendNodes(e expression, ast *cel.Ast, what string) bool {
	l := b.opts.budget
	n := astNodes(ast)
	if l.over {
		return false
	}
	if !l.fits(n) {
		l.over = true
		b.add(e.errAt(CodeLoadTooLarge, 1, 0, "%s: the rules take more than %d CEL expression nodes to compile (MaxLoadNodes); %d before this expression, %d in it",
			what, MaxLoadNodes, l.nodes, n))
		b.errs[len(b.errs)-1].Hint = "split the rules into fewer, smaller versions, or load fewer versions at once (a folder or bundle of its own)"
		return false
	}
	l.nodes += n
	b.rs.nodes += n
	return true
}

// spendValue charges the environment a value is declared in, a copy of
// every name before it, at the value's name.
func (b *builder) spendValue(f *sourceFile, key *yaml.Node) bool {
	l := b.opts.budget
	n := len(b.names) / namesPerNode
	if l.over {
		return false
	}
	if !l.fits(n) {
		l.over = true
		b.add(f.errNode(CodeLoadTooLarge, key, "value %s: the rules take more than %d CEL expression nodes to compile (MaxLoadNodes); %d before this value, %d for its environment of %d names",
			key.Value, MaxLoadNodes, l.nodes, n, len(b.names)))
		b.errs[len(b.errs)-1].Hint = "use fewer values, or split the rules into fewer, smaller versions (a folder or bundle of its own)"
		return false
	}
	l.nodes += n
	b.rs.nodes += n
	return true
}

// decisionCost is a version's bound on the cost of one decision: each
// value and each rule's when is evaluated at most once, and one rule's
// outcome.
type decisionCost struct {
	sum     uint64 // imports, values and whens
	outcome uint64 // the costliest outcome
	current uint64 // the outcome of the rule being compiled
	refused bool   // the version was refused: once is enough
}

func (d *decisionCost) total() uint64 { return addCost(d.sum, max(d.outcome, d.current)) }

// exprCost is what one evaluation of an expression can cost: its
// estimate, or the cost limit where it is stopped.
func exprCost(est cost.Estimate, err error, limit uint64) uint64 {
	if err != nil || est.Max > limit {
		return limit
	}
	return est.Max
}

// spendCost charges an expression's cost to the decision (to the rule's
// outcome, of which one is evaluated, while b.outcome is set), and refuses with
// CodeDecisionCost the expression that takes it past MaxDecisionCost.
func (b *builder) spendCost(e expression, cost uint64, what string) bool {
	d := &b.cost
	if b.outcome {
		d.current = addCost(d.current, cost)
	} else {
		d.sum = addCost(d.sum, cost)
	}
	budget := decisionBudget(cmp.Or(b.opts.CostLimit, DefaultCostLimit))
	if d.total() <= budget || d.refused {
		return !d.refused
	}
	d.refused = true
	b.add(e.errAt(CodeDecisionCost, 1, 0, "%s: one decision could cost more than %d (MaxDecisionCost): this expression can cost %d, and what a decision evaluates with it %d",
		what, budget, cost, d.total()))
	b.errs[len(b.errs)-1].Hint = "guard costly conditions less often or over smaller tables, or move rules into another version: every rule's condition can run in one decision"
	return false
}

// ruleDone closes the outcome of one rule.
func (d *decisionCost) ruleDone() {
	d.outcome = max(d.outcome, d.current)
	d.current = 0
}

// importCost charges an import's decision to the version that imports
// it, at n, the import's ref.
func (b *builder) importCost(f *sourceFile, n *yaml.Node, rs *RuleSet) {
	b.cost.sum = addCost(b.cost.sum, rs.decisionCost)
	budget := decisionBudget(cmp.Or(b.opts.CostLimit, DefaultCostLimit))
	if b.cost.total() > budget && !b.cost.refused {
		b.cost.refused = true
		b.add(f.errNode(CodeDecisionCost, n, "import %s: one decision could cost more than %d (MaxDecisionCost) with the decisions of the imports (%d)",
			rs.ref, budget, b.cost.total()))
		b.errs[len(b.errs)-1].Hint = "import fewer versions, or cheaper ones"
	}
}
