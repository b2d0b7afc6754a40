package plan

import (
	"math/bits"
	"unicode/utf8"
)

// AppendJSON appends the decision's JSON, byte for byte what
// engine.Decision.MarshalJSON writes (without HTML escaping):
// {"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}
// with "copy", "capsule" and "flags" where set, or
// {"error":{"type":"BufferError","message":"..."},"rule":...,"ruleset":...}.
func (d Decision) AppendJSON(b []byte) []byte {
	w := &jsonWriter{b: b}
	w.decision(&d)
	return w.b
}

func (w *jsonWriter) decision(d *Decision) {
	w.lit("{")
	if d.ErrorType == "" {
		if d.DeviceType != "" { // "" only in the zero decision of a failed import's explanation
			w.lit(`"device_type":`)
			w.str(d.DeviceType)
			w.lit(",")
		}
		w.lit(`"device_type_code":`)
		w.int64(d.DeviceTypeCode)
		w.lit(`,"device_id":`)
		w.int64(d.DeviceID)
		if d.Copy {
			w.lit(`,"copy":true`)
		}
		if d.Capsule != "" {
			w.lit(`,"capsule":`)
			w.str(d.Capsule)
		}
		if d.Flags != 0 {
			w.lit(`,"flags":[`)
			for f, first := d.Flags, true; f != 0; first = false {
				bit := bits.TrailingZeros64(f)
				if !first {
					w.lit(",")
				}
				w.str(flagsString(1 << bit))
				f &^= 1 << bit
			}
			w.lit("]")
		}
		w.lit(",")
	} else {
		w.lit(`"error":{"type":`)
		w.str(d.ErrorType)
		w.lit(`,"message":`)
		w.str(d.ErrorMessage)
		w.lit("},")
	}
	w.lit(`"rule":`)
	w.str(d.Rule)
	w.lit(`,"ruleset":`)
	w.str(d.RuleSet)
	w.lit("}")
}

const hex = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off:
// invalid UTF-8 becomes U+FFFD, control characters and U+2028/U+2029
// are escaped.
func appendString(b []byte, s string) []byte { return appendQuoted(b, s, false) }

// safeASCII says of each ASCII byte whether a JSON string holds it as
// itself: safeHTML where HTML escaping keeps it too, safeJSON for <, >
// and & (which it escapes), neither for the bytes every string escapes.
// One load a byte, not six comparisons: quoting is one of a decision's
// costliest steps in WebAssembly.
const safeASCII = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\x01\x01\x01\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x02\x01\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"

const (
	safeHTML = 1
	safeJSON = 2
)

// appendQuoted is appendString, and with html also escapes <, > and &
// as \u003c, \u003e and \u0026, as json.Marshal does.
func appendQuoted(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	safe := byte(safeHTML)
	if !html {
		safe |= safeJSON
	}
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safeASCII[c]&safe != 0 {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
