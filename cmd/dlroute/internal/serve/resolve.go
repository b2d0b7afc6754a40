package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
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
//
// A ?ruleset=NAME==RELEASE that no version was checked against is
// answered with its warning (engine.ReleaseWarning, as JSON) in the
// Dlroute-Release-Warning header, once per response; one input's decision
// also carries it as "release_warning", after the revision, and a batch's
// decisions do not (before issue 35 each did, so that a batch's answer
// grew with the ref's length times its inputs). Under
// Config.StrictRelease it is refused instead. A release over
// engine.MaxReleaseLen bytes is refused with 400, code too_long.
//
// The whole request is answered by one snapshot, named by the
// Dlroute-Revision header and each decision's "revision". The body is
// read, to at most MaxBody bytes, before the snapshot is acquired: a
// client that sends slowly must not hold rules that a swap has retired
// (and, under --engine wasm, their module's memory) until it is done.
// Its bytes are claimed from the MaxInFlight budget as they are read, and
// held until the request is answered; a batch's answer, at most
// MaxAnswer bytes (past it: 413, code too_long), is claimed too. A
// request that would pass the budget is refused with 503, code busy, and
// Retry-After.
func (h *handler) resolve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c := &claim{b: h.budget}
	defer c.release()
	t := &turn{w: h.working}
	defer t.give()
	if t.take(r.Context()) != nil {
		return // the client went away while the request waited for its turn
	}
	in, refused := h.readBody(w, r, c, t)
	if refused != nil {
		h.refuse(w, refused)
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
		switch {
		case e != nil && e.Code == engine.CodeTooLong:
			status = http.StatusBadRequest
		case e == nil || e.Code != engine.CodeNoRuleSet && e.Code != engine.CodeUncheckedRelease:
			status, e = http.StatusInternalServerError, &engine.Error{Code: engine.CodeEval, Message: err.Error()}
		}
		writeError(w, status, requestError{Code: string(e.Code), Message: e.Message, Hint: e.Hint})
		return
	}
	w.Header().Set(RevisionHeader, s.Revision())
	revision, _ := json.Marshal(s.Revision())
	a := answerer{h: h, d: d, revision: revision}
	if warning != nil {
		a.warning, _ = json.Marshal(warning)
		w.Header().Set(ReleaseWarningHeader, string(a.warning))
	}
	if in.refused != nil {
		h.refuse(w, in.refused)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if in.batch {
		a.warning = nil // in the header, once
		h.batch(ctx, w, a, in.inputs, c, t)
		h.m.latency.WithLabelValues("batch").Observe(time.Since(start).Seconds())
		return
	}
	out, status := a.answer(ctx, in.single, nil)
	t.give() // writing waits on the client
	w.WriteHeader(status)
	w.Write(append(out, '\n'))
	h.m.latency.WithLabelValues("single").Observe(time.Since(start).Seconds())
}

// refuse answers a request with no decision; a busy server says when to
// retry.
func (h *handler) refuse(w http.ResponseWriter, r *refusal) {
	if r.status == http.StatusServiceUnavailable {
		// The rest of the body is not read, nor waited for.
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", retryAfter)
		h.m.busy.Inc()
	}
	writeError(w, r.status, r.e)
}

// retryAfter is the Retry-After of a busy refusal, in seconds: the bytes
// in flight are let go as their requests are answered, each within
// Timeout, most within milliseconds.
const retryAfter = "1"

// batch answers an array of inputs with an array, 200: a bad input is
// answered in its place, as a bad line is by `dlroute resolve --json`.
// The answer is built whole, so that a batch that would pass MaxAnswer,
// or the budget of bytes in flight, is refused (413, 503) before a byte of
// it is sent; its bytes are claimed from c as it grows.
func (h *handler) batch(ctx context.Context, w http.ResponseWriter, a answerer, inputs []json.RawMessage, c *claim, t *turn) {
	out := []byte{'['}
	for i, in := range inputs {
		if i > 0 {
			t.yield(ctx) // a batch of 10,000 does not keep every other request waiting
		}
		answer, _ := a.answer(ctx, in, &i)
		need := int64(len(out) + 1 + len(answer) + len("]\n"))
		if need > h.cfg.MaxAnswer {
			h.refuse(w, &refusal{http.StatusRequestEntityTooLarge, requestError{Code: string(engine.CodeTooLong),
				Message: fmt.Sprintf("the answer to the batch's first %d inputs is over %d bytes, the limit on an answer", i+1, h.cfg.MaxAnswer),
				Hint:    "send fewer inputs per request"}})
			return
		}
		if need > int64(cap(out)) {
			grown := slices.Grow(out, int(min(max(2*int64(cap(out)), need), h.cfg.MaxAnswer))-len(out))
			if !c.takeAnswer(int64(cap(grown) - cap(out))) {
				h.refuse(w, busy("the batch's answer"))
				return
			}
			out = grown
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, answer...)
	}
	out = append(out, "]\n"...)
	t.give() // writing waits on the client
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
	if contract.Classify(err) == contract.StatusInputError {
		kind, status = outcomeInputError, http.StatusBadRequest
	}
	a.h.m.decisions.WithLabelValues(a.d.Ref(), kind).Inc()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]inputError{kind: ie})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), status
}
