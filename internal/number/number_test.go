package number

import (
	"encoding/json"
	"math"
	"testing"
)

func TestInt(t *testing.T) {
	tests := []struct {
		in   any
		want int64
		ok   bool
	}{
		{int(-3), -3, true},
		{int64(math.MinInt64), math.MinInt64, true},
		{int64(math.MaxInt64), math.MaxInt64, true},
		{int32(math.MinInt32), math.MinInt32, true},
		{int16(-7), -7, true},
		{int8(-128), -128, true},
		{uint(7), 7, true},
		{uint(math.MaxUint64), 0, false},
		{uint64(math.MaxInt64), math.MaxInt64, true},
		{uint64(math.MaxInt64 + 1), 0, false},
		{uint32(math.MaxUint32), math.MaxUint32, true},
		{uint16(65535), 65535, true},
		{uint8(255), 255, true},

		// A float64 is an int when it has no fraction and is exact.
		{1.0, 1, true},
		{math.Copysign(0, -1), 0, true}, // negative zero
		{1.5, 0, false},
		{float64(1<<53 - 1), 1<<53 - 1, true},
		{float64(1 << 53), 0, false}, // past 2^53 a float64 need not be the int it was written as
		{-float64(1<<53 - 1), -(1<<53 - 1), true},
		{math.Inf(1), 0, false},
		{math.NaN(), 0, false},

		// A json.Number is an int as a float64 of its value is.
		{json.Number("12030"), 12030, true},
		{json.Number("-9223372036854775808"), math.MinInt64, true},
		{json.Number("9223372036854775808"), 0, false},
		{json.Number("1.0"), 1, true},
		{json.Number("1e0"), 1, true},
		{json.Number("2.5"), 0, false},
		{json.Number("1e300"), 0, false},
		{json.Number("one"), 0, false},
		{json.Number(""), 0, false},

		// Neither an integer type nor a number.
		{float32(1), 0, false},
		{"1", 0, false},
		{true, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := Int(tt.in)
		if ok != tt.ok || ok && got != tt.want { // the int64 is not promised when ok is false
			t.Errorf("Int(%T %v) got %d, %v; want %d, %v", tt.in, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
