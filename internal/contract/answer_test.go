package contract

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func ruleSet(t *testing.T, ref string) *engine.RuleSet {
	t.Helper()
	cat, err := engine.Load(rules.FS, engine.Options{Select: []string{ref}, SkipTests: true, TrustParsed: true})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestAnswer: a decision, an input error and an evaluation error, each
// as `dlroute resolve --json` writes it, with its status.
func TestAnswer(t *testing.T) {
	a := NativeAnswerer(ruleSet(t, "jax"), 0)
	for _, c := range []struct {
		line, prefix string
		status       Status
	}{
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`, `{"device_type":"kDLCUDA"`, StatusOK},
		{`{"platform":"gpu","shoe_size":9}`, `{"input_error":{"line":1,"code":"unknown_field"`, StatusInputError},
		{`[1]`, `{"input_error":{"line":1,"code":"json_syntax"`, StatusInputError},
		{strings.Repeat(" ", MaxLineLen+1), `{"input_error":{"line":1,"code":"too_long","message":"line is longer than 4194304 bytes"}}`, StatusInputError},
	} {
		out, status := a.Answer(context.Background(), []byte(c.line))
		if status != c.status || !bytes.HasPrefix(out, []byte(c.prefix)) {
			t.Errorf("Answer(%.80s) = %s %s, want %s %s...", c.line, status, out, c.status, c.prefix)
		}
	}
}

// TestLineOfEvaluationError: an error that is not the input's is an
// eval_error line, with the rule file's position; several errors are
// never one input's fault; an error that is not an *engine.Error is an
// eval_error with its text.
func TestLineOfEvaluationError(t *testing.T) {
	pos := &engine.Position{File: "rules.yaml", Line: 3, Column: 9}
	for _, c := range []struct {
		err    error
		want   string
		status Status
	}{
		{&engine.Error{Code: engine.CodeCanceled, Message: "late", Pos: pos}, `{"eval_error":{"line":7,"code":"canceled","message":"late","position":{"file":"rules.yaml","line":3,"column":9}}}`, StatusEvalError},
		{engine.ErrorList{{Code: engine.CodeWrongType, Message: "a"}, {Code: engine.CodeWrongType, Message: "b"}}, `{"eval_error":{"line":7,"code":"wrong_type","message":"a"}}`, StatusEvalError},
		{errors.New("<broken>"), `{"eval_error":{"line":7,"code":"eval_error","message":"<broken>"}}`, StatusEvalError},
		{&engine.Error{Code: engine.CodeMissingField, Message: "input platform is missing"}, `{"input_error":{"line":7,"code":"missing_field","message":"input platform is missing"}}`, StatusInputError},
	} {
		if got := Line(7, nil, c.err); string(got) != c.want || Classify(c.err) != c.status {
			t.Errorf("Line(7, %v) = %s (%s), want %s (%s)", c.err, got, Classify(c.err), c.want, c.status)
		}
	}
}

// TestMemo: a decision is remembered by the line's bytes, so the rule
// set is not asked again; an error, and an answer that is not pure, are
// not remembered.
func TestMemo(t *testing.T) {
	calls := 0
	pure := true
	a := NewAnswerer(func(_ context.Context, line []byte) ([]byte, bool, error) {
		calls++
		if bytes.Equal(line, []byte("bad")) {
			return nil, true, &engine.Error{Code: engine.CodeJSON, Message: "not JSON"}
		}
		return append([]byte("decided "), line...), pure, nil
	}, 0)
	ctx := context.Background()
	for range 3 {
		a.Decide(ctx, []byte("x"))
		a.Decide(ctx, []byte("bad"))
	}
	if calls != 4 {
		t.Errorf("3 calls each of a decision and an error asked %d times, want 4 (1 decision, 3 errors)", calls)
	}
	pure, calls = false, 0
	for range 2 {
		a.Decide(ctx, []byte("machine"))
	}
	if calls != 2 {
		t.Errorf("an answer that is not pure was asked %d times in 2 calls, want 2", calls)
	}
	calls = 0
	off := NewAnswerer(func(context.Context, []byte) ([]byte, bool, error) { calls++; return []byte("d"), true, nil }, -1)
	off.Decide(ctx, []byte("x"))
	off.Decide(ctx, []byte("x"))
	if calls != 2 {
		t.Errorf("with no memo, 2 calls asked %d times", calls)
	}
}

// TestExchange: the step of each kind of exchange decision, and a copy
// onto a device, which no host makes, as host_error with a no_copier
// error object, as the WebAssembly module answers it: the rules decided,
// so it is not an eval_error.
func TestExchange(t *testing.T) {
	rs := ruleSet(t, "exchange")
	for _, c := range []struct {
		line   string
		step   Step
		status Status
		prefix string
	}{
		{`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`, StepCopyToHost, StatusOK, `{"device_type":"kDLCPU"`},
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`, StepInPlace, StatusOK, `{"device_type":"kDLCUDA"`},
		{`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"copy":false}`, StepRaise, StatusOK, `{"error":`},
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0,"copy":true}`, StepRaise, StatusHostError, `{"code":"no_copier","message":"rule `},
		{`{"platform":"gpu"}`, StepRaise, StatusInputError, `{"input_error":{"line":1,"code":"missing_field"`},
	} {
		out, step, status := Exchange(context.Background(), rs, []byte(c.line))
		if step != c.step || status != c.status || !bytes.HasPrefix(out, []byte(c.prefix)) {
			t.Errorf("Exchange(%s) = %s %s %s, want %s %s %s...", c.line, step, status, out, c.step, c.status, c.prefix)
		}
	}
}
