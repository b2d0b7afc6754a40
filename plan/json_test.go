package plan

import (
	"encoding/json"
	"testing"
)

// TestErrorAppendJSON: an error's JSON is json.Marshal's, byte for byte,
// for the strings that need escaping.
func TestErrorAppendJSON(t *testing.T) {
	for _, e := range []*Error{
		{Code: CodeJSON, Message: "plain"},
		{Code: CodeWrongType, Message: `input "a<b>&c" is "\x01\n\t"`, Hint: "bad \xff utf8 \u2028 \u2029 é"},
		{Code: CodeEval, Message: "m", Pos: &Position{File: "rules/jax/v3/rules.yaml", Line: 12, Column: 9}, Source: "  when: a && b"},
		{Code: CodeEval, Message: "m", Pos: &Position{}},
	} {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON(%+v)\n got %s\nwant %s", e, got, want)
		}
	}
}

// FuzzErrorAppendJSON compares AppendJSON with json.Marshal on any
// strings.
func FuzzErrorAppendJSON(f *testing.F) {
	f.Add("a<b", "\xff\x00", "h&")
	f.Fuzz(func(t *testing.T, msg, source, hint string) {
		e := &Error{Code: CodeEval, Message: msg, Pos: &Position{File: source, Line: 1}, Source: source, Hint: hint}
		want, _ := json.Marshal(e)
		if got := e.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON(%q, %q, %q)\n got %s\nwant %s", msg, source, hint, got, want)
		}
	})
}
