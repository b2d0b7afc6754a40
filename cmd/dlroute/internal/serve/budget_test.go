package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/rules"
)

// held is what the server's requests hold of its budget of bytes in
// flight: bodies and answers.
func (ts *testServer) held() (body, answer int64) {
	b := ts.metrics.budget.Load()
	return b.body.Load(), b.answer.Load()
}

// TestResolveReleaseTooLong: a ?ruleset= whose release is one byte over
// engine.MaxReleaseLen is refused with 400 and too_long, by the engine's
// check, and its answer does not quote it whole.
func TestResolveReleaseTooLong(t *testing.T) {
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{})
	release := "0.11.0+" + strings.Repeat("a", engine.MaxReleaseLen+1-len("0.11.0+"))
	for _, body := range []string{cudaInput, "[" + cudaInput + "]"} {
		status, header, out := ts.post(t, "?ruleset="+url.QueryEscape("jax=="+release), body)
		var e struct{ Error requestError }
		json.Unmarshal([]byte(out), &e)
		if status != http.StatusBadRequest || e.Error.Code != string(engine.CodeTooLong) || strings.Contains(out, release) || header.Get(ReleaseWarningHeader) != "" {
			t.Errorf("POST ?ruleset=jax==<%d bytes> %.20s: %d %s; want 400, code too_long, without the release", len(release), body, status, out)
		}
	}
}

// TestBatchReleaseWarningOnce: a batch of 10,000 inputs under a release
// of engine.MaxReleaseLen bytes that no version was checked against (the
// issue 35 attack, at the limit) is answered with the warning once, in
// the header, and an answer no longer than the same batch's without one.
func TestBatchReleaseWarningOnce(t *testing.T) {
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{})
	release := "0.11.0.dev1+" + strings.Repeat("a", engine.MaxReleaseLen-len("0.11.0.dev1+"))
	batch := "[" + strings.Repeat(cudaInput+",", DefaultMaxBatch-1) + cudaInput + "]"
	_, _, plain := ts.post(t, "?ruleset=jax@v3", batch)
	status, header, out := ts.post(t, "?ruleset="+url.QueryEscape("jax=="+release), batch)
	var warning engine.ReleaseWarning
	if err := json.Unmarshal([]byte(header.Get(ReleaseWarningHeader)), &warning); err != nil || warning.Release != release || warning.Code != engine.CodeUncheckedRelease {
		t.Errorf("%s = %q (%v); want the warning for the release", ReleaseWarningHeader, header.Get(ReleaseWarningHeader), err)
	}
	var answers []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &answers); status != http.StatusOK || err != nil || len(answers) != DefaultMaxBatch {
		t.Fatalf("the batch: %d, %d answers (%v); want 200 and %d: %.300s", status, len(answers), err, DefaultMaxBatch, out)
	}
	if n := strings.Count(out, "release_warning"); n != 0 || len(out) != len(plain) {
		t.Errorf("the batch's answer is %d bytes with %d release_warning; want %d bytes (the answer without a warning) and none", len(out), n, len(plain))
	}
	if body, answer := ts.held(); body != 0 || answer != 0 {
		t.Errorf("after the batch, %d body and %d answer bytes are held; want none", body, answer)
	}
}

// TestBatchAnswerBudget: a batch whose answer would pass MaxAnswer is
// refused with 413 and too_long, and nothing of it is held after; one
// whose answer fits is answered.
func TestBatchAnswerBudget(t *testing.T) {
	const maxAnswer = 1000 // about 8 of cudaInput's answers
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{MaxAnswer: maxAnswer})
	batch := func(n int) string { return "[" + strings.Repeat(cudaInput+",", n-1) + cudaInput + "]" }
	status, _, out := ts.post(t, "", batch(20))
	var e struct{ Error requestError }
	json.Unmarshal([]byte(out), &e)
	if status != http.StatusRequestEntityTooLarge || e.Error.Code != string(engine.CodeTooLong) || e.Error.Hint == "" {
		t.Errorf("a batch of 20: %d %s; want 413, too_long and a hint", status, out)
	}
	if status, _, out := ts.post(t, "", batch(2)); status != http.StatusOK || len(out) > maxAnswer {
		t.Errorf("a batch of 2: %d %s; want 200", status, out)
	}
	if body, answer := ts.held(); body != 0 || answer != 0 {
		t.Errorf("after the batches, %d body and %d answer bytes are held; want none", body, answer)
	}
}

