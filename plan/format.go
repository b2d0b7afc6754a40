package plan

import "strconv"

// sprintf formats the messages of this package as fmt.Sprintf would,
// for the verbs they use: %s and %v of strings and errors, %d of
// integers, %q of strings. It keeps fmt, and the reflection fmt brings,
// out of the decision module (RATIONALE.md, "Why a second module?").
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
			return strconv.AppendQuote(b, x)
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
