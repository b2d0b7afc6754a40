package plan

import (
	"strconv"
	"unicode/utf8"
)

// sprintf formats the messages of this package as fmt.Sprintf would,
// for the verbs they use: %s and %v of strings and errors, %d of
// integers, %q of strings. It keeps fmt, and the reflection fmt brings,
// out of the decision module (wasm/decision/RATIONALE.md, "Why a second module?").
func sprintf(format string, args ...any) string {
	b := make([]byte, 0, len(format)+16*len(args))
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b = append(b, c)
			continue
		}
		i++
		if format[i] == '%' {
			b = append(b, '%')
			continue
		}
		if len(args) == 0 {
			b = append(b, "%!"...)
			b = append(b, format[i])
			b = append(b, "(MISSING)"...)
			continue
		}
		b = appendArg(b, format[i], args[0])
		args = args[1:]
	}
	return string(b)
}

func appendArg(b []byte, verb byte, arg any) []byte {
	switch x := arg.(type) {
	case string:
		if verb == 'q' {
			return appendQuote(b, x)
		}
		return append(b, x...)
	case error:
		return append(b, x.Error()...)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case Op:
		return strconv.AppendUint(b, uint64(x), 10)
	case Kind:
		return strconv.AppendUint(b, uint64(x), 10)
	case byte:
		return strconv.AppendUint(b, uint64(x), 10)
	}
	return append(b, "%!(BADTYPE)"...)
}

// appendQuote is strconv.AppendQuote, here because strconv's quoting
// and its helpers were 5 KB of the decision module's brotli; printable
// runes are strconv.IsPrint's. FuzzAppendQuote holds it to strconv's.
func appendQuote(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if n == 1 && r == utf8.RuneError {
			b = append(b, '\\', 'x', hex[s[i]>>4], hex[s[i]&0xf])
			i++
			continue
		}
		b = appendEscapedRune(b, r, s[i:i+n])
		i += n
	}
	return append(b, '"')
}

func appendEscapedRune(b []byte, r rune, text string) []byte {
	const controls, letters = "\a\b\f\n\r\t\v", "abfnrtv"
	switch {
	case r == '"' || r == '\\':
		return append(b, '\\', byte(r))
	case strconv.IsPrint(r):
		return append(b, text...)
	}
	for i := range len(controls) {
		if rune(controls[i]) == r {
			return append(b, '\\', letters[i])
		}
	}
	digits, escape := 2, byte('x')
	switch {
	case r < ' ' || r == 0x7f:
	case r < 0x10000:
		digits, escape = 4, 'u'
	default:
		digits, escape = 8, 'U'
	}
	b = append(b, '\\', escape)
	for s := 4 * (digits - 1); s >= 0; s -= 4 {
		b = append(b, hex[r>>s&0xf])
	}
	return b
}

// quote is strconv.Quote.
func quote(s string) string { return string(appendQuote(nil, s)) }
