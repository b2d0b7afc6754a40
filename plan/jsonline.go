package plan

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The reader of input lines. The engine reads a line with encoding/json
// (engine.RuleSet.DecodeInput: a json.Decoder, UseNumber, one Token after
// the value), and its json_syntax messages quote encoding/json's. This
// reader gives the same values and the same messages without
// encoding/json, which with the reflection and fmt it brings was most of
// the decision module (plan/RATIONALE.md, "Why a hand-written JSON reader?").
// It follows encoding/json's scanner state by state; FuzzReadObject
// checks it against encoding/json itself.

// jsonNumber is a JSON number's text, as json.Number keeps it: an int is
// never rounded.
type jsonNumber string

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

// readObject reads one JSON object, the whole of data, as DecodeInput
// does: the value, nothing but white space after it, an object, no key
// given twice.
//
// A key equal to the name of one of inputs is that name, and a string
// value equal to one of strs (strings) is that value, not a copy. The
// object's fields are appended to top, whose room serves when it is
// enough.
func readObject(data []byte, inputs []Input, strs []any, top object) (object, *Error) {
	if !flatObject(data) {
		end, msg := scanValue(data, 0)
		if msg != "" {
			return nil, &Error{Code: CodeJSON, Message: msg}
		}
		if at, extra := trailing(data, end); extra {
			return nil, &Error{Code: CodeJSON, Message: "unexpected data after the JSON object (at byte " + strconv.Itoa(at) + ")"}
		}
	}
	b := &builder{data: data, inputs: inputs, strs: strs, top: top}
	b.space()
	if b.data[b.i] != '{' {
		return nil, &Error{Code: CodeJSON, Message: "input is " + goTypeName(b.value()) + "; want a JSON object"}
	}
	obj := b.object()
	if b.twice {
		return nil, &Error{Code: CodeJSON, Message: "input has " + quote(b.dup) + " twice"}
	}
	return obj, nil
}

// flatObject reports whether data is, with white space around it, a JSON
// object whose values are strings without escapes, numbers, true, false
// or null: an input line's usual shape, which scanValue would find well
// formed with nothing after it. It checks that in one loop, where
// scanValue takes a step a byte; any other line, well formed or not, is
// scanValue's to read (false).
func flatObject(data []byte) bool {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i = flatString(data, i); i < 0 {
			return false
		}
		if i = skipSpace(data, i); i == len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		if i == len(data) {
			return false
		}
		switch c := data[i]; {
		case c == '"':
			i = flatString(data, i)
		case c == '-' || '0' <= c && c <= '9':
			i = flatNumber(data, i)
		case c == 't' && hasWord(data, i, "true"):
			i += 4
		case c == 'f' && hasWord(data, i, "false"):
			i += 5
		case c == 'n' && hasWord(data, i, "null"):
			i += 4
		default:
			return false
		}
		if i < 0 {
			return false
		}
		if i = skipSpace(data, i); i == len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// hasWord reports whether data holds w at i.
func hasWord(data []byte, i int, w string) bool {
	return len(data)-i >= len(w) && string(data[i:i+len(w)]) == w
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// flatString returns where the string at data[i] ends, or -1 unless it
// is a string without escapes or control characters.
func flatString(data []byte, i int) int {
	if i == len(data) || data[i] != '"' {
		return -1
	}
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c == '\\' || c < 0x20:
			return -1
		}
	}
	return -1
}

// flatNumber returns where the number at data[i] ends, or -1 unless its
// text is JSON's: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func flatNumber(data []byte, i int) int {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if data[i] == '-' {
		i++
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if j, ok := digits(i); ok {
		i = j
	} else {
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j, ok := digits(i + 1)
		if !ok {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j, ok := digits(i)
		if !ok {
			return -1
		}
		i = j
	}
	return i
}

// scanValue scans the JSON value that starts at data[start] (after any
// white space) as json.Decoder.Decode does, and returns where it ends, or
// the error's message: encoding/json's SyntaxError and its offset, or
// its "unexpected EOF" and the engine's words for an empty line.
func scanValue(data []byte, start int) (end int, msg string) {
	s := scanner{step: stBeginValue}
	for i := start; i < len(data); i++ {
		if s.step == stInString { // most of a line: skip what cannot end the string
			for i < len(data) && data[i] >= 0x20 && data[i] != '"' && data[i] != '\\' {
				i++
			}
			if i == len(data) {
				break
			}
		}
		switch s.next(data[i]) {
		case resEnd:
			return i, ""
		case resEndComposite:
			if s.depth == 0 {
				return i + 1, ""
			}
		case resError:
			return 0, s.err + " (at byte " + strconv.Itoa(i+1) + ")"
		}
	}
	if s.next(' ') == resEnd {
		return len(data), ""
	}
	for _, c := range data[start:] {
		if !isSpace(c) {
			return 0, "unexpected EOF"
		}
	}
	return 0, "empty input; want a JSON object"
}

