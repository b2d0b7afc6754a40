package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
)

// codeOf is the code of an error object, or of an answer line's error.
func codeOf(t *testing.T, out []byte) engine.Code {
	t.Helper()
	var e struct {
		Code       engine.Code
		InputError *struct{ Code engine.Code } `json:"input_error"`
		EvalError  *struct{ Code engine.Code } `json:"eval_error"`
	}
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	switch {
	case e.InputError != nil:
		return e.InputError.Code
	case e.EvalError != nil:
		return e.EvalError.Code
	}
	return e.Code
}

// TestInputsOverTheLimit: an input one byte over MaxInputLen is refused
// by every entry as too_long, with the line `dlroute resolve --json`
// writes where the entry answers lines, and what TooLong says for its
// form (what libdlroute's exports answer for a length over the limit).
func TestInputsOverTheLimit(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	jax, exchange := takeRuleSet(t, h, "jax"), takeRuleSet(t, h, "exchange")
	long := bytes.Repeat([]byte(" "), MaxInputLen+1)
	ctx := context.Background()
	line := contract.Line(1, nil, contract.TooLong()) // what resolve --json writes
	tests := []struct {
		name string
		call func() ([]byte, Status)
		form Form
		want Status
	}{
		{"ResolveJSON", func() ([]byte, Status) { return ResolveJSON(ctx, jax, long) }, FormLine, StatusInputError},
		{"ExplainJSON", func() ([]byte, Status) { return ExplainJSON(ctx, jax, long) }, FormLine, StatusInputError},
		{"ExchangeJSON", func() ([]byte, Status) { out, _, st := ExchangeJSON(ctx, exchange, long); return out, st }, FormLine, StatusInputError},
		{"Resolve", func() ([]byte, Status) { return Resolve(ctx, jax, long) }, FormBinary, StatusInputError},
		{"InteropJSON", func() ([]byte, Status) { return InteropJSON(ctx, h, long) }, FormRequest, StatusInputError},
		{"InteropMatrixJSON", func() ([]byte, Status) { return InteropMatrixJSON(ctx, h, long) }, FormRequest, StatusInputError},
		{"Open path", func() ([]byte, Status) { _, out, st := Open(string(long), ""); return out, st }, FormArgument, StatusBadArgument},
		{"Open key", func() ([]byte, Status) { _, out, st := Open("", string(long)); return out, st }, FormArgument, StatusBadArgument},
		{"RuleSet", func() ([]byte, Status) { _, out, st := RuleSet(h, string(long)); return out, st }, FormArgument, StatusBadArgument},
	}
	for _, tt := range tests {
		out, st := tt.call()
		if st != tt.want || codeOf(t, out) != engine.CodeTooLong {
			t.Errorf("%s of %d bytes = %s %s; want %s, code too_long", tt.name, len(long), st, out, tt.want)
		}
		if want, wantSt := TooLong(tt.form); !bytes.Equal(out, want) || st != wantSt {
			t.Errorf("%s of %d bytes = %s %s; TooLong says %s %s", tt.name, len(long), st, out, wantSt, want)
		}
		if tt.form == FormLine && !bytes.Equal(out, line) {
			t.Errorf("%s of %d bytes = %s; dlroute resolve --json writes %s", tt.name, len(long), out, line)
		}
	}
	if _, st := ResolveJSON(ctx, jax, long[:MaxInputLen]); st != StatusInputError {
		t.Errorf("ResolveJSON of MaxInputLen spaces = %s; want the input_error of an empty line", st)
	}
}

