package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// sourceFile is one rule file as read: its display name, its bytes, and the
// offsets of its lines, so that any node or expression maps back to a
// Position and the text of its line.
type sourceFile struct {
	name string
	text string

	// lines are the offsets of the lines, found when first asked for
	// (starts): a file no position is asked of is not scanned, as the
	// ParsedFile a host sends with every edit is not.
	lines      sync.Once
	lineStarts []int

	// aliasNodes counts the nodes that aliases have added to the file's
	// values so far, against MaxYAMLAliasNodes; aliasSpent is set once
	// the budget is refused, so that the file reports it once.
	aliasNodes int
	aliasSpent bool
}

func newSourceFile(name string, data []byte) *sourceFile {
	return &sourceFile{name: name, text: string(data)}
}

// starts returns the offset of each line's start. It reads lines as YAML
// does: a line ends at "\n", "\r\n" or a "\r" alone, so that a node's
// line is the file's.
func (f *sourceFile) starts() []int {
	f.lines.Do(func() {
		f.lineStarts = []int{0}
		for i := 0; i < len(f.text); i++ {
			if c := f.text[i]; c == '\n' || c == '\r' && (i+1 == len(f.text) || f.text[i+1] != '\n') {
				f.lineStarts = append(f.lineStarts, i+1)
			}
		}
	})
	return f.lineStarts
}

// line returns the text of 1-based line n without its line ending.
func (f *sourceFile) line(n int) string {
	starts := f.starts()
	if n < 1 || n > len(starts) {
		return ""
	}
	end := len(f.text)
	if n < len(starts) {
		end = starts[n] - 1
	}
	return strings.TrimRight(f.text[starts[n-1]:end], "\r")
}

// offset converts a 1-based line and column to a byte offset, clamped to the file.
func (f *sourceFile) offset(line, col int) int {
	if line < 1 {
		return 0
	}
	starts := f.starts()
	if line > len(starts) {
		return len(f.text)
	}
	return min(starts[line-1]+max(col-1, 0), len(f.text))
}

// position converts a byte offset to a Position.
func (f *sourceFile) position(off int) Position {
	starts := f.starts()
	line := 1
	for line < len(starts) && starts[line] <= off {
		line++
	}
	return Position{File: f.name, Line: line, Column: off - starts[line-1] + 1}
}

// errAt builds an Error at a line and column of the file.
func (f *sourceFile) errAt(code Code, line, col int, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if line > len(f.starts()) {
		// go-yaml puts the empty value of "---" at the end of the file on
		// the line after it; the position stays inside the file.
		p := f.position(len(f.text))
		line, col = p.Line, p.Column
	}
	if line > 0 {
		e.Pos = &Position{File: f.name, Line: line, Column: col}
		e.Source = f.line(line)
	} else {
		e.Pos = &Position{File: f.name}
	}
	return e
}

// errNode builds an Error at a YAML node (nil: the whole file).
func (f *sourceFile) errNode(code Code, n *yaml.Node, format string, args ...any) *Error {
	if n == nil {
		return f.errAt(code, 0, 0, format, args...)
	}
	return f.errAt(code, n.Line, n.Column, format, args...)
}

// parseYAML parses a file into its root node. An empty file is a mapping with
// no keys, so that missing keys are reported by name.
func (f *sourceFile) parseYAML() (*yaml.Node, *Error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(f.text), &doc); err != nil {
		return nil, f.syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 1, Column: 1}, nil
	}
	return doc.Content[0], nil
}

// MaxYAMLAliasNodes is how many nodes aliases may add to the values of
// one rule file (case inputs, input defaults, table cells), counting a
// node each time an alias repeats it. An alias repeats its anchor's whole
// value, so seven levels of ten aliases each turn a few hundred bytes into
// ten million values; a file whose aliases add more is refused with
// CodeYAMLAliases at the alias that crossed the budget. What a file holds
// without aliases is bounded by MaxRuleFileSize already.
const MaxYAMLAliasNodes = 100_000

// MaxYAMLDepth is how deeply a value in a rule file may nest, counting
// through aliases; a deeper one is refused with CodeYAMLDepth. go-yaml
// itself refuses text nested deeper than 10,000 levels; no input type
// nests more than a few.
const MaxYAMLDepth = 100

// yamlValue converts a YAML node to the Go values inputs take: string,
// int64, float64, bool, nil, []any and map[string]any. It follows aliases
// within MaxYAMLAliasNodes and MaxYAMLDepth, and refuses an alias inside
// the value it names, which would never end; a refused part is nil.
func yamlValue(f *sourceFile, errs *ErrorList, n *yaml.Node) any {
	w := valueWalk{f: f, errs: errs}
	return w.value(n)
}

// valueWalk is one yamlValue conversion.
type valueWalk struct {
	f    *sourceFile
	errs *ErrorList
	path []*yaml.Node // the lists and mappings being converted, outermost first
	via  *yaml.Node   // the outermost alias being expanded, where errors point
}

