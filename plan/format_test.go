package plan

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// TestSprintf: the messages' verbs format as fmt's do.
func TestSprintf(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
	}{
		{"input %s is %d bytes long; the limit is %d", []any{"platform", 5000, int64(4096)}},
		{"unknown input %q", []any{"a\"b\x01é\xff"}},
		{"%s %d out of range", []any{"slot", uint64(1 << 63)}},
		{"node %d: operation %d with %d arguments", []any{3, OpCall, 2}},
		{"unknown type kind %d", []any{Kind(9)}},
		{"unknown value tag %d", []any{byte(200)}},
		{"import %s: %v", []any{"x", errors.New("boom")}},
		{"100%% sure, %d", []any{-7}},
	} {
		if got, want := sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...); got != want {
			t.Errorf("sprintf(%q, %v) = %q, want %q", c.format, c.args, got, want)
		}
	}
}

// FuzzAppendQuote holds appendQuote to strconv.Quote:
//
//	go test ./plan -run '^$' -fuzz FuzzAppendQuote -fuzztime 30s
func FuzzAppendQuote(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\a\b\f\n\r\t\v\x00\x1f\x7f", "é\u00a0\u200b\u2028\ufeff\U0001F600\U000E0001\U0010FFFF",
		"\xff\xc3", "\ufffd", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := quote(s), strconv.Quote(s); got != want {
			t.Errorf("quote(%q) = %s; want %s", s, got, want)
		}
	})
}
