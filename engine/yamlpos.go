package engine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// go-yaml reports a syntax error only as text, "yaml: line N: message",
// where N is sometimes the line of the offending character and sometimes
// the 0-based line of the construct it was parsing (an unclosed { on line
// 37 reads "line 36"; a bad indent on line 33, "line 25"), and never a
// column. So the line is found by parsing: the first line whose text,
// added to the lines before it, no longer parses, is where the mistake
// is. The column is then found on that line by what the message says
// went wrong (engine/RATIONALE.md, "Why are YAML syntax errors located by
// parsing prefixes of the file?").

// yamlLine finds the line in a go-yaml error. The library reports syntax
// errors only as text ("yaml: line 3: ..."), so this is the one place where
// an error's text is read.
var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// syntaxError turns go-yaml's error for the whole of f into an Error at the
// line and column of the mistake.
func (f *sourceFile) syntaxError(err error) *Error {
	reported, msg := 0, err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	line := f.brokenLine(reported)
	col, what, hint := f.describeSyntax(line, msg)
	e := f.errAt(CodeYAML, line, col, "%s", what)
	e.Hint = hint
	e.err = err
	return e
}

// parsesThrough reports whether lines 1 to k of f parse as YAML.
func (f *sourceFile) parsesThrough(k int) bool {
	if k <= 0 {
		return true
	}
	end := len(f.text)
	if starts := f.starts(); k < len(starts) {
		end = starts[k]
	}
	var doc yaml.Node
	return yaml.Unmarshal([]byte(f.text[:end]), &doc) == nil
}