func (w *valueWalk) value(n *yaml.Node) any {
	if w.via != nil {
		if w.f.aliasSpent {
			return nil
		}
		if w.f.aliasNodes++; w.f.aliasNodes > MaxYAMLAliasNodes {
			w.f.aliasSpent = true
			e := w.f.errNode(CodeYAMLAliases, w.via, "alias *%s takes the aliases of this file past %d values (MaxYAMLAliasNodes)", w.via.Value, MaxYAMLAliasNodes)
			e.Hint = "each use of an alias repeats its anchor's whole value; write the values out, or alias less"
			*w.errs = append(*w.errs, e)
			return nil
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		if slices.Contains(w.path, n.Alias) {
			e := w.f.errNode(CodeYAMLAliases, n, "alias *%s is inside the value it names, which would never end", n.Value)
			*w.errs = append(*w.errs, e)
			return nil
		}
		if w.via == nil {
			w.via = n
			defer func() { w.via = nil }()
		}
		return w.value(n.Alias)
	case yaml.SequenceNode, yaml.MappingNode:
		if len(w.path) == MaxYAMLDepth {
			at := n
			if w.via != nil {
				at = w.via
			}
			*w.errs = append(*w.errs, w.f.errNode(CodeYAMLDepth, at, "a value nests deeper than %d levels (MaxYAMLDepth)", MaxYAMLDepth))
			return nil
		}
		w.path = append(w.path, n)
		defer func() { w.path = w.path[:len(w.path)-1] }()
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			out[i] = w.value(item)
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for _, fl := range w.f.mapping(w.errs, n, "a value", nil) {
			out[fl.key.Value] = w.value(fl.value)
		}
		return out
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err == nil {
			if i, ok := v.(int); ok {
				return int64(i)
			}
			return v
		}
	}
	return n.Value
}

// field is one key of a YAML mapping with its value.
type field struct {
	key   *yaml.Node
	value *yaml.Node
}

// mapping returns the keys of a mapping in file order, reporting a node that
// is not a mapping, a duplicate key, and (when allowed is not nil) an unknown
// key. what names the mapping in messages.
func (f *sourceFile) mapping(errs *ErrorList, n *yaml.Node, what string, allowed []string) []field {
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, f.errNode(CodeSchema, n, "%s must be a mapping, not %s", what, kindName(n)))
		return nil
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			*errs = append(*errs, f.errNode(CodeSchema, k, "a key in %s must be a plain name", what))
			continue
		case seen[k.Value]:
			*errs = append(*errs, f.errNode(CodeDuplicate, k, "%s has %q twice", what, k.Value))
			continue
		case allowed != nil && !contains(allowed, k.Value):
			e := f.errNode(CodeSchema, k, "unknown key %q in %s", k.Value, what)
			e.Hint = "the keys here are: " + strings.Join(allowed, ", ")
			*errs = append(*errs, e)
			continue
		}
		seen[k.Value] = true
		out = append(out, field{k, v})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lookup returns the value of key in fields, or nil.
func lookup(fields []field, key string) *yaml.Node {
	for _, fl := range fields {
		if fl.key.Value == key {
			return fl.value
		}
	}
	return nil
}

// scalar returns the text of a scalar node, reporting any other kind.
func (f *sourceFile) scalar(errs *ErrorList, n *yaml.Node, what string) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		*errs = append(*errs, f.errNode(CodeSchema, n, "%s must be a single value, not %s", what, kindName(n)))
		return "", false
	}
	return n.Value, true
}

// required returns the value of key, reporting it at parent when missing.
func (f *sourceFile) required(errs *ErrorList, fields []field, parent *yaml.Node, key, what string) *yaml.Node {
	v := lookup(fields, key)
	if v == nil {
		*errs = append(*errs, f.errNode(CodeSchema, parent, "%s needs %q", what, key))
	}
	return v
}

func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "null"
	}
	return fmt.Sprintf("%q", n.Value)
}

// isIdent reports whether s is a CEL identifier, as names of inputs, values,
// tables and device types must be.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// expression is a CEL expression as written in a rule file.
type expression struct {
	file *sourceFile
	node *yaml.Node
	text string
}

// position maps a CEL location (1-based line, 0-based column in code points
// of the expression text) back into the file. YAML quoting, escapes and
// block scalars mean the expression is not always a verbatim slice of the
// file, so the expression's characters are matched in order against the
// file's from the node onward; characters of the file that do not match
// (quotes, backslashes, indentation, folded line breaks) are skipped.
func (e expression) position(line, col int) Position {
	target := 0
	for l := 1; l < line; l++ {
		nl := strings.IndexByte(e.text[target:], '\n')
		if nl < 0 {
			break
		}
		target += nl + 1
	}
	for c := 0; c < col && target < len(e.text); c++ {
		_, size := utf8.DecodeRuneInString(e.text[target:])
		target += size
	}
	start := e.file.offset(e.node.Line, e.node.Column)
	if e.node.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		if nl := strings.IndexByte(e.file.text[start:], '\n'); nl >= 0 {
			start += nl + 1
		}
	}
	raw := e.file.text
	r := start
	for i := 0; i <= target && i < len(e.text); i++ {
		for r < len(raw) && raw[r] != e.text[i] {
			r++
		}
		if r == len(raw) {
			return e.file.position(start)
		}
		if i < target {
			r++
		}
	}
	return e.file.position(r)
}

// errAt builds an Error at a CEL location inside the expression.
func (e expression) errAt(code Code, line, col int, format string, args ...any) *Error {
	p := e.position(line, col)
	return e.file.errAt(code, p.Line, p.Column, format, args...)
}
