package plan

import (
	"math"
	"strconv"
)

// Values at run time are Go values: nil (null), bool, int64, uint64,
// float64, string, []any (a list), *Map, and *evalError for an error
// that travels as a value, as CEL's do.

// Map is a CEL map: its entries in order.
type Map struct {
	Keys, Vals []any
}

// find looks a key up as CEL does: numeric keys by value, across int,
// uint and double.
//
//go:noinline
func (m *Map) find(k any) (any, bool) {
	for i, mk := range m.Keys {
		if keyEqual(mk, k) {
			return m.Vals[i], true
		}
	}
	return nil, false
}

func keyEqual(a, b any) bool {
	switch a.(type) {
	case string:
		s, ok := b.(string)
		return ok && s == a.(string)
	case bool:
		x, ok := b.(bool)
		return ok && x == a.(bool)
	}
	return isNumber(a) && isNumber(b) && equal(a, b)
}

// evalError is a CEL error value: a failed call, carried up the tree
// until a logical operator absorbs it or the expression ends.
type evalError struct {
	_    [0]func() // not comparable: no equality function in the module
	msg  string
	cost bool // the step budget ran out: CodeCostLimit
}

func errorf(format string, args ...any) *evalError {
	return &evalError{msg: sprintf(format, args...)}
}

// noOverload is cel-go's error for arguments no overload takes.
var noOverload = &evalError{msg: "no such overload"}

//go:noinline
func noOverloadFor(f Func) *evalError { return &evalError{msg: "no such overload: " + f.String()} }

func isError(v any) bool { _, ok := v.(*evalError); return ok }

func isNumber(v any) bool {
	switch v.(type) {
	case int64, uint64, float64:
		return true
	}
	return false
}

// typeName is the CEL name of a value's type.
//
//go:noinline
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null_type"
	case bool:
		return "bool"
	case int64:
		return "int"
	case uint64:
		return "uint"
	case float64:
		return "double"
	case string:
		return "string"
	case []any:
		return "list"
	case *Map:
		return "map"
	}
	return "error"
}

// equal is CEL's ==: numbers compare by value across int, uint and
// double, values of different types are unequal, lists and maps compare
// element by element.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64, uint64, float64:
		c, ok := compareNumbers(a, b)
		return ok && c == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Map:
		y, ok := b.(*Map)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i, k := range x.Keys {
			v, found := y.find(k)
			if !found || !equal(x.Vals[i], v) {
				return false
			}
		}
		return true
	}
	return false
}

// compareNumbers orders two numbers of any numeric type; ok is false when
// either is not a number or is NaN.
func compareNumbers(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y), true
		case uint64:
			if x < 0 {
				return -1, true
			}
			return cmpOrdered(uint64(x), y), true
		case float64:
			return compareIntDouble(x, y)
		}
	case uint64:
		switch y := b.(type) {
		case int64:
			if y < 0 {
				return 1, true
			}
			return cmpOrdered(x, uint64(y)), true
		case uint64:
			return cmpOrdered(x, y), true
		case float64:
			return compareUintDouble(x, y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			c, ok := compareIntDouble(y, x)
			return -c, ok
		case uint64:
			c, ok := compareUintDouble(y, x)
			return -c, ok
		case float64:
			if math.IsNaN(x) || math.IsNaN(y) {
				return 0, false
			}
			return cmpOrdered(x, y), true
		}
	}
	return 0, false
}

func compareIntDouble(i int64, d float64) (int, bool) {
	switch {
	case math.IsNaN(d):
		return 0, false
	case d < math.MinInt64:
		return 1, true
	case d >= math.MaxInt64:
		return -1, true
	}
	return cmpOrdered(float64(i), d), true
}

func compareUintDouble(u uint64, d float64) (int, bool) {
	switch {
	case math.IsNaN(d):
		return 0, false
	case d < 0:
		return 1, true
	case d >= math.MaxUint64:
		return -1, true
	}
	return cmpOrdered(float64(u), d), true
}

func cmpOrdered[T int64 | uint64 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// formatValue writes a value as cel-go's %v does, for messages.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL_VALUE"
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return "[" + join(parts, ", ") + "]"
	case *Map:
		parts := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			parts[i] = formatValue(k) + ": " + formatValue(x.Vals[i])
		}
		return "{" + join(parts, ", ") + "}"
	case *evalError:
		return x.msg
	}
	return "?"
}
