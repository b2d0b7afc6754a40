// Package number reads the integers of inputs as hosts send them: any Go
// integer type, a float64 without a fraction (what JavaScript and generic
// JSON decoders produce), or a json.Number. The engine and the ABI codec
// both use it, so an input is an int to one exactly when it is to the other.
package number

import (
	"encoding/json"
	"math"
)

// Int returns v as an int64, and whether it is an integer that fits.
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint:
		return int64(x), x <= math.MaxInt64
	case uint64:
		return int64(x), x <= math.MaxInt64
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		if f, err := x.Float64(); err == nil {
			return Int(f) // 1.0 and 1e0 are ints, as a float64 is
		}
	}
	return 0, false
}