// TestBodiesInFlightBudget: 300 clients each send the first 32 KiB of a
// batch and wait, half with a Content-Length, half chunked, to a server
// whose budget holds 10.5 such parts. At most 10 are read on; the others
// are refused with 503, code busy and Retry-After, and /healthz answers
// while they wait. Once the 10 send the rest, they are answered, no byte
// of the budget is held, and the burst's heap is given back.
func TestBodiesInFlightBudget(t *testing.T) {
	const (
		clients = 300
		part    = 32 << 10
	)
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{MaxInFlight: 10*part + part/2})
	first := "[" + strings.Repeat(" ", part-1)
	rest := cudaInput + "]"
	addr := strings.TrimPrefix(ts.URL, "http://")

	proceed := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(proceed) }) }
	t.Cleanup(let) // before the server's Close, which waits for the held requests
	var refused, answered, failed atomic.Int64
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			defer conn.Close()
			chunked := i%2 == 1
			head := fmt.Sprintf("POST /v1/resolve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(first)+len(rest))
			sendFirst, sendRest := first, rest
			if chunked {
				head = "POST /v1/resolve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
				sendFirst = fmt.Sprintf("%x\r\n%s\r\n", len(first), first)
				sendRest = fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(rest), rest)
			}
			if _, err := conn.Write([]byte(head + sendFirst)); err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			go func() {
				<-proceed
				conn.Write([]byte(sendRest)) // refused clients' connections are closed
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				failed.Add(1)
				t.Errorf("client %d (chunked %v): %v", i, chunked, err)
				return
			}
			defer resp.Body.Close()
			var e struct{ Error requestError }
			json.NewDecoder(resp.Body).Decode(&e)
			switch {
			case resp.StatusCode == http.StatusServiceUnavailable && e.Error.Code == string(CodeBusy) && resp.Header.Get("Retry-After") == "1":
				refused.Add(1)
			case resp.StatusCode == http.StatusOK:
				answered.Add(1)
			default:
				failed.Add(1)
				t.Errorf("client %d (chunked %v): %d, code %q, Retry-After %q; want 200, or 503 with code busy and Retry-After 1",
					i, chunked, resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After"))
			}
		}()
	}
	// Each client is refused, or read on to the end of its first part.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		body, _ := ts.held()
		if body%part == 0 && refused.Load()+body/part == clients || failed.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s on, %d clients are refused and %d bytes of bodies held (%d parts); want each client refused or held", refused.Load(), body, body/part)
		}
	}
	body, _ := ts.held()
	if held := body / part; held < 1 || held > 10 {
		t.Errorf("%d bodies are held; want 1 to 10, what the budget holds", held)
	}
	if status, out := ts.get(t, "/healthz"); status != http.StatusOK {
		t.Errorf("/healthz while the budget is held: %d %s; want 200", status, out)
	}
	let()
	wg.Wait()
	if got := answered.Load(); got != body/part || refused.Load()+got != clients {
		t.Errorf("%d answered, %d refused; want the %d held answered and the rest refused", got, refused.Load(), body/part)
	}
	waitUntil(t, "the budget is empty", func() bool { body, answer := ts.held(); return body == 0 && answer == 0 })
	if n := ts.metrics.budget.Load().returns.Load(); n < 1 {
		t.Errorf("the burst held over half the budget, and its heap was given back %d times; want at least once", n)
	}
	if status, _ := ts.get(t, "/healthz"); status != http.StatusOK {
		t.Errorf("/healthz after the burst: %d; want 200", status)
	}
}

// TestAnswerBudgetMargin sizes DefaultMaxAnswer: a full batch
// (DefaultMaxBatch inputs) of the longest answer any case of the shipped
// rules gets, with the longest revision a bundle may have, must take at
// most half of it.
func TestAnswerBudgetMargin(t *testing.T) {
	testenv.ContentOnly(t)
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	longest, total, cases, which := 0, 0, 0, ""
	for _, rs := range cat.RuleSets() {
		for _, c := range rs.Cases() {
			input, err := json.Marshal(c.Input)
			if err != nil {
				t.Fatalf("%s %s: %v", rs.Ref(), c.Name, err)
			}
			decision, err := rs.ResolveJSON(context.Background(), input)
			if err != nil {
				continue // an input error, answered with its message alone: shorter than a decision
			}
			total, cases = total+len(decision), cases+1
			if len(decision) > longest {
				longest, which = len(decision), rs.Ref()+" "+c.Name
			}
		}
	}
	withRevision := len(`,"revision":""`) + bundle.MaxRevisionLen + len(",")
	full := int64(longest+withRevision) * DefaultMaxBatch
	t.Logf("%d decisions, %d bytes on average; the longest %d bytes (%s), %d with the longest revision; a full batch of them %d bytes, DefaultMaxAnswer / %.1f",
		cases, total/max(cases, 1), longest, which, longest+withRevision, full, float64(DefaultMaxAnswer)/float64(full))
	if cases == 0 || 2*full > DefaultMaxAnswer {
		t.Errorf("a full batch of the longest answers takes %d bytes; want at most half of DefaultMaxAnswer (%d)", full, DefaultMaxAnswer)
	}
}
