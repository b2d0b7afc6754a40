package engine

import (
	"errors"
	"fmt"
	"regexp/syntax"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// regexCost makes the cost of matches what RE2 spends on it. Go's
// regexp runs a pattern's compiled program over the string, each
// instruction at most once per code point (the NFA; the backtracker and
// the one-pass matcher do less), so one call costs up to
// insts·(len(s)+1) steps however short the pattern's text: '.{0,1000}'
// is nine characters and 2,003 instructions. cel-go charges a tenth of
// a unit per code point times a quarter per character of the pattern; a
// regexCost charges a tenth of a unit per code point for every
// instruction, from the pattern's compiled program and the string's
// declared limit, at load and, for an expression that is tracked, at run
// time.
//
// One call runs to its end before any tracker can stop it, so a call
// that could pass the cost limit by itself is refused at load, as
// stringGrowth refuses a string that could. So is a pattern that is not
// a string literal: from an input of MaxStringLen bytes RE2 can compile
// millions of instructions ('(?:...){1000}'), which no expression of
// the cost limit could afford to run.
type regexCost struct {
	limit   uint64
	checked *celast.AST
	load    *regexLoad        // shared by the expressions of one Load; nil: this expression's own
	insts   map[string]uint64 // the instructions of each literal pattern met
	refused []refusedCall     // in estimate order
}

// regexLoad is what one Load has compiled of matches patterns: each
// pattern's count, by its text, compiled once however many expressions
// use it, and the instructions compiled in all, which MaxLoadRegexInsts
// bounds.
type regexLoad struct {
	counts   map[string]uint64
	compiled uint64
}

// refusedCall is a call the estimate refuses, and why.
type refusedCall struct {
	id      int64
	code    Code
	message string
	hint    string
}

// MaxRegexInsts is the most instructions a pattern's compiled program may
// have: at a tenth of a unit per instruction and code point, a larger one
// passes DefaultCostLimit on an empty string. A pattern whose size, as
// Go's regexp/syntax reckons it from the parsed pattern, passes it is
// refused before it is compiled.
const MaxRegexInsts = 10 * DefaultCostLimit

// MaxLoadRegexInsts is the most instructions the matches patterns of one
// Load may compile to in all, each different pattern counted once. A
// pattern is compiled twice, to count it and by cel-go to run it, about a
// microsecond an instruction (more under load, and about nine times that
// in the WebAssembly module), so this bounds what a load spends on
// patterns to a fraction of a second natively, whatever the rule files'
// size (engine/RATIONALE.md, "Why does matches cost its compiled program ...?").
// An input's matches may compile to 244 instructions at most.
const MaxLoadRegexInsts = 250_000

func (r *regexCost) options() []cost.Option {
	return []cost.Option{
		cost.OverloadCostEstimate(overloads.Matches, r.global),
		cost.OverloadCostEstimate(overloads.MatchesString, r.member),
	}
}

// member is s.matches(pattern).
func (r *regexCost) member(est cost.Estimator, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if target == nil || len(args) != 1 {
		return nil
	}
	return r.call(est, *target, args[0])
}

// global is matches(s, pattern).
func (r *regexCost) global(est cost.Estimator, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if len(args) != 2 {
		return nil
	}
	return r.call(est, args[0], args[1])
}

func (r *regexCost) call(est cost.Estimator, str, pattern cost.AstNode) *cost.CallEstimate {
	id := callOf(r.checked, str)
	text, ok := literalString(pattern)
	if !ok {
		r.refuse(id, CodeCostLimit, "matches has a pattern that is not a string literal, so its cost has no bound",
			"write the pattern as a string literal, such as platform_version.matches('^cuda 12'); a pattern from an input can compile to millions of instructions")
		return nil
	}
	n := cost.EstimateSize(est, str).Max
	insts, err := r.count(text, n)
	if err != nil {
		code, hint := CodeCELType, "matches takes RE2 syntax (Go's regexp)"
		switch {
		case errors.Is(err, errLoadInsts):
			code, hint = CodeCostLimit, "each different pattern of a rules directory counts once: use fewer or smaller patterns (contains, startsWith and endsWith compile nothing), or the same pattern text where it repeats"
		case errors.Is(err, errTooManyInsts):
			code, hint = CodeCostLimit, regexHint
		}
		r.refuse(id, code, fmt.Sprintf("matches: the pattern %.40q %v", text, err), hint)
		return nil
	}
	if r.insts == nil {
		r.insts = map[string]uint64{}
	}
	r.insts[text] = insts
	c := matchCost(insts, n)
	if c > r.limit {
		msg := fmt.Sprintf("matches: the pattern %.40q compiles to %d instructions; on a string of %d code points it costs up to %d, over the cost limit of %d", text, insts, n, c, r.limit)
		if n == maxUint64 {
			msg = fmt.Sprintf("matches: the string's size has no bound here (a value's, or one a call builds), so a pattern of %d instructions (%.40q) has no bound on its cost", insts, text)
		}
		r.refuse(id, CodeCostLimit, msg, regexHint)
	}
	return cost.NewCallEstimate(cost.RangedCostEstimate(1, c), nil)
}

func (r *regexCost) refuse(id int64, code Code, message, hint string) {
	r.refused = append(r.refused, refusedCall{id: id, code: code, message: message, hint: hint})
}

// count is the instructions of pattern's program, for a matches on a
// string of up to n code points. It compiles a pattern only when even a
// lower bound of its program's size keeps that call within the limit,
// only once a load, and only while its size bound fits what is left of
// the load's MaxLoadRegexInsts, so what a load compiles never passes it.
func (r *regexCost) count(pattern string, n uint64) (uint64, error) {
	if r.load == nil {
		r.load = &regexLoad{}
	}
	if insts, ok := r.load.counts[pattern]; ok {
		return insts, nil
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		var serr *syntax.Error
		if errors.As(err, &serr) && serr.Code == syntax.ErrLarge {
			return 0, fmt.Errorf("%w (more than Go's regexp takes)", errTooManyInsts)
		}
		return 0, fmt.Errorf("does not compile: %v", err)
	}
	bound := programBound(re)
	if bound > MaxRegexInsts {
		return 0, fmt.Errorf("%w (up to %d, over the %s a pattern may have)", errTooManyInsts, bound, thousands(MaxRegexInsts))
	}
	least := programLeast(re)
	if c := matchCost(least, n); c > r.limit {
		if n == maxUint64 {
			return 0, fmt.Errorf("%w (at least %d) to run on a string whose size has no bound here (a value's, or one a call builds)", errTooManyInsts, least)
		}
		return 0, fmt.Errorf("%w: at least %d, so on a string of %d code points it costs at least %d, over the cost limit of %d", errTooManyInsts, least, n, c, r.limit)
	}
	if r.load.compiled+bound > MaxLoadRegexInsts {
		return 0, fmt.Errorf("%w: up to %d, and the patterns before it in these rules to %d; the patterns of a load compile to at most %s in all", errLoadInsts, bound, r.load.compiled, thousands(MaxLoadRegexInsts))
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, fmt.Errorf("does not compile: %v", err)
	}
	insts := uint64(len(prog.Inst))
	r.load.compiled += insts
	if r.load.counts == nil {
		r.load.counts = map[string]uint64{}
	}
	r.load.counts[pattern] = insts
	return insts, nil
}

var regexHint = fmt.Sprintf("a matches costs a tenth per instruction of its compiled pattern and code point of the string, and an input is at most %s characters: "+
	"match an input or a literal; .{0,1000} compiles to a thousand instructions or more, so anchor the pattern, repeat less, or use contains, startsWith and endsWith",
	thousands(MaxStringLen))

// thousands writes n with commas between its groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// matchCost is the cost of one matches of a program of insts
// instructions on a string of n code points: 1 for the call and a tenth
// per instruction and position.
func matchCost(insts, n uint64) uint64 {
	steps := cost.SafeMultiply(insts, cost.SafeAdd(n, 1))
	return cost.SafeAdd(1, steps/10+min(steps%10, 1))
}

var (
	errTooManyInsts = errors.New("compiles to too many instructions")
	errLoadInsts    = errors.New("compiles to too many instructions for one load")
)

// programBound bounds the instructions of re's program: its own, and
// the program's fail and match.
func programBound(re *syntax.Regexp) uint64 { return cost.SafeAdd(sizeBound(re), 2) }

// sizeBound bounds the instructions re compiles to, as regexp/syntax's
// parser bounds them for its own limit (calcSize in parse.go), without
// expanding a repeat.
func sizeBound(re *syntax.Regexp) uint64 {
	var size uint64
	switch re.Op {
	case syntax.OpLiteral:
		size = uint64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		size = 2 + sizeBound(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		size = 1 + sizeBound(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			size = cost.SafeAdd(size, sizeBound(sub))
		}
		size = cost.SafeAdd(size, uint64(len(re.Sub)))
	case syntax.OpRepeat:
		sub := sizeBound(re.Sub[0])
		if re.Max == -1 {
			size = cost.SafeAdd(2, cost.SafeMultiply(uint64(max(re.Min, 1)), sub))
		} else {
			size = cost.SafeAdd(cost.SafeMultiply(uint64(re.Max), cost.SafeAdd(sub, 1)), 1)
		}
	}
	return cost.SafeAdd(max(size, 1), 1) // and the match or fail after it
}

// programLeast is a lower bound of the instructions of re's program:
// those of every copy Simplify makes of a repeat (x{n,m} is m copies of
// x, x{n,} n), an instruction for each literal rune, class and empty
// width, two a capture, and the program's fail and match, but nothing for
// what Simplify may fold (x** is x*) or the compiler may add
// (alternations, loops).
func programLeast(re *syntax.Regexp) uint64 { return cost.SafeAdd(leastInsts(re), 2) }

func leastInsts(re *syntax.Regexp) uint64 {
	switch re.Op {
	case syntax.OpLiteral:
		return uint64(len(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpEmptyMatch,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 1
	case syntax.OpCapture:
		return cost.SafeAdd(2, leastInsts(re.Sub[0]))
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return leastInsts(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		var n uint64
		for _, sub := range re.Sub {
			n = cost.SafeAdd(n, leastInsts(sub))
		}
		return n
	case syntax.OpRepeat:
		copies := re.Max
		if copies == -1 {
			copies = max(re.Min, 1)
		}
		return cost.SafeMultiply(uint64(copies), leastInsts(re.Sub[0]))
	}
	return 0
}

// literalString is the value of a string literal node.
func literalString(n cost.AstNode) (string, bool) {
	e := n.Expr()
	if e == nil || e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// err is the load error for the first call refused, at its position in e.
func (r *regexCost) err(e expression, what string) *Error {
	if len(r.refused) == 0 {
		return nil
	}
	c := r.refused[0]
	loc := r.checked.SourceInfo().GetStartLocation(c.id)
	err := e.errAt(c.code, loc.Line(), loc.Column(), "%s: %s", what, c.message)
	err.Hint = c.hint
	return err
}

// charge is what the run-time tracker charges a matches: the same as at
// load, from the string's real size. Every pattern is a literal whose
// size the estimate counted; nil leaves any other call to cel-go.
func (r *regexCost) charge(overloadID string, args []ref.Val) *uint64 {
	if r == nil || overloadID != overloads.Matches && overloadID != overloads.MatchesString || len(args) != 2 {
		return nil
	}
	pattern, ok := args[1].(types.String)
	if !ok {
		return nil
	}
	insts, ok := r.insts[string(pattern)]
	if !ok {
		return nil
	}
	c := matchCost(insts, cost.ActualSize(args[0]))
	return &c
}