// trailing says whether anything but white space follows the value that
// ends at end, and the offset the engine reports for it: what
// json.Decoder.InputOffset says after a Token that did not end the input.
func trailing(data []byte, end int) (int, bool) {
	p := end
	for p < len(data) && isSpace(data[p]) {
		p++
	}
	if p == len(data) {
		return 0, false
	}
	switch data[p] {
	case '[', '{': // a delimiter Token returns
		return p + 1, true
	case ']', '}', ':', ',': // a Token error at the byte
		return p, true
	}
	// Token decodes a value here: the offset is after it, or at it if it
	// does not decode.
	if e, msg := scanValue(data, p); msg == "" {
		return e, true
	}
	return p, true
}

// The scanner's states, encoding/json's (scanner.go) by name.
const (
	stBeginValue = iota
	stBeginValueOrEmpty
	stBeginStringOrEmpty
	stBeginString
	stEndValue
	stEndTop
	stInString
	stInStringEsc
	stInStringEscU // and the three after it, one for each hex digit read
	_
	_
	_
	stNeg
	st1
	st0
	stDot
	stDot0
	stE
	stESign
	stE0
	stLiteral // in true, false or null: lit[litAt] is the byte expected
	stError
)

// What a step of the scanner says.
const (
	resContinue     = iota
	resEndComposite // a ] or } closed an array or object
	resEnd          // the top-level value ended before this byte
	resError
)

