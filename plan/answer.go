package plan

import (
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the decision's JSON, byte for byte what
// engine.Decision.MarshalJSON writes (without HTML escaping):
// {"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}
// with "copy", "capsule" and "flags" where set, or
// {"error":{"type":"BufferError","message":"..."},"rule":...,"ruleset":...}.
func (d Decision) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	if d.ErrorType == "" {
		if d.DeviceType != "" { // "" only in the zero decision of a failed import's explanation
			b = append(b, `"device_type":`...)
			b = appendString(b, d.DeviceType)
			b = append(b, ',')
		}
		b = append(b, `"device_type_code":`...)
		b = strconv.AppendInt(b, d.DeviceTypeCode, 10)
		b = append(b, `,"device_id":`...)
		b = strconv.AppendInt(b, d.DeviceID, 10)
		if d.Copy {
			b = append(b, `,"copy":true`...)
		}
		if d.Capsule != "" {
			b = append(b, `,"capsule":`...)
			b = appendString(b, d.Capsule)
		}
		if d.Flags != 0 {
			b = append(b, `,"flags":[`...)
			for f, first := d.Flags, true; f != 0; first = false {
				bit := bits.TrailingZeros64(f)
				if !first {
					b = append(b, ',')
				}
				b = appendString(b, flagsString(1<<bit))
				f &^= 1 << bit
			}
			b = append(b, ']')
		}
		b = append(b, ',')
	} else {
		b = append(b, `"error":{"type":`...)
		b = appendString(b, d.ErrorType)
		b = append(b, `,"message":`...)
		b = appendString(b, d.ErrorMessage)
		b = append(b, "},"...)
	}
	b = append(b, `"rule":`...)
	b = appendString(b, d.Rule)
	b = append(b, `,"ruleset":`...)
	b = appendString(b, d.RuleSet)
	return append(b, '}')
}

const hex = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off:
// invalid UTF-8 becomes U+FFFD, control characters and U+2028/U+2029
// are escaped.
func appendString(b []byte, s string) []byte { return appendQuoted(b, s, false) }

// appendQuoted is appendString, and with html also escapes <, > and &
// as \u003c, \u003e and \u0026, as json.Marshal does.
func appendQuoted(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
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
