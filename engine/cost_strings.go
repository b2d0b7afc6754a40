package engine

import (
	"fmt"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The functions of cel-go's strings library that build a string larger
// than their receiver: replace can multiply two sizes, join and format
// copy what a list refers to (a list of 64 references to one string is
// cheap to make and costly to join), and quote escapes.
const (
	overloadReplace  = "string_replace_string_string"
	overloadReplaceN = "string_replace_string_string_int"
	overloadJoin     = "list_join"
	overloadJoinSep  = "list_join_string"
	overloadFormat   = "string_format"
	overloadQuote    = "strings_quote"
)

// formatScalarLen bounds what format writes for one scalar: a double
// with %f at the precision limit of 100 (ext.StringsVersion(5)) has up to
// 309 digits before the point and 100 after.
const formatScalarLen = 512

// stringGrowth bounds, at load, the size of every string an expression
// builds with the functions above, in code points (the unit of CEL's
// size() and of its cost). It overrides cel-go's models for them in the
// static estimate and records each call whose result could exceed the
// cost limit: such a call would allocate its result before any run-time
// tracker could stop it, so the expression is refused.
type stringGrowth struct {
	limit   uint64
	checked *celast.AST
	over    []grownCall // calls whose result may exceed limit, in estimate order
}

type grownCall struct {
	id       int64
	function string
	size     uint64 // the bound on the result; math.MaxUint64 when there is none
}

// options are the cost.Options that make env.EstimateCost use s.
func (s *stringGrowth) options() []cost.Option {
	return []cost.Option{
		cost.OverloadCostEstimate(overloadReplace, s.replace),
		cost.OverloadCostEstimate(overloadReplaceN, s.replace),
		cost.OverloadCostEstimate(overloadJoin, s.join),
		cost.OverloadCostEstimate(overloadJoinSep, s.join),
		cost.OverloadCostEstimate(overloadFormat, s.format),
		cost.OverloadCostEstimate(overloadQuote, s.quote),
	}
}

// result is the estimate of a call that reads scan code points and
// returns a string of at most size: one unit for the call, one tenth per
// code point read, and one per code point written, as cel-go charges.
func (s *stringGrowth) result(function string, at cost.AstNode, scan, size uint64) *cost.CallEstimate {
	if size > s.limit {
		s.over = append(s.over, grownCall{id: callOf(s.checked, at), function: function, size: size})
	}
	read, _ := cost.EstimateStringScan(cost.RangedSizeEstimate(0, scan))
	c := read.Add(cost.FixedCostEstimate(1)).Add(cost.RangedCostEstimate(0, size))
	sz := cost.RangedSizeEstimate(0, size)
	return cost.NewCallEstimate(c, &sz)
}

// replace: each of at most len(s)+1 matches (of an empty old) adds new,
// so s.replace(old, new) has at most (len(s)+1) * (len(new)+1) code points.
func (s *stringGrowth) replace(est cost.Estimator, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if target == nil || len(args) < 2 {
		return nil
	}
	str := cost.EstimateSize(est, *target).Max
	old := cost.EstimateSize(est, args[0]).Max
	repl := cost.EstimateSize(est, args[1]).Max
	size := cost.SafeMultiply(cost.SafeAdd(str, 1), cost.SafeAdd(repl, 1))
	return s.result("replace", *target, cost.SafeMultiply(max(str, 1), max(old, 1)), size)
}

// join: every element once, and the separator between each two.
func (s *stringGrowth) join(est cost.Estimator, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if target == nil {
		return nil
	}
	list := cost.EstimateSize(est, *target)
	elem := elemSize(est, *target, list)
	var sep uint64
	if len(args) == 1 {
		sep = cost.EstimateSize(est, args[0]).Max
	}
	size := cost.SafeAdd(cost.SafeMultiply(list.Max, elem), cost.SafeMultiply(list.Max, sep))
	return s.result("join", *target, cost.SafeAdd(list.Max, 1), size)
}

// quote escapes each code point as at most two and adds two quotes.
func (s *stringGrowth) quote(est cost.Estimator, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if len(args) != 1 {
		return nil
	}
	str := cost.EstimateSize(est, args[0]).Max
	return s.result("strings.quote", args[0], str, cost.SafeAdd(cost.SafeMultiply(str, 2), 2))
}

// format writes the format string and, for each argument, at most
// formatScalarLen code points for a scalar or eight per code point of a
// string (%x writes two hex digits for each of up to four UTF-8 bytes).
// A list or map argument has no bound here, so it is refused: format a
// list by joining it first.
func (s *stringGrowth) format(est cost.Estimator, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if target == nil || len(args) != 1 {
		return nil
	}
	size := cost.EstimateSize(est, *target).Max
	list := cost.EstimateSize(est, args[0])
	per := uint64(formatScalarLen)
	if !s.flatElements(args[0]) {
		per = maxUint64
	} else if list.Elem != nil {
		per = max(per, cost.SafeMultiply(list.Elem.Max, 8))
	} else {
		per = max(per, cost.SafeMultiply(elemSize(est, args[0], list), 8))
	}
	size = cost.SafeAdd(size, cost.SafeMultiply(list.Max, per))
	return s.result("format", *target, size, size)
}

// flatElements reports whether every element of format's argument is a
// string, bytes or a scalar, by its checked type.
func (s *stringGrowth) flatElements(arg cost.AstNode) bool {
	var elems []celast.Expr
	if e := arg.Expr(); e != nil && e.Kind() == celast.ListKind {
		elems = e.AsList().Elements()
	}
	if elems == nil {
		t := arg.Type()
		return t != nil && t.Kind() == types.ListKind && len(t.Parameters()) == 1 && flatType(t.Parameters()[0])
	}
	for _, e := range elems {
		if s.checked == nil || !flatType(s.checked.GetType(e.ID())) {
			return false
		}
	}
	return true
}

func flatType(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case types.StringKind, types.BytesKind, types.IntKind, types.UintKind, types.DoubleKind,
		types.BoolKind, types.NullTypeKind, types.TimestampKind, types.DurationKind:
		return true
	}
	return false
}