type scanner struct {
	step int
	// depth is how many arrays and objects are open; each has a state,
	// 'a', 'k' (an object, before a key's colon) or 'v' (after it),
	// the first levels' in low, without an allocation, the others' in
	// high.
	depth int
	low   [16]byte
	high  []byte
	lit   string
	litAt int
	err   string
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func (s *scanner) next(c byte) int {
	switch s.step {
	case stBeginValueOrEmpty:
		if isSpace(c) {
			return resContinue
		}
		if c == ']' {
			return s.endValue(c)
		}
		return s.beginValue(c)
	case stBeginValue:
		return s.beginValue(c)
	case stBeginStringOrEmpty:
		if isSpace(c) {
			return resContinue
		}
		if c == '}' {
			*s.top() = 'v'
			return s.endValue(c)
		}
		return s.beginString(c)
	case stBeginString:
		return s.beginString(c)
	case stEndValue:
		return s.endValue(c)
	case stEndTop:
		return s.endTop(c)
	case stInString:
		switch {
		case c == '"':
			s.step = stEndValue
		case c == '\\':
			s.step = stInStringEsc
		case c < 0x20:
			return s.fail(c, "in string literal")
		}
		return resContinue
	case stInStringEsc:
		switch c {
		case 'b', 'f', 'n', 'r', 't', '\\', '/', '"':
			s.step = stInString
			return resContinue
		case 'u':
			s.step = stInStringEscU
			return resContinue
		}
		return s.fail(c, "in string escape code")
	case stInStringEscU, stInStringEscU + 1, stInStringEscU + 2, stInStringEscU + 3:
		if !isHex(c) {
			return s.fail(c, "in \\u hexadecimal character escape")
		}
		if s.step++; s.step > stInStringEscU+3 {
			s.step = stInString
		}
		return resContinue
	case stNeg:
		if c == '0' {
			s.step = st0
			return resContinue
		}
		if '1' <= c && c <= '9' {
			s.step = st1
			return resContinue
		}
		return s.fail(c, "in numeric literal")
	case st1:
		if '0' <= c && c <= '9' {
			return resContinue
		}
		return s.zero(c)
	case st0:
		return s.zero(c)
	case stDot:
		if '0' <= c && c <= '9' {
			s.step = stDot0
			return resContinue
		}
		return s.fail(c, "after decimal point in numeric literal")
	case stDot0:
		if '0' <= c && c <= '9' {
			return resContinue
		}
		if c == 'e' || c == 'E' {
			s.step = stE
			return resContinue
		}
		return s.endValue(c)
	case stE:
		if c == '+' || c == '-' {
			s.step = stESign
			return resContinue
		}
		return s.eSign(c)
	case stESign:
		return s.eSign(c)
	case stE0:
		if '0' <= c && c <= '9' {
			return resContinue
		}
		return s.endValue(c)
	case stLiteral:
		if c != s.lit[s.litAt] {
			return s.fail(c, "in literal "+s.lit+" (expecting "+quoteChar(s.lit[s.litAt])+")")
		}
		if s.litAt++; s.litAt == len(s.lit) {
			s.step = stEndValue
		}
		return resContinue
	}
	return resError
}

func (s *scanner) beginValue(c byte) int {
	if isSpace(c) {
		return resContinue
	}
	switch c {
	case '{':
		s.step = stBeginStringOrEmpty
		return s.push(c, 'k')
	case '[':
		s.step = stBeginValueOrEmpty
		return s.push(c, 'a')
	case '"':
		s.step = stInString
	case '-':
		s.step = stNeg
	case '0':
		s.step = st0
	case 't':
		s.step, s.lit, s.litAt = stLiteral, "true", 1
	case 'f':
		s.step, s.lit, s.litAt = stLiteral, "false", 1
	case 'n':
		s.step, s.lit, s.litAt = stLiteral, "null", 1
	default:
		if c < '1' || c > '9' {
			return s.fail(c, "looking for beginning of value")
		}
		s.step = st1
	}
	return resContinue
}

func (s *scanner) push(c, state byte) int {
	if s.depth++; s.depth <= len(s.low) {
		s.low[s.depth-1] = state
	} else {
		s.high = append(s.high[:s.depth-1-len(s.low)], state)
	}
	if s.depth > maxNesting {
		return s.fail(c, "exceeded max depth")
	}
	return resContinue
}

func (s *scanner) beginString(c byte) int {
	if isSpace(c) {
		return resContinue
	}
	if c == '"' {
		s.step = stInString
		return resContinue
	}
	return s.fail(c, "looking for beginning of object key string")
}

func (s *scanner) endValue(c byte) int {
	if s.depth == 0 {
		s.step = stEndTop
		return s.endTop(c)
	}
	if isSpace(c) {
		s.step = stEndValue
		return resContinue
	}
	top := s.top()
	switch *top {
	case 'k':
		if c == ':' {
			*top = 'v'
			s.step = stBeginValue
			return resContinue
		}
		return s.fail(c, "after object key")
	case 'v':
		if c == ',' {
			*top = 'k'
			s.step = stBeginString
			return resContinue
		}
		if c == '}' {
			s.pop()
			return resEndComposite
		}
		return s.fail(c, "after object key:value pair")
	}
	if c == ',' {
		s.step = stBeginValue
		return resContinue
	}
	if c == ']' {
		s.pop()
		return resEndComposite
	}
	return s.fail(c, "after array element")
}

// top is the innermost open array's or object's state.
func (s *scanner) top() *byte {
	if s.depth <= len(s.low) {
		return &s.low[s.depth-1]
	}
	return &s.high[s.depth-1-len(s.low)]
}

func (s *scanner) pop() {
	if s.depth--; s.depth == 0 {
		s.step = stEndTop
	} else {
		s.step = stEndValue
	}
}

// endTop is after the top-level value: the value has ended, whatever c
// is (encoding/json complains about a byte other than space only on a
// later call, which Decode does not make).
func (s *scanner) endTop(byte) int { return resEnd }

func (s *scanner) zero(c byte) int {
	if c == '.' {
		s.step = stDot
		return resContinue
	}
	if c == 'e' || c == 'E' {
		s.step = stE
		return resContinue
	}
	return s.endValue(c)
}

func (s *scanner) eSign(c byte) int {
	if '0' <= c && c <= '9' {
		s.step = stE0
		return resContinue
	}
	return s.fail(c, "in exponent of numeric literal")
}

//go:noinline
func (s *scanner) fail(c byte, context string) int {
	s.step = stError
	s.err = "invalid character " + quoteChar(c) + " " + context
	return resError
}

// quoteChar is encoding/json's quoting of a byte in its messages.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// builder reads a value that scanValue has found well formed, as
// encoding/json's decoding into an any with UseNumber does.
type builder struct {
	data   []byte
	inputs []Input // their names are the keys' likely strings
	strs   []any   // strings, boxed: the values' likely strings
	i      int
	depth  int
	dup    string // the top-level object's first key given twice, when twice
	twice  bool
	top    object // where the top-level object's fields go
}

func (b *builder) space() {
	for b.i < len(b.data) && isSpace(b.data[b.i]) {
		b.i++
	}
}

func (b *builder) value() any {
	switch c := b.data[b.i]; c {
	case '{':
		return b.object()
	case '[':
		b.i++
		b.depth++
		list := []any{}
		for b.space(); b.data[b.i] != ']'; b.space() {
			list = append(list, b.value())
			b.space()
			if b.data[b.i] == ',' {
				b.i++
			}
		}
		b.i++
		b.depth--
		return list
	case '"':
		if v := b.known(); v != nil {
			return v
		}
		return b.str()
	case 't':
		b.i += 4
		return true
	case 'f':
		b.i += 5
		return false
	case 'n':
		b.i += 4
		return nil
	}
	start := b.i
	small, n := true, int64(0)
	for b.i < len(b.data) && isNumberByte(b.data[b.i]) {
		c := b.data[b.i]
		small = small && '0' <= c && c <= '9' && b.i-start < 9
		n = n*10 + int64(c-'0')
		b.i++
	}
	if small && n < 256 {
		// 0 to 255 as an int64 is what the number's text reads as
		// everywhere (intOf, asDouble, goTypeName), and in an any it
		// takes no allocation.
		return n
	}
	return jsonNumber(b.data[start:b.i])
}

// object reads an object.
func (b *builder) object() object {
	b.i++
	b.depth++
	var read object
	if b.depth == 1 && b.top != nil {
		read = b.top[:0]
	} else {
		read = make(object, 0, 8) // an input's usual size, one allocation
	}
	for b.space(); b.data[b.i] != '}'; b.space() {
		k := b.key()
		b.space()
		b.i++ // :
		b.space()
		read = append(read, field{k, b.value()})
		b.space()
		if b.data[b.i] == ',' {
			b.i++
		}
	}
	b.i++
	b.depth--
	obj, twice, dup := makeObject(read)
	if dup && b.depth == 0 {
		b.dup, b.twice = twice, true
	}
	return obj
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// key reads an object's key: an input's name, when it is, without a copy.
func (b *builder) key() string {
	end := b.i + 1
	for end < len(b.data) && b.data[end] != '"' && b.data[end] != '\\' {
		end++
	}
	if b.data[end] == '"' {
		for i := range b.inputs {
			if name := b.inputs[i].Name; string(b.data[b.i+1:end]) == name {
				b.i = end + 1
				return name
			}
		}
	}
	return b.str()
}

// known reads a string literal without escapes equal to one of strs, and
// returns that value; for any other it reads nothing and returns nil.
func (b *builder) known() any {
	end := b.i + 1
	for end < len(b.data) && b.data[end] != '"' && b.data[end] != '\\' {
		end++
	}
	if end >= len(b.data) || end-b.i-1 > maxShortString || b.data[end] != '"' {
		return nil
	}
	for _, v := range b.strs {
		if s := v.(string); string(b.data[b.i+1:end]) == s {
			b.i = end + 1
			return v
		}
	}
	return nil
}

// str reads a string literal as encoding/json unquotes it: a lone or
// broken surrogate escape becomes U+FFFD.
func (b *builder) str() string {
	b.i++ // "
	start := b.i
	for b.data[b.i] != '"' && b.data[b.i] != '\\' {
		b.i++
	}
	if b.data[b.i] == '"' {
		b.i++
		return string(b.data[start : b.i-1])
	}
	out := append([]byte(nil), b.data[start:b.i]...)
	for {
		switch c := b.data[b.i]; c {
		case '"':
			b.i++
			return string(out)
		case '\\':
			esc := b.data[b.i+1]
			b.i += 2
			switch esc {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b.data[b.i:])
				b.i += 4
				if utf16.IsSurrogate(r) {
					if b.data[b.i] == '\\' && b.data[b.i+1] == 'u' {
						if pair := utf16.DecodeRune(r, hex4(b.data[b.i+2:])); pair != utf8.RuneError {
							b.i += 6
							r = pair
						}
					}
					if utf16.IsSurrogate(r) {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default: // " \ /
				out = append(out, esc)
			}
		default:
			out = append(out, c)
			b.i++
		}
	}
}

// hex4 reads the four hex digits of a \u escape, which the scanner has
// checked.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