// brokenLine returns the first line through which f stops parsing,
// searching forward from the line before go-yaml's (which is never after
// the mistake) in steps that double, then by bisection. A prefix that ends
// inside a quoted value or a flow collection spread over lines does not
// parse either, so a mistake inside such a value is reported where the
// value starts. It parses a prefix about 2*log2(distance) times, on
// errors only: a few milliseconds for a rule file of a few hundred lines.
func (f *sourceFile) brokenLine(reported int) int {
	lo, hi := 0, len(f.starts())
	if reported > 1 && reported-1 < hi && f.parsesThrough(reported-1) {
		lo = reported - 1
	}
	for step := 1; lo+step < hi; step *= 2 {
		if !f.parsesThrough(lo + step) {
			hi = lo + step
			break
		}
		lo += step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if f.parsesThrough(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// describeSyntax finds the column of go-yaml's error msg on line n, and
// says what is wrong there and what usually fixes it.
func (f *sourceFile) describeSyntax(n int, msg string) (col int, what, hint string) {
	if n < 1 || n > len(f.starts()) {
		return 0, msg, ""
	}
	text := f.line(n)
	indent := len(text) - len(strings.TrimLeft(text, " "))
	first := indent + 1 // the first character that is not a space
	if tab := strings.IndexByte(text[:len(text)-len(strings.TrimLeft(text, " \t"))], '\t'); tab >= 0 {
		return tab + 1, "a tab in the indentation (" + msg + ")", "YAML indents with spaces only; replace the tab with spaces"
	}
	if m := flowMark(f.text, f.starts()[n-1]); m.kind != 0 {
		p := f.position(m.off)
		if p.Line == n {
			switch m.kind {
			case '{', '[':
				return p.Column, fmt.Sprintf("this %c is never closed (%s)", m.kind, msg),
					fmt.Sprintf("close it with %c, or quote the value if the %c is part of its text", closer(m.kind), m.kind)
			case '}', ']':
				return p.Column, fmt.Sprintf("this %c closes nothing (%s)", m.kind, msg), "remove it, or quote the value if it is part of its text"
			case '"', '\'':
				return p.Column, fmt.Sprintf("this %c is never closed (%s)", m.kind, msg),
					fmt.Sprintf("end the quoted text with %c; inside it, write %s for a %c", m.kind, quoteEscape(m.kind), m.kind)
			}
		}
	}
	switch {
	case strings.HasPrefix(msg, "unknown anchor '"):
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		if i := strings.Index(text, "*"+name); i >= 0 {
			return i + 1, msg, fmt.Sprintf("an alias *%s needs an anchor &%s earlier in the file", name, name)
		}
	case strings.Contains(msg, "cannot start any token"):
		if i := strings.IndexAny(text[indent:], "@`"); i >= 0 {
			return first + i, fmt.Sprintf("%q cannot start a plain value (%s)", text[indent+i], msg), "quote the value"
		}
	case strings.HasPrefix(msg, "mapping values are not allowed"):
		colons := mappingColons(text)
		if len(colons) >= 2 {
			return colons[1] + 1, "a second ':' in a value (" + msg + ")", `quote the value if the ':' is part of it, as in key: "a: b"`
		}
		if above := f.indentAbove(n); indent > above {
			return first, fmt.Sprintf("this line is indented %d spaces, deeper than the %d of the line above, which has a value already (%s)", indent, above, msg),
				"line it up with the keys above it, or nest it under a key that has no value on its own line"
		}
	case strings.HasPrefix(msg, "did not find expected key"), strings.HasPrefix(msg, "did not find expected '-' indicator"),
		strings.HasPrefix(msg, "block sequence entries are not allowed"):
		return first, fmt.Sprintf("this line is indented %d spaces, which lines up with no key or list above it (%s)", indent, msg),
			"the keys of one mapping, and the items of one list, start in the same column"
	}
	return first, msg, ""
}

// indentAbove returns the indentation of the last line before n that holds
// more than spaces and a comment, or -1 when there is none.
func (f *sourceFile) indentAbove(n int) int {
	for l := n - 1; l >= 1; l-- {
		t := strings.TrimLeft(f.line(l), " ")
		if t != "" && !strings.HasPrefix(t, "#") {
			return len(f.line(l)) - len(t)
		}
	}
	return -1
}

func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

func quoteEscape(q byte) string {
	if q == '\'' {
		return "''"
	}
	return `\"`
}

// mark is a character of a YAML text that go-yaml stopped at: an opening
// bracket or quote that is never closed, or a closing bracket with nothing
// to close. kind is 0 when there is none.
type mark struct {
	kind byte
	off  int
}

// flowMark scans text from offset start, outside quoted values and
// comments, for the flow bracket or quote that the line at start leaves
// open: the innermost bracket still open when a later line comes back to
// the line's indentation or the text ends, or when a closing bracket of
// the other kind comes first; a quote still open at the end of the text;
// or a closing bracket with nothing open. It stops when the brackets the
// line opened are all closed and the line ends.
func flowMark(text string, start int) mark {
	lineIndent := func(at int) int {
		i := at
		for i < len(text) && text[i] == ' ' {
			i++
		}
		return i - at
	}
	base := lineIndent(start)
	var stack []int // offsets of open brackets
	var quote byte  // the quote of the value being scanned, or 0
	quoteAt := 0
	var last byte // the last character on this line outside quotes that is not a space
	for i := start; i < len(text); i++ {
		c := text[i]
		if quote != 0 {
			switch {
			case c == '\\' && quote == '"':
				i++
			case c == quote && quote == '\'' && i+1 < len(text) && text[i+1] == '\'':
				i++
			case c == quote:
				quote, last = 0, c
			}
			continue
		}
		switch c {
		case '\n', '\r':
			if len(stack) == 0 {
				return mark{}
			}
			// The flow goes on: find the next line with content.
			next := i + 1
			for next < len(text) {
				ind := lineIndent(next)
				rest := text[next+ind:]
				if rest == "" || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '#' {
					if nl := strings.IndexAny(rest, "\r\n"); nl >= 0 {
						next += ind + nl + 1
						continue
					}
					next = len(text)
					break
				}
				if ind <= base {
					return mark{text[stack[len(stack)-1]], stack[len(stack)-1]}
				}
				break
			}
			i, last = next-1, 0
		case '#':
			if i == start || text[i-1] == ' ' || text[i-1] == '\t' || text[i-1] == '\n' || text[i-1] == '\r' {
				for i+1 < len(text) && text[i+1] != '\n' && text[i+1] != '\r' {
					i++
				}
				continue
			}
			last = c
		case '"', '\'':
			if strings.IndexByte("{[,:-?", last) >= 0 || last == 0 {
				quote, quoteAt = c, i
				continue
			}
			last = c
		case '{', '[':
			stack = append(stack, i)
			last = c
		case '}', ']':
			if len(stack) == 0 {
				return mark{c, i}
			}
			top := stack[len(stack)-1]
			if closer(text[top]) != c {
				return mark{text[top], top}
			}
			stack = stack[:len(stack)-1]
			last = c
		case ' ', '\t':
		default:
			last = c
		}
	}
	switch {
	case quote != 0:
		return mark{quote, quoteAt}
	case len(stack) > 0:
		return mark{text[stack[len(stack)-1]], stack[len(stack)-1]}
	}
	return mark{}
}

// mappingColons returns the byte offsets in a line of its mapping
// indicators: a ':' followed by a space, a tab or the end of the line,
// outside quotes, flow brackets and a comment.
func mappingColons(line string) []int {
	var out []int
	var quote byte
	depth := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		if quote != 0 {
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			if i == 0 || strings.IndexByte(" \t{[,:-", line[i-1]) >= 0 {
				quote = c
			}
		case '#':
			if i == 0 || line[i-1] == ' ' || line[i-1] == '\t' {
				return out
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ':':
			if depth == 0 && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
				out = append(out, i)
			}
		}
	}
	return out
}
