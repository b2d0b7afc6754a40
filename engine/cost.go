package engine

import (
	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
)

// sizeBounds tells cel-go's cost estimator how large each variable can be:
// string inputs are at most MaxStringLen bytes, lists and maps at most
// MaxListLen entries, and tables exactly as large as they are. Values are
// left to the estimator, which assumes the worst.
//
// An expression whose worst case is within the cost limit runs without
// cel-go's run-time cost tracker, which cost two thirds of an uncached
// decision; any other expression is tracked and stopped at the limit.
type sizeBounds struct {
	inputs map[string]*valueType
	tables map[string]tableSize
}

type tableSize struct {
	rows, cols, maxCell uint64 // maxCell: the longest string cell, in bytes
}

func (s *sizeBounds) EstimateSize(node cost.AstNode) *cost.SizeEstimate {
	path := node.Path()
	if len(path) == 0 {
		return nil
	}
	if t, ok := s.inputs[path[0]]; ok {
		for _, step := range path[1:] {
			if t.elem == nil {
				return nil
			}
			if step == "@keys" {
				return &cost.SizeEstimate{Min: 0, Max: MaxStringLen}
			}
			t = t.elem
		}
		switch t.kind {
		case kindString:
			return &cost.SizeEstimate{Min: 0, Max: MaxStringLen}
		case kindList, kindMap, kindDyn:
			return &cost.SizeEstimate{Min: 0, Max: MaxListLen}
		}
		return nil
	}
	if t, ok := s.tables[path[0]]; ok {
		switch len(path) {
		case 1:
			return &cost.SizeEstimate{Min: t.rows, Max: t.rows}
		case 2:
			return &cost.SizeEstimate{Min: t.cols, Max: t.cols}
		}
		return &cost.SizeEstimate{Min: 0, Max: t.maxCell}
	}
	return nil
}

func (s *sizeBounds) EstimateCallCost(function, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	return nil
}

// InterruptAbove is the estimated cost above which an expression with a
// comprehension (all, exists, map, filter) checks its context while it
// runs: every interruptEvery steps of a comprehension, it stops with
// CodeCanceled once the context is done. One below it runs in
// milliseconds (engine/RATIONALE.md, "Why does a deadline stop an expression only
// where it loops?"). One without a comprehension runs each of its calls
// once, each bounded at load ("Why does matches cost its compiled program
// ...?"); both are checked only before they start.
const InterruptAbove = 10_000

// interruptEvery is how many comprehension steps an interruptible
// expression takes between two looks at its context.
const interruptEvery = 100

// interruptible is a program that is evaluated with ContextEval.
type interruptible struct{ cel.Program }

// loops reports whether ast has a comprehension, the only place cel-go
// looks at a context while it evaluates.
func loops(ast *cel.Ast) bool {
	found := false
	celast.PostOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		found = found || e.Kind() == celast.ComprehensionKind
	}))
	return found
}