// TestOpenLimit: rules opened and never closed stop at MaxOpenRules with
// too_many_open, before anything is loaded; a close frees a place, and a
// failed open takes none.
func TestOpenLimit(t *testing.T) {
	var handles []uint64
	t.Cleanup(func() {
		for _, h := range handles {
			Close(h)
		}
	})
	for range MaxOpenRules + 1 {
		h, out, st := Open("", "")
		if st == StatusTooManyOpen {
			if code := codeOf(t, out); code != CodeTooManyOpen || !strings.Contains(string(out), `"hint"`) {
				t.Errorf("Open past the limit = %s; want code too_many_open with a hint", out)
			}
			break
		}
		if st != StatusOK {
			t.Fatalf("Open: %s %s", st, out)
		}
		handles = append(handles, h)
	}
	if n := openCount.Load(); n != MaxOpenRules || len(handles) == MaxOpenRules+1 {
		t.Fatalf("%d opens succeeded, %d rules open; want the last refused at %d", len(handles), n, MaxOpenRules)
	}
	if _, _, st := Open("/nonexistent/rules", ""); st != StatusTooManyOpen {
		t.Errorf("Open of a missing directory at the limit = %s; want too_many_open before it is read", st)
	}
	Close(handles[0])
	handles = handles[1:]
	if _, _, st := Open("/nonexistent/rules", ""); st != StatusLoadError {
		t.Errorf("Open of a missing directory below the limit = %s; want load_error", st)
	}
	h, out, st := Open("", "")
	if st != StatusOK {
		t.Fatalf("Open after a Close at the limit = %s %s; want ok (a failed open takes no place)", st, out)
	}
	handles = append(handles, h)
}

// TestDeadline: each entry that evaluates does so under Deadline, and
// answers canceled past it.
func TestDeadline(t *testing.T) {
	h := openRulesT(t, "")
	jax, exchange := takeRuleSet(t, h, "jax"), takeRuleSet(t, h, "exchange")
	ctx := context.Background()
	cell := `{"producer":"jax","consumer":"torch","array":{"platform":"gpu","platform_version":"<unknown>"}}`
	InteropJSON(ctx, h, []byte(cell)) // compiles torch outside the deadline below
	defer func(d time.Duration) { Deadline = d }(Deadline)
	Deadline = time.Nanosecond
	fresh := `{"platform":"gpu","platform_version":"cuda 99999","local_hardware_id":0}` // in no memo
	var binary []byte
	r, _ := ruleSetOf(jax)
	for _, d := range r.decls {
		v, ok := map[string]any{"platform": "gpu", "platform_version": "cuda 99999", "local_hardware_id": 0}[d.Name]
		binary, _ = contract.AppendField(binary, v, ok)
	}
	tests := map[string]func() ([]byte, Status){
		"ResolveJSON": func() ([]byte, Status) { return ResolveJSON(ctx, jax, []byte(fresh)) },
		"ExplainJSON": func() ([]byte, Status) { return ExplainJSON(ctx, jax, []byte(fresh)) },
		"ExchangeJSON": func() ([]byte, Status) {
			out, _, st := ExchangeJSON(ctx, exchange, []byte(fresh))
			return out, st
		},
		"Resolve":     func() ([]byte, Status) { return Resolve(ctx, jax, binary) },
		"InteropJSON": func() ([]byte, Status) { return InteropJSON(ctx, h, []byte(cell)) },
	}
	for name, call := range tests {
		out, st := call()
		if st != StatusEvalError || codeOf(t, out) != engine.CodeCanceled {
			t.Errorf("%s past its deadline = %s %s; want eval_error, code canceled", name, st, out)
		}
	}
}

// TestReleaseOverTheLimit: a ref whose release is past
// engine.MaxReleaseLen, though far under MaxInputLen, is refused as the
// argument it is (StatusBadArgument, too_long), not as rules that do not
// load: Python raises ValueError for it, not LoadError.
func TestReleaseOverTheLimit(t *testing.T) {
	h := openRulesT(t, "")
	ref := "jax==" + strings.Repeat("1", engine.MaxReleaseLen+1)
	_, out, st := RuleSet(h, ref)
	if st != StatusBadArgument || codeOf(t, out) != engine.CodeTooLong {
		t.Errorf("RuleSet(%d-byte release) = %s %s; want %s, code too_long", engine.MaxReleaseLen+1, st, out, StatusBadArgument)
	}
	if _, out, st := RuleSet(h, "jax=="+strings.Repeat("1", engine.MaxReleaseLen)); st == StatusBadArgument {
		t.Errorf("RuleSet(%d-byte release) = %s %s; a release at the limit is no bad argument", engine.MaxReleaseLen, st, out)
	}
}