const maxUint64 = ^uint64(0)

// elemSize bounds the size of one element of a list: from its estimate,
// or else from the declared inputs (sizeBounds answers "@items" paths).
func elemSize(est cost.Estimator, node cost.AstNode, list cost.SizeEstimate) uint64 {
	if list.Elem != nil {
		return list.Elem.Max
	}
	if path := node.Path(); len(path) > 0 && node.Type() != nil && len(node.Type().Parameters()) == 1 {
		items := append(append([]string(nil), path...), "@items")
		elem := cost.NewAstNode(nil, items, node.Type().Parameters()[0], nil)
		if sz := est.EstimateSize(elem); sz != nil {
			return sz.Max
		}
	}
	return maxUint64
}

// callOf is the id of the call in checked whose receiver (or, for a
// global call, first argument) is node, for the error's position.
func callOf(checked *celast.AST, node cost.AstNode) int64 {
	if node == nil || node.Expr() == nil || checked == nil {
		return 0
	}
	child := node.Expr().ID()
	var id int64
	celast.PostOrderVisit(checked.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if id != 0 || e.Kind() != celast.CallKind {
			return
		}
		c := e.AsCall()
		if c.IsMemberFunction() && c.Target().ID() == child || !c.IsMemberFunction() && len(c.Args()) > 0 && c.Args()[0].ID() == child {
			id = e.ID()
		}
	}))
	return id
}

// err is the load error for the first call that may build too large a
// string, at that call's position in e.
func (s *stringGrowth) err(e expression, what string) *Error {
	if len(s.over) == 0 {
		return nil
	}
	c := s.over[0]
	loc := s.checked.SourceInfo().GetStartLocation(c.id)
	bound := "no bound"
	if c.size != maxUint64 {
		bound = fmt.Sprintf("up to %d code points", c.size)
	}
	err := e.errAt(CodeCostLimit, loc.Line(), loc.Column(),
		"%s: %s can build a string of %s, over the cost limit of %d", what, c.function, bound, s.limit)
	err.Hint = "a string a rule builds must fit the cost limit when inputs are MaxStringLen bytes and lists MaxListLen long; " +
		"build it from literals or substrings of bounded length, or format lists after joining them"
	return err
}

// resultCharge makes the run-time cost tracker charge format and
// strings.quote by the size of their result, as cel-go's own models
// charge replace and join (cel-go has no model for them), and matches
// by its pattern's program (regexCost).
type resultCharge struct {
	regex *regexCost
}

func (r resultCharge) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	switch overloadID {
	case overloadFormat, overloadQuote:
		c := 1 + cost.ActualSize(result)
		return &c
	}
	return r.regex.charge(overloadID, args)
}
