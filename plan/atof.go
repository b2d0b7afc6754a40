package plan

import "math"

// The numbers of input lines, read without strconv's parsers: their
// errors quote the text with strconv's quoting, and the two together,
// with float32 parsing the module never uses, were 12 KB of the Go
// build of the decision module's brotli (plan/doc.go, "What it links").
// FuzzParseNumbers holds both to strconv's.

// parseInt is strconv.ParseInt(s, 10, 64): an optional sign and decimal
// digits, nothing else, within int64.
func parseInt(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 || n > (1<<63)/10 {
			return 0, false
		}
		if n = n*10 + uint64(c); n > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(n), true // -(1<<63) wraps to itself
	}
	if n == 1<<63 {
		return 0, false
	}
	return int64(n), true
}

// exactPow10 are the powers of ten a double holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// maxDigits is how many significant digits parseDouble keeps, and a
// digit after them stands for any that are not zero: a double and the
// midpoint between two have at most 767 significant digits, so the
// nearest double of the digits kept is the number's (strconv keeps 800
// the same way).
const maxDigits = 800

// parseDouble is strconv.ParseFloat(s, 64) for a JSON number's text,
// which the scanner has checked: the nearest double, halves to even; ok
// is false for a number beyond the largest double (ParseFloat's range
// error, whose value is an infinity).
func parseDouble(s string) (float64, bool) {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	f, ok := nearestDouble(numberDigits(s))
	if neg {
		f = -f
	}
	return f, ok
}

// numberDigits splits a JSON number without its sign into its
// significant digits (at most maxDigits, then a 1 for any others not
// zero; no leading or trailing zeros) and the power of ten after the
// last: the number is digits × 10^exp.
func numberDigits(s string) (digits []byte, exp int) {
	i := 0
	dropped, afterPoint := false, false
	for ; i < len(s) && (s[i] == '.' || '0' <= s[i] && s[i] <= '9'); i++ {
		c := s[i]
		if c == '.' {
			afterPoint = true
			continue
		}
		if afterPoint {
			exp--
		}
		switch {
		case len(digits) == 0 && c == '0':
		case len(digits) < maxDigits:
			digits = append(digits, c)
		default:
			dropped = dropped || c != '0'
			exp++
		}
	}
	if i < len(s) { // an exponent: e or E, a sign, digits
		i++
		eneg := s[i] == '-'
		if s[i] == '-' || s[i] == '+' {
			i++
		}
		e := 0
		for ; i < len(s); i++ {
			if e < 1<<20 { // far past any double: saturate
				e = e*10 + int(s[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if dropped {
		digits = append(digits, '1')
		exp--
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	return digits, exp
}

// nearestDouble is the double nearest digits × 10^exp, halves to even;
// ok is false past the largest double.
func nearestDouble(digits []byte, exp int) (float64, bool) {
	if len(digits) == 0 {
		return 0, true
	}
	lead := len(digits) + exp // the number is below 10^lead, at least 10^(lead-1)
	switch {
	case lead > 310:
		return math.Inf(1), false
	case lead < -324: // below 10^-325, under half the least double
		return 0, true
	}
	if len(digits) <= 15 { // exact in a double, as is 10^|exp| up to 22: one rounding
		var m uint64
		for _, c := range digits {
			m = m*10 + uint64(c-'0')
		}
		switch {
		case exp == 0:
			return float64(m), true
		case exp > 0 && exp <= 22:
			return float64(m) * exactPow10[exp], true
		case exp < 0 && exp >= -22:
			return float64(m) / exactPow10[-exp], true
		}
	}
	// num / den is the number, exactly.
	var num nat
	den := nat{1}
	for _, c := range digits {
		num = num.mulAdd(10, uint32(c-'0'))
	}
	for e := exp; e > 0; e-- {
		num = num.mulAdd(10, 0)
	}
	for e := exp; e < 0; e++ {
		den = den.mulAdd(10, 0)
	}
	// q × 2^k, q of 53 bits (fewer only at the least exponent).
	k := max(num.bitLen()-den.bitLen()-53, -1074)
	for {
		n, d := num, den
		if k >= 0 {
			d = d.shl(k)
		} else {
			n = n.shl(-k)
		}
		q, rem := n.divSmallQuotient(d, 55)
		switch {
		case q >= 1<<53:
			k++
			continue
		case q < 1<<52 && k > -1074:
			k--
			continue
		}
		if c := rem.shl(1).cmp(d); c > 0 || c == 0 && q&1 == 1 {
			if q++; q == 1<<53 {
				q, k = 1<<52, k+1
			}
		}
		if q < 1<<52 { // subnormal: k is -1074
			return math.Float64frombits(q), true
		}
		e := k + 1075
		if e >= 2047 {
			return math.Inf(1), false
		}
		return math.Float64frombits(uint64(e)<<52 | q&(1<<52-1)), true
	}
}

// nat is a natural number, little-endian base 2^32, no high zero limbs
// (zero is empty).
type nat []uint32

func (x nat) norm() nat {
	for len(x) > 0 && x[len(x)-1] == 0 {
		x = x[:len(x)-1]
	}
	return x
}

// mulAdd is x×m + a.
func (x nat) mulAdd(m, a uint32) nat {
	carry := uint64(a)
	for i := range x {
		t := uint64(x[i])*uint64(m) + carry
		x[i], carry = uint32(t), t>>32
	}
	if carry != 0 {
		x = append(x, uint32(carry))
	}
	return x.norm()
}

func (x nat) bitLen() int {
	if len(x) == 0 {
		return 0
	}
	top := x[len(x)-1]
	n := 0
	for ; top != 0; top >>= 1 {
		n++
	}
	return 32*(len(x)-1) + n
}

// shl is x×2^s, a new number.
func (x nat) shl(s int) nat {
	if len(x) == 0 {
		return nil
	}
	words, bits := s/32, uint(s%32)
	z := make(nat, len(x)+words+1)
	for i, w := range x {
		z[i+words] |= w << bits
		if bits > 0 {
			z[i+words+1] = w >> (32 - bits)
		}
	}
	return z.norm()
}

func (x nat) cmp(y nat) int {
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	for i := len(x) - 1; i >= 0; i-- {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// sub is x - y in place, x at least y.
func (x nat) sub(y nat) nat {
	var borrow uint64
	for i := range x {
		var yi uint64
		if i < len(y) {
			yi = uint64(y[i])
		}
		t := uint64(x[i]) - yi - borrow
		x[i], borrow = uint32(t), (t>>32)&1
	}
	return x.norm()
}

// divSmallQuotient divides x by d where the quotient is below 2^bits:
// the quotient and the remainder (x, reused).
func (x nat) divSmallQuotient(d nat, bits int) (uint64, nat) {
	x = append(nat(nil), x...)
	var q uint64
	for i := bits - 1; i >= 0; i-- {
		if di := d.shl(i); x.cmp(di) >= 0 {
			x = x.sub(di)
			q |= 1 << i
		}
	}
	return q, x
}
