package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/abi"
	"github.com/dlroute/dlroute/internal/answer"
)

// inputError is what answers an input that was not decided, as
// `dlroute resolve --json` writes it, with the input's index in a batch
// where the command line gives its line.
type inputError struct {
	Index    *int             `json:"index,omitempty"`
	Code     engine.Code      `json:"code"`
	Message  string           `json:"message"`
	Position *engine.Position `json:"position,omitempty"`
	Hint     string           `json:"hint,omitempty"`
}

// resolve answers POST /v1/resolve. One input object is answered by one
// decision object; an array by an array, element for element. A decision
// is `dlroute resolve --json`'s line with "revision" added; an input that
// cannot be decided gets {"input_error":{...}} or {"eval_error":{...}}.
// A ?ruleset=NAME==RELEASE that no version was checked against adds
// "release_warning" (engine.ReleaseWarning) to each decision, after the
// revision, or is refused under Config.StrictRelease.
// The whole request is answered by one snapshot, named by the
// Dlroute-Revision header and each decision's "revision". The body is
// read, to at most MaxBody bytes, before the snapshot is acquired: a
// client that sends slowly must not hold rules that a swap has retired
// (and, under --engine wasm, their module's memory) until it is done.
func (h *handler) resolve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, requestError{Code: string(engine.CodeTooLong),
			Message: fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit), Hint: "send fewer inputs per request"})
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, requestError{Code: "read_error", Message: err.Error()})
		return
	}
	s := h.cfg.Rules.Acquire()
	if s == nil {
		writeError(w, http.StatusServiceUnavailable, noRules)
		return
	}
	defer s.Release()
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	ref := r.URL.Query().Get("ruleset")
	if ref == "" {
		ref = h.cfg.RuleSet
	}
	d, warning, err := deciderFor(ctx, s, ref, h.cfg.StrictRelease)
	if err != nil {
		var e *engine.Error
		errors.As(err, &e)
		status := http.StatusNotFound
		if e == nil || e.Code != engine.CodeNoRuleSet && e.Code != engine.CodeUncheckedRelease {
			status, e = http.StatusInternalServerError, &engine.Error{Code: engine.CodeEval, Message: err.Error()}
		}
		writeError(w, status, requestError{Code: string(e.Code), Message: e.Message, Hint: e.Hint})
		return
	}
	w.Header().Set(RevisionHeader, s.Revision())
	w.Header().Set("Content-Type", "application/json")
	revision, _ := json.Marshal(s.Revision())
	a := answerer{h: h, d: d, revision: revision}
	if warning != nil {
		a.warning, _ = json.Marshal(warning)
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		h.batch(ctx, w, a, body)
		h.m.latency.WithLabelValues("batch").Observe(time.Since(start).Seconds())
		return
	}
	out, status := a.answer(ctx, body, nil)
	w.WriteHeader(status)
	w.Write(append(out, '\n'))
	h.m.latency.WithLabelValues("single").Observe(time.Since(start).Seconds())
}

// batch answers an array of inputs with an array, always 200: a bad input
// is answered in its place, as a bad line is by `dlroute resolve --json`.
func (h *handler) batch(ctx context.Context, w http.ResponseWriter, a answerer, body []byte) {
	var inputs []json.RawMessage
	if err := json.Unmarshal(body, &inputs); err != nil {
		writeError(w, http.StatusBadRequest, requestError{Code: string(engine.CodeJSON), Message: "the body is neither a JSON object nor an array of them: " + err.Error()})
		return
	}
	if len(inputs) > h.cfg.MaxBatch {
		writeError(w, http.StatusRequestEntityTooLarge, requestError{Code: string(engine.CodeTooLong),
			Message: fmt.Sprintf("the batch has %d inputs; the limit is %d", len(inputs), h.cfg.MaxBatch), Hint: "send fewer inputs per request"})
		return
	}
	out := make([]byte, 0, 128*len(inputs)+2)
	out = append(out, '[')
	for i, in := range inputs {
		if i > 0 {
			out = append(out, ',')
		}
		answer, _ := a.answer(ctx, in, &i)
		out = append(out, answer...)
	}
	out = append(out, "]\n"...)
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// answerer decides inputs for one request.
type answerer struct {
	h        *handler
	d        Decider
	revision []byte // JSON string
	warning  []byte // the ref's engine.ReleaseWarning as JSON, or nil
}

// answer decides one input: the JSON to answer it with, and the status a
// request of that one input gets (200, 400 for an input error, 500 for an
// evaluation error).
func (a answerer) answer(ctx context.Context, input []byte, index *int) ([]byte, int) {
	decision, err := a.d.ResolveJSON(ctx, input)
	if err == nil {
		outcome := outcomeDevice
		if bytes.HasPrefix(decision, []byte(`{"error":`)) {
			outcome = outcomeException
		}
		a.h.m.decisions.WithLabelValues(a.d.Ref(), outcome).Inc()
		// The decision's JSON ends in '}': add the revision before it.
		out := make([]byte, 0, len(decision)+len(a.revision)+len(a.warning)+32)
		out = append(out, decision[:len(decision)-1]...)
		out = append(out, `,"revision":`...)
		out = append(out, a.revision...)
		if a.warning != nil {
			out = append(out, `,"release_warning":`...)
			out = append(out, a.warning...)
		}
		return append(out, '}'), http.StatusOK
	}
	ie := inputError{Index: index, Code: engine.CodeEval, Message: err.Error()}
	var e *engine.Error
	if errors.As(err, &e) {
		ie.Code, ie.Message, ie.Position, ie.Hint = e.Code, e.Message, e.Pos, e.Hint
	}
	kind, status := outcomeEvalError, http.StatusInternalServerError
	if answer.Classify(err) == abi.StatusInputError {
		kind, status = outcomeInputError, http.StatusBadRequest
	}
	a.h.m.decisions.WithLabelValues(a.d.Ref(), kind).Inc()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]inputError{kind: ie})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), status
}
