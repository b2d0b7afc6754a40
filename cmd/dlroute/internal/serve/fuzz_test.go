package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/fuzzbound"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

// What one resolve of a fuzzed body may cost. A body holds at most
// fuzzMaxBatch inputs of the embedded rules, each decided in microseconds.
func fuzzBound() fuzzbound.Bound {
	return fuzzbound.Bound{Time: fuzzbound.Time(time.Second), Alloc: 64 << 20}
}

// The handler's limits under fuzzing, lower than the defaults so that
// little inputs reach the paths that refuse a body or a batch as too
// large.
const (
	fuzzMaxBody  = 64 << 10
	fuzzMaxBatch = 100
)

// FuzzResolveBody sends arbitrary bodies to POST /v1/resolve, through the
// handler, on the embedded rules. No body may panic the handler or cost
// more than fuzzBound, and each is answered as docs/operating.md's table says: with
// JSON; 413 for a body over MaxBody or a batch over MaxBatch; a batch
// with 200 and one answer per input, in order, a bad one in place with
// its index, or 400 when it is not an array of JSON values; one input
// with 200 and a decision, 400 and an input_error, or 500 and an
// eval_error; every decision named by the revision of the
// Dlroute-Revision header. Seeds: testdata/fuzz/FuzzResolveBody (single
// inputs good and bad, batches, a large batch of nested arrays, a body
// nested past encoding/json's depth, a batch over the limit).
func FuzzResolveBody(f *testing.F) {
	rules, err := live.Open(context.Background(), live.Config{Source: live.Static("rules", ruletest.Rules()), Gate: live.Gate{Prepare: NativePrepare(0)}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { rules.Close() })
	h := NewHandler(HandlerConfig{Rules: rules, MaxBody: fuzzMaxBody, MaxBatch: fuzzMaxBatch})
	revision := rules.Current().Revision()
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		fuzzBound().Call(t, fmt.Sprintf("POST /v1/resolve of %d bytes", len(body)), func() {
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/resolve", bytes.NewReader(body)))
		})
		checkResolveAnswer(t, body, rec, revision)
	})
}

// checkResolveAnswer holds the answer to body to docs/operating.md's table.
func checkResolveAnswer(t *testing.T, body []byte, rec *httptest.ResponseRecorder, revision string) {
	t.Helper()
	out := rec.Body.Bytes()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("POST /v1/resolve %.200q: %d %.300s: %s", body, rec.Code, out, fmt.Sprintf(format, args...))
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" || !json.Valid(out) {
		fail("the answer is not JSON (Content-Type %q)", ct)
	}
	if len(body) > fuzzMaxBody {
		if rec.Code != http.StatusRequestEntityTooLarge {
			fail("want 413 for a body over %d bytes", fuzzMaxBody)
		}
		return
	}
	if got := rec.Header().Get(RevisionHeader); got != revision {
		fail("%s is %q; want %q", RevisionHeader, got, revision)
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		checkBatchAnswer(t, fail, body, rec.Code, out, revision)
		return
	}
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(out, &answer); err != nil {
		fail("the answer is not an object: %v", err)
	}
	want := map[int]string{http.StatusOK: "revision", http.StatusBadRequest: "input_error", http.StatusInternalServerError: "eval_error"}[rec.Code]
	if want == "" {
		fail("want 200, 400 or 500 for one input")
	}
	checkOne(fail, answer, want, -1, revision)
}

// checkBatchAnswer holds the answer to a body that is an array to
// docs/operating.md's table.
func checkBatchAnswer(t *testing.T, fail func(string, ...any), body []byte, status int, out []byte, revision string) {
	t.Helper()
	var inputs []json.RawMessage
	if err := json.Unmarshal(body, &inputs); err != nil {
		if status != http.StatusBadRequest || !bytes.HasPrefix(out, []byte(`{"error":{"code":"`+engine.CodeJSON+`"`)) {
			fail("want 400 and a json error for a body that is not an array of JSON values (%v)", err)
		}
		return
	}
	if len(inputs) > fuzzMaxBatch {
		if status != http.StatusRequestEntityTooLarge {
			fail("want 413 for a batch of %d inputs", len(inputs))
		}
		return
	}
	var answers []map[string]json.RawMessage
	if err := json.Unmarshal(out, &answers); status != http.StatusOK || err != nil || len(answers) != len(inputs) {
		fail("want 200 and an array of %d answers (%v)", len(inputs), err)
	}
	for i, a := range answers {
		want := "revision"
		if _, ok := a["input_error"]; ok {
			want = "input_error"
		} else if _, ok := a["eval_error"]; ok {
			want = "eval_error"
		}
		checkOne(fail, a, want, i, revision)
	}
}

// checkOne holds one answer to its kind: a decision (want "revision")
// named by revision, or an input_error or eval_error alone, with index i
// in a batch (i >= 0) and none for one input.
func checkOne(fail func(string, ...any), answer map[string]json.RawMessage, want string, i int, revision string) {
	if want == "revision" {
		if got := string(answer["revision"]); got != `"`+revision+`"` {
			fail("answer %d: the revision is %s; want %q", i, got, revision)
		}
		if _, ok := answer["device_type"]; !ok && answer["error"] == nil {
			fail("answer %d: a decision with neither a device_type nor an error", i)
		}
		return
	}
	var e struct {
		Index   *int   `json:"index"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(answer[want], &e); err != nil || len(answer) != 1 || e.Code == "" || e.Message == "" {
		fail("answer %d: want {%q: {code, message}} alone (%v)", i, want, err)
	}
	if (i < 0) != (e.Index == nil) || e.Index != nil && *e.Index != i {
		fail("answer %d: %s has index %v", i, want, e.Index)
	}
}
