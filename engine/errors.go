package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Code is the stable, machine-readable kind of an [Error]. Codes are part of
// the compatibility promise: they never change meaning, and hosts in other
// languages match on them instead of on messages.
type Code string

// Codes for a rules directory that cannot be loaded.
const (
	CodeRead             Code = "read_error"           // a file could not be read
	CodeMissingFile      Code = "missing_file"         // a version lacks manifest, rules or tests
	CodeNotRegular       Code = "not_regular"          // a rule file is a pipe, device, socket or folder (or a link to one), as bundle.CodeNotRegular
	CodeYAML             Code = "yaml_syntax"          // the YAML itself does not parse
	CodeYAMLAliases      Code = "yaml_aliases"         // a file's aliases expand past MaxYAMLAliasNodes, or one is inside the value it names
	CodeYAMLDepth        Code = "yaml_depth"           // a value nests deeper than MaxYAMLDepth
	CodeSchema           Code = "schema"               // a key is unknown, missing, or of the wrong shape
	CodeDuplicate        Code = "duplicate"            // a rule id, input, table, value or case name repeats
	CodeBadType          Code = "bad_type"             // a declared type is not one the engine knows
	CodeUnknownDevice    Code = "unknown_device_type"  // a device type name is not in device_types.yaml
	CodeCELSyntax        Code = "cel_syntax"           // a CEL expression does not parse
	CodeCELType          Code = "cel_type"             // a CEL expression does not type-check
	CodeNotBool          Code = "not_bool"             // a rule condition is not a bool
	CodeWrongOutcomeType Code = "wrong_outcome_type"   // a device id, device type or message has the wrong type
	CodeBadVersion       Code = "bad_version"          // a version directory name is not v<N>[.<N>...]
	CodeBadName          Code = "bad_name"             // a rule-set directory name is outside NamePattern
	CodeOverlapping      Code = "overlapping_releases" // two versions of a rule set claim one release
	CodeNoRuleSet        Code = "no_ruleset"           // a name or version that is not loaded
	CodeImport           Code = "import"               // an import names no loadable version, or conflicts
	CodeDomainTooLarge   Code = "domain_too_large"     // Diff's domain exceeds DiffOptions.MaxInputs
	CodeLoadTooLarge     Code = "load_too_large"       // the rules compile to more than MaxLoadNodes expression nodes
	CodeDecisionCost     Code = "decision_cost"        // one decision could cost more than MaxDecisionCost
)

// Codes for an input that is not valid for a rule set.
const (
	CodeJSON         Code = "json_syntax"   // the line is not a JSON object
	CodeUnknownField Code = "unknown_field" // a field the rule set does not declare
	CodeMissingField Code = "missing_field" // a required field is absent
	CodeWrongType    Code = "wrong_type"    // a field's value is not of the declared type
	CodeTooLong      Code = "too_long"      // a line or string exceeds its limit
	CodeInvalidUTF8  Code = "invalid_utf8"  // a string is not valid UTF-8
)

// Codes for an evaluation that could not reach a decision.
const (
	CodeEval        Code = "eval_error"      // a CEL expression failed at run time
	CodeCostLimit   Code = "cost_limit"      // an expression exceeded the CEL cost limit
	CodeCanceled    Code = "canceled"        // the context ended first
	CodeNoMatch     Code = "no_rule_matched" // every condition was false
	CodeBadOutcome  Code = "bad_outcome"     // an outcome evaluated to an unusable value
	CodeTestFailure Code = "test_failure"    // a test case's decision differs from its want
)

// Input reports whether the code says an input was not valid, as opposed
// to rules that do not load or an evaluation that could not decide.
func (c Code) Input() bool {
	switch c {
	case CodeJSON, CodeUnknownField, CodeMissingField, CodeWrongType, CodeTooLong, CodeInvalidUTF8:
		return true
	}
	return false
}

// Position is a place in a rule file. Line and Column count from 1; Column
// counts bytes, as Go's go/token does (CEL's columns, which count
// characters, are converted), and the caret under it counts characters.
type Position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// String formats the position as file:line:col, leaving out what is
// unknown. A file whose name holds a character a terminal would act on
// rather than show (a control character such as ESC, a bidi override such
// as U+202E, invalid UTF-8) is quoted as Go quotes a string, so that
// printing a position cannot recolour or reorder what follows it:
// "rules/jax\x1b[31m/v1":3.
func (p Position) String() string {
	file := p.File
	if !printable(file) {
		file = strconv.Quote(file)
	}
	switch {
	case p.Line == 0:
		return file
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", file, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column)
}

// printable reports whether every character of s shows as itself: valid
// UTF-8 with no character strconv.IsPrint refuses (control and format
// characters, tabs and newlines among them).
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) })
}

// Error is every error the engine returns: a stable [Code], a message, and
// where it applies, the position in a rule file with the text of that line.
// Its JSON form is what the command line and the WebAssembly hosts print.
type Error struct {
	Code    Code      `json:"code"`
	Message string    `json:"message"`
	Pos     *Position `json:"position,omitempty"`
	// Source is the line of the file at Pos, without its newline.
	Source string `json:"source,omitempty"`
	// Hint, when set, says what usually fixes the error.
	Hint string `json:"hint,omitempty"`

	err     error // the cause, for errors.Is and errors.As
	follows bool  // a consequence of another error in the list: listed last
	knockOn bool  // an import of a version whose own errors are in the list: left out
}

// Error formats the error the way cel-go does: "file:line:col: message",
// then the source line and a caret under the column.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos != nil {
		b.WriteString(e.Pos.String())
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Pos != nil && e.Source != "" {
		b.WriteString("\n | ")
		b.WriteString(e.Source)
		if e.Pos.Column > 0 {
			b.WriteString("\n | ")
			b.WriteString(caretPad(e.Source, e.Pos.Column))
			b.WriteString("^")
		}
	}
	return b.String()
}

// caretPad returns the run of dots that puts a caret under byte column col:
// one dot for each character before it (a column counts bytes, a terminal
// characters), keeping tabs so the caret lines up.
func caretPad(line string, col int) string {
	var b strings.Builder
	for _, r := range line[:min(max(col-1, 0), len(line))] {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

// ErrorList is every error found while loading rules; Load refuses the whole
// rules directory when it is not empty. It is sorted by file and position.
// A version that imports one with errors is not listed for it: the
// imported version's own errors are, once.
type ErrorList []*Error

// Error joins the errors, one per paragraph.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap exposes each error to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Errors returns every *Error in err: the members of an ErrorList, a single
// *Error, or nil when err holds none.
func Errors(err error) []*Error {
	var list ErrorList
	if errors.As(err, &list) {
		return list
	}
	var one *Error
	if errors.As(err, &one) {
		return []*Error{one}
	}
	return nil
}
