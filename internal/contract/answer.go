package contract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/memo"
)

// The JSON-line contract every host answers with: `dlroute resolve
// --json`, serve, the C library, the WebAssembly guest and the wazero
// host's RuleSet. Answerer owns the line limit, the memo of answers by the
// input's bytes, whether an error is the input's fault (input_error) or
// the rules' (eval_error), and the error line `dlroute resolve --json`
// writes, so that every host gives the same bytes and the same status for
// the same line.

// MaxLineLen is the longest JSON input line a host reads. It is well above
// the input's string limits, so a long field gets the field's own error.
const MaxLineLen = 4 << 20

// TooLong is the error of a line longer than MaxLineLen.
func TooLong() *engine.Error {
	return &engine.Error{Code: engine.CodeTooLong, Message: fmt.Sprintf("line is longer than %d bytes", MaxLineLen)}
}

// Classify is the status of an error that stopped a decision:
// input_error when it is one error whose code is the input's fault
// (engine.Code.Input), else eval_error: several errors are never one
// input's fault.
func Classify(err error) Status {
	if list := engine.Errors(err); len(list) == 1 && list[0].Code.Input() {
		return StatusInputError
	}
	return StatusEvalError
}

// lineError is what `dlroute resolve --json` writes, under "input_error"
// or "eval_error", for input line Line that it could not decide. Position
// is set for an evaluation error, which is in a rule file.
type lineError struct {
	Line     int              `json:"line"`
	Code     engine.Code      `json:"code"`
	Message  string           `json:"message"`
	Position *engine.Position `json:"position,omitempty"`
	Hint     string           `json:"hint,omitempty"`
}

// Line is the line, without its newline, that `dlroute resolve --json`
// writes for input line n (1-based) given what deciding it returned: out
// itself, or {"input_error":{...}} or {"eval_error":{...}} for err.
func Line(n int, out []byte, err error) []byte {
	if err == nil {
		return out
	}
	kind := "eval_error"
	if Classify(err) == StatusInputError {
		kind = "input_error"
	}
	le := lineError{Line: n, Code: engine.CodeEval, Message: err.Error()}
	var e *engine.Error
	if errors.As(err, &e) {
		le = lineError{n, e.Code, e.Message, e.Pos, e.Hint}
	}
	// A lineError of strings and ints always marshals: encoding/json
	// replaces invalid UTF-8 rather than fail.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]lineError{kind: le})
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// Of is line 1's answer and status given what deciding it returned: out
// with StatusOK, or the error line with Classify's status.
func AnswerOf(out []byte, err error) ([]byte, Status) {
	if err != nil {
		return Line(1, nil, err), Classify(err)
	}
	return out, StatusOK
}

// Decide is how a host decides one JSON line: the decision's JSON, or an
// error. pure says the answer depends on the line's bytes alone (not on
// the machine a host asked), so that it may be remembered.
type Decide func(ctx context.Context, line []byte) (out []byte, pure bool, err error)

// Answerer answers the JSON lines of one rule set, remembering decisions
// (never errors) by the line's bytes: a process sees few distinct
// devices, so most lines repeat byte for byte, and a remembered answer
// skips the decoding, which is most of a decision's cost. It is safe for
// concurrent use when its Decide is.
type Answerer struct {
	decide Decide
	lines  *memo.Memo[[]byte]
}

// New returns an Answerer that decides with decide and remembers about
// size answers (0: engine.DefaultMemoSize; below 0: none).
func NewAnswerer(decide Decide, size int) *Answerer {
	if size == 0 {
		size = engine.DefaultMemoSize
	}
	return &Answerer{decide: decide, lines: memo.New[[]byte](size)}
}

// Native returns the Answerer of a native rule set.
func NativeAnswerer(rs *engine.RuleSet, size int) *Answerer {
	return NewAnswerer(func(ctx context.Context, line []byte) ([]byte, bool, error) {
		out, err := rs.ResolveJSON(ctx, line)
		return out, true, err
	}, size)
}

// Decide returns the decision's JSON for line, or an error: TooLong's for
// a line over MaxLineLen, else the Decide's. The bytes may be the memo's:
// the caller does not change them.
func (a *Answerer) Decide(ctx context.Context, line []byte) ([]byte, error) {
	if len(line) > MaxLineLen { // before the memo hashes it
		return nil, TooLong()
	}
	if out, ok := a.lines.Get(line); ok {
		return out, nil
	}
	out, pure, err := a.decide(ctx, line)
	if err == nil && pure {
		a.lines.Put(line, out)
	}
	return out, err
}

// Answer is what `dlroute resolve --json` writes for line alone, as its
// first line, and its status: the decision's JSON (StatusOK), or the
// error line (StatusInputError, StatusEvalError).
func (a *Answerer) Answer(ctx context.Context, line []byte) ([]byte, Status) {
	return AnswerOf(a.Decide(ctx, line))
}

// Explain is the JSON of line's engine.Explanation by rs, or the error
// line and status of Answer. Explanations are not remembered.
func Explain(ctx context.Context, rs *engine.RuleSet, line []byte) ([]byte, Status) {
	if len(line) > MaxLineLen {
		return AnswerOf(nil, TooLong())
	}
	return AnswerOf(rs.ExplainJSON(ctx, line))
}

// Exchange is Answer for an exchange rule set, with the step carrying
// the decision out takes (StepOf): the decision's JSON, or the
// error line of an input or evaluation error. A decision no host carries
// out (a copy onto a device) was decided all the same, so it is neither:
// it is StatusHostError with StepOf's no_copier error object, as the
// WebAssembly module answers it.
func Exchange(ctx context.Context, rs *engine.RuleSet, line []byte) ([]byte, Step, Status) {
	d, err := decideExchange(ctx, rs, line)
	if err != nil {
		out, status := AnswerOf(nil, err)
		return out, StepRaise, status
	}
	step, err := StepOf(d)
	if err != nil {
		return ErrorJSON(err), StepRaise, StatusHostError
	}
	out, _ := d.MarshalJSON()
	return out, step, StatusOK
}

// decideExchange decides line with rs, refusing a line over MaxLineLen.
func decideExchange(ctx context.Context, rs *engine.RuleSet, line []byte) (engine.Decision, error) {
	if len(line) > MaxLineLen {
		return engine.Decision{}, TooLong()
	}
	in, err := rs.DecodeInput(line)
	if err != nil {
		return engine.Decision{}, err
	}
	return rs.Resolve(ctx, in)
}
