package plan

import (
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// call applies a function as cel-go does: its arguments are evaluated
// left to right and the first error among them is the result (all but
// the loop condition of all and exists, which takes an error as true).
func (f *frame) call(node *Node) any {
	var buf [3]any
	args := buf[:0]
	for _, a := range node.Args {
		v := f.eval(a)
		if isError(v) && node.Func != FuncNotStrictlyFalse {
			return v
		}
		args = append(args, v)
	}
	return apply(node.Func, args)
}

// apply is one function on evaluated arguments. Singleton operators
// (!, +, *, the orderings, in, size) answer "no such overload" for
// arguments of the wrong type, and "no such overload: <op>" where the
// first argument has no such operation at all, unless it is a string,
// which answers what it does not take with "no such overload" (a
// receiver in cel-go); contains, startsWith and endsWith, one overload
// each, answer "no such overload"; the other functions with typed
// overloads answer "no such overload: <name>(<types>)", as cel-go's
// dispatch does.
func apply(fn Func, args []any) any {
	switch fn {
	case FuncNot:
		if b, ok := args[0].(bool); ok {
			return !b
		}
		return noOverload
	case FuncNotStrictlyFalse:
		if b, ok := args[0].(bool); ok {
			return b
		}
		return true
	case FuncDyn:
		return args[0]
	case FuncAdd:
		return add(args[0], args[1])
	case FuncMultiply:
		return multiply(args[0], args[1])
	case FuncLess, FuncLessEquals, FuncGreater, FuncGreaterEquals:
		return order(fn, args[0], args[1])
	case FuncIn:
		switch c := args[1].(type) {
		case []any:
			for _, e := range c {
				if equal(args[0], e) {
					return true
				}
			}
			return false
		case *Map:
			_, ok := c.find(args[0])
			return ok
		}
		return noOverload
	case FuncSize:
		switch x := args[0].(type) {
		case string:
			return int64(utf8.RuneCountInString(x))
		case []any:
			return int64(len(x))
		case *Map:
			return int64(len(x.Keys))
		}
		return noOverloadFor(FuncSize)
	case FuncInt:
		return toInt(args[0])
	case FuncString:
		return toString(args[0])
	case FuncContains, FuncStartsWith, FuncEndsWith, FuncIndexOf, FuncSplit:
		s, ok1 := args[0].(string)
		t, ok2 := args[1].(string)
		if ok1 && ok2 {
			return stringFunc(fn, s, t)
		}
		if fn == FuncContains || fn == FuncStartsWith || fn == FuncEndsWith {
			return noOverload
		}
	}
	return signatureError(fn, args)
}

// signatureError is cel-go's "no such overload: f(type, type)".
func signatureError(fn Func, args []any) *evalError {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = typeName(a)
	}
	return &evalError{msg: "no such overload: " + fn.String() + "(" + join(names, ", ") + ")"}
}

func add(a, b any) any {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x + y
		}
		return noOverload
	case []any:
		if y, ok := b.([]any); ok {
			out := make([]any, 0, len(x)+len(y))
			return append(append(out, x...), y...)
		}
		return noOverload
	case int64:
		if y, ok := b.(int64); ok {
			if s := x + y; (s > x) == (y > 0) {
				return s
			}
			return errIntOverflow
		}
		return noOverload
	case uint64:
		if y, ok := b.(uint64); ok {
			if s := x + y; s >= x {
				return s
			}
			return errUintOverflow
		}
		return noOverload
	case float64:
		if y, ok := b.(float64); ok {
			return x + y
		}
		return noOverload
	}
	return noOverloadFor(FuncAdd)
}

var (
	errIntOverflow  = &evalError{msg: "integer overflow"}
	errUintOverflow = &evalError{msg: "unsigned integer overflow"}
)

func multiply(a, b any) any {
	switch x := a.(type) {
	case uint64:
		y, ok := b.(uint64)
		if !ok {
			return noOverload
		}
		if hi, lo := bits.Mul64(x, y); hi == 0 {
			return lo
		}
		return errUintOverflow
	case float64:
		y, ok := b.(float64)
		if !ok {
			return noOverload
		}
		return x * y
	}
	x, ok := a.(int64)
	if _, str := a.(string); !ok && str {
		return noOverload
	}
	if !ok {
		return noOverloadFor(FuncMultiply)
	}
	y, ok := b.(int64)
	if !ok {
		return noOverload
	}
	if x == 0 || y == 0 {
		return int64(0)
	}
	p := x * y
	if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return errIntOverflow
	}
	return p
}

// order is <, <=, > and >=: bools, strings, and numbers of any numeric
// type with one another.
func order(fn Func, a, b any) any {
	var c int
	switch x := a.(type) {
	case bool:
		y, ok := b.(bool)
		if !ok {
			return noOverload
		}
		c = cmpBool(x, y)
	case string:
		y, ok := b.(string)
		if !ok {
			return noOverload
		}
		c = cmpOrdered(x, y)
	case int64, uint64, float64:
		var ok bool
		if c, ok = compareNumbers(a, b); !ok {
			if isNumber(b) {
				return &evalError{msg: "NaN values cannot be ordered"}
			}
			return noOverload
		}
	default:
		return noOverloadFor(fn)
	}
	switch fn {
	case FuncLess:
		return c < 0
	case FuncLessEquals:
		return c <= 0
	case FuncGreater:
		return c > 0
	}
	return c >= 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func toInt(v any) any {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		if x > math.MaxInt64 {
			return errIntOverflow
		}
		return int64(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || x <= math.MinInt64 || x >= math.MaxInt64 {
			return errIntOverflow
		}
		return int64(x)
	case string:
		if n, ok := parseInt(x); ok {
			return n
		}
		return &evalError{msg: "type conversion error from 'string' to 'int'"}
	}
	return signatureError(FuncInt, []any{v})
}

func toString(v any) any {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return signatureError(FuncString, []any{v})
}

func stringFunc(fn Func, s, t string) any {
	switch fn {
	case FuncContains:
		return indexOf(s, t) >= 0
	case FuncStartsWith:
		return hasPrefix(s, t)
	case FuncEndsWith:
		return hasSuffix(s, t)
	case FuncIndexOf:
		i := indexOf(s, t)
		if i < 0 {
			return int64(-1)
		}
		return int64(utf8.RuneCountInString(s[:i]))
	}
	parts := split(s, t)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

// Fold is the value of node n when its arguments are the constants args
// (for OpSelect, args[0] is the operand): what a plan's builder folds
// into a constant. ok is false for a node it does not fold (inputs,
// values, comprehensions) or one whose value is an error, which is left
// to fail when evaluated.
func Fold(n Node, args []any) (v any, ok bool) {
	switch n.Op {
	case OpAnd, OpOr, OpCond, OpEq, OpNe, OpIndex, OpSelect, OpList, OpMap, OpCall:
	default:
		return nil, false
	}
	p := &Plan{StepLimit: uint64(len(args)) + 1, Nodes: make([]Node, 0, len(args)+1)}
	for _, a := range args {
		p.Nodes = append(p.Nodes, Node{Op: OpConst, Const: a})
	}
	n.Args = make([]int, len(args))
	for i := range args {
		n.Args[i] = i
	}
	if !n.valid() {
		return nil, false
	}
	p.Nodes = append(p.Nodes, n)
	f := &frame{p: p, steps: new(uint64)}
	v = f.eval(len(args))
	if isError(v) || f.spent != nil {
		return nil, false
	}
	return v, true
}
