package plan

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// numberTexts are JSON numbers at the edges of doubles: halves between
// two, the least and largest, past them, long digit strings.
var numberTexts = []string{
	"0", "-0", "1", "-1", "0.1", "1.5", "-2.25e-3", "1e22", "1e23", "9007199254740993", "9007199254740992",
	"9007199254740991", "18446744073709551615", "18446744073709551616", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "0.30000000000000004",
	"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1.8e308", "1e309",
	"-1e400", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "2.47e-324", "5e-324",
	"1e-400", "2.2250738585072011e-308", "2.2250738585072012e-308", "2.225073858507201136057409796709131975934819546351645648e-308",
	"123456789012345678901234567890", "0.000000000000000000000000000001", "1e0", "1E+2", "1e-2", "10.0e-1",
	"100000000000000000000000000000000000000000000000000000000000000000000e-69",
	"0." + strings.Repeat("0", 330) + "1", "1" + strings.Repeat("0", 308), "1" + strings.Repeat("0", 309),
	"9007199254740993." + strings.Repeat("0", 900) + "1", "9007199254740993" + strings.Repeat("0", 900),
	"4503599627370497.5", "4503599627370496.5", "0.5", "1e-323", "8.988465674311579e307",
}

// FuzzParseNumbers holds parseDouble and parseInt to strconv's
// ParseFloat and ParseInt, value and range error alike:
//
//	go test ./plan -run '^$' -fuzz FuzzParseNumbers -fuzztime 60s
func FuzzParseNumbers(f *testing.F) {
	for _, s := range numberTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if wi, err := strconv.ParseInt(s, 10, 64); true {
			gi, ok := parseInt(s)
			if ok != (err == nil) || ok && gi != wi {
				t.Errorf("parseInt(%q) = %d, %v; strconv.ParseInt: %d, %v", s, gi, ok, wi, err)
			}
		}
		if end, msg := scanValue([]byte(s), 0); msg != "" || end != len(s) || s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
			return // not a JSON number
		}
		want, err := strconv.ParseFloat(s, 64)
		got, ok := parseDouble(s)
		if ok != (err == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("parseDouble(%q) = %v, %v; strconv.ParseFloat: %v, %v", s, got, ok, want, err)
		}
	})
}

// TestParseNumbers: the seeds of FuzzParseNumbers, and every number a
// double's shortest text or its halves give, against strconv.
func TestParseNumbers(t *testing.T) {
	for _, s := range numberTexts {
		want, err := strconv.ParseFloat(s, 64)
		got, ok := parseDouble(s)
		if ok != (err == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("parseDouble(%q) = %v, %v; strconv.ParseFloat: %v, %v", s, got, ok, want, err)
		}
	}
	x := uint64(0x9E3779B97F4A7C15)
	for range 20000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := math.Float64frombits(x &^ (1 << 63))
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		next := math.Nextafter(f, math.Inf(1))
		// The exact half between f and the next double, and just
		// either side of it.
		half := new(big.Float).SetPrec(2200).SetFloat64(f)
		half.Add(half, new(big.Float).SetFloat64(next)).Quo(half, big.NewFloat(2))
		exact := half.Text('e', 800)
		mant, exp, _ := strings.Cut(exact, "e")
		mant = strings.TrimRight(mant, "0")
		for _, s := range []string{strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', 25, 64),
			strconv.FormatFloat(f, 'e', 16, 64), mant + "e" + exp, mant + "0000001e" + exp, mant[:len(mant)-1] + "e" + exp} {
			want, err := strconv.ParseFloat(s, 64)
			got, ok := parseDouble(s)
			if ok != (err == nil) || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("parseDouble(%q) = %v, %v; strconv.ParseFloat: %v, %v", s, got, ok, want, err)
			}
		}
	}
}
