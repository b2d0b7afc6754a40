package attack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// Attack is one of issue 35's ways to break a host, as a client or a
// rules author would try it on a running serve.
type Attack struct {
	// Name names it in tests and benchmarks: "long-release".
	Name string
	// Break is what it did to serve before the budgets; Outcome what it
	// gets now, which Run checks.
	Break, Outcome string
	// Engine is "wasm" for an attack on `serve --engine wasm`, else "".
	Engine string
	// good changes the rules in force at start; nil keeps
	// ruletest.Rules.
	good func(fstest.MapFS) fstest.MapFS
	run  func(context.Context, *Target) error
	// afterFix, if set, checks what the fix did to the attack.
	afterFix func(*Target) error
}

// All is issue 35's five breaks and its five weaker ones, in its order,
// and slow clients beside serve's limit on the requests it works on.
func All() []Attack {
	return []Attack{
		{Name: "long-release", Break: "a batch of 10,000 under a 60,000-byte release: a 1.8 GB answer, serve out of memory",
			Outcome: "400 too_long; at the 128-byte limit, 200 with one warning header", run: longRelease},
		{Name: "bodies", Break: "300 connections of 4 MiB-1 each: RSS 2.7-3.0 GB, /healthz over 5 s",
			Outcome: "503 busy past --max-in-flight (32 MiB), each body answered or refused, the memory given back after", run: bodies},
		{Name: "compiled-rules", Break: "8 versions of 4,000 six-deep exists nests in --rules: 2 GB, serve and its good rules dead",
			Outcome: "load_too_large; the good rules keep deciding, the memory given back after", run: compiledRules},
		{Name: "slow-check", Break: "a check of hours: the operator's fix not in force at 150 s, /v1/status silent",
			Outcome: "/v1/status says checking; the fix cancels the check and is in force", run: slowCheck, afterFix: checkCanceled},
		{Name: "wasm-guest", Engine: "wasm", Break: "2,000 guarded slow rules: the module's guest out of memory, 390 lines of stack, serve exits",
			Outcome: "decision_cost, as natively; serve keeps the good rules and logs no guest stack", run: guardedRules},
		{Name: "decision-cost", Break: "2,000 guarded slow rules: one decision 4.3 s of CPU",
			Outcome: "decision_cost at load", run: guardedRules},
		{Name: "wasm-held", Engine: "wasm", Break: "two slow requests hold the module's instances: 7 of 7 other requests 500 at 10 s",
			Outcome: "every other request answered 200", good: withSlowRules, run: wasmHeld},
		{Name: "overlap", Break: "two manifests claim one release: every request naming it 404",
			Outcome: "overlapping_releases; the release still decided by the version in force", run: overlap},
		{Name: "escape-name", Break: "a rule-set folder named with ESC colour codes, printed raw",
			Outcome: "bad_name; no raw control character in serve's log", run: badName("jax\x1b[31mred")},
		{Name: "bidi-name", Break: "a rule-set folder named with U+202E: refused with code error, a USTAR message",
			Outcome: "bad_name; no raw U+202E in serve's log", run: badName("jax\u202eevil")},
		{Name: "slow-clients", Break: "none before (the issue's slowloris held); a limit on connections would let slow clients keep everyone out",
			Outcome: "every ordinary request answered 200 beside 600 slow ones", run: slowClients},
	}
}

// tiny is a small input, 70 bytes.
const tiny = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`

// batchOf is a batch of n copies of input.
func batchOf(n int, input string) string {
	return "[" + strings.Repeat(input+",", n-1) + input + "]"
}

// longRelease is issue 35's first break: four clients at once each send a
// batch of 10,000 under a release of 60,000 bytes, then one at the limit
// (engine.MaxReleaseLen, 128 bytes), whose warning is said once.
func longRelease(ctx context.Context, t *Target) error {
	batch := batchOf(10_000, tiny)
	long := "jax==0.11.0+" + strings.Repeat("a", 60_000)
	limit := "jax==0.11.0.dev1+" + strings.Repeat("a", engine.MaxReleaseLen-len("0.11.0.dev1+"))
	return together(4, func() error {
		a, err := t.post(ctx, "?ruleset="+url.QueryEscape(long), batch)
		if err != nil {
			return err
		}
		if a.status != http.StatusBadRequest || a.code != "too_long" || len(a.body) > 1000 {
			return fmt.Errorf("a batch under a 60,000-byte release: %d %.200s; want 400, too_long, a short answer", a.status, a.body)
		}
		a, err = t.post(ctx, "?ruleset="+url.QueryEscape(limit), batch)
		if err != nil {
			return err
		}
		if a.status != http.StatusOK || a.header.Get("Dlroute-Release-Warning") == "" || strings.Contains(a.body, "release_warning") {
			return fmt.Errorf("a batch under a 128-byte release: %d, warning header %q, %d bytes; want 200, the warning once, in the header", a.status, a.header.Get("Dlroute-Release-Warning"), len(a.body))
		}
		return nil
	})
}

// bodies is issue 35's second break: 300 connections at once, each
// sending one input of 4 MiB-1 bytes (sendBodies), from a process of
// lower priority than serve (attackProcess). Once all are answered,
// serve's memory must come back to at most twice what it was before.
func bodies(ctx context.Context, t *Target) error {
	before, err := t.RSS()
	if err != nil {
		return err
	}
	if err := t.attackProcess(ctx, "bodies"); err != nil {
		return err
	}
	// The burst's heap is given back: before the budgets, serve still
	// held 3.0 GB 30 s after.
	return t.waitGivenBack(ctx, "the bodies", before)
}

// sendBodies is bodies' clients, in the attack's process: each is
// answered, with 503 busy (past the budget of bytes in flight) or the
// input's own refusal (too_long: a platform_version of 4 MiB); none fails
// otherwise. Each client reads its answer while it sends, as curl does:
// serve answers a refused body before it has all arrived, and then
// resets the connection.
func sendBodies(ctx context.Context, url string, count func(status int, code string)) error {
	const size = 4<<20 - 1
	head, tail := `{"platform":"gpu","platform_version":"`, `","local_hardware_id":0}`
	body := []byte(head + strings.Repeat("a", size-len(head)-len(tail)) + tail)
	addr := strings.TrimPrefix(url, "http://")
	request := fmt.Sprintf("POST /v1/resolve HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", addr, len(body))
	return together(300, func() error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			count(0, "error")
			return err
		}
		defer conn.Close()
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		defer stop()
		go func() {
			conn.Write([]byte(request))
			conn.Write(body) // cut off by serve once it has answered a refusal
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			count(0, "error")
			return fmt.Errorf("a 4 MiB body: no answer: %w", err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		code := errorCode(out)
		count(resp.StatusCode, code)
		switch {
		case resp.StatusCode == http.StatusServiceUnavailable && code == "busy" && resp.Header.Get("Retry-After") != "":
		case resp.StatusCode/100 == 4 && code != "":
		default:
			return fmt.Errorf("a 4 MiB body: %s %.200s; want 503 busy with Retry-After, or the input refused with a code", resp.Status, out)
		}
		return nil
	})
}

// slowClients: 300 connections send their headers a byte every half
// second, never to finish them, and 300 their body, for longer than
// httpserve.ReadHeaderTimeout; meanwhile ten ordinary requests, one after
// another, are each answered 200: the slow ones hold no turn to work.
func slowClients(ctx context.Context, t *Target) error {
	addr := strings.TrimPrefix(t.URL, "http://")
	slow, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	headers := "POST /v1/resolve HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n"
	for i := range 600 {
		wg.Go(func() {
			var d net.Dialer
			conn, err := d.DialContext(slow, "tcp", addr)
			if err != nil {
				return
			}
			defer conn.Close()
			defer context.AfterFunc(slow, func() { conn.Close() })()
			drip := headers + "X-Slow: " + strings.Repeat("a", 100)
			if i%2 == 1 {
				body := "[" + strings.Repeat(GoodInput+",", 20) + GoodInput + "]"
				if _, err := fmt.Fprintf(conn, "%sContent-Length: %d\r\n\r\n", headers, len(body)); err != nil {
					return
				}
				drip = body
			}
			for j := 0; j < len(drip); j++ {
				if _, err := conn.Write([]byte{drip[j]}); err != nil {
					return
				}
				select {
				case <-slow.Done():
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
	}
	time.Sleep(time.Second) // the slow ones connect and start
	for i := range 10 {
		a, err := t.post(ctx, "", GoodInput)
		if err != nil {
			return err
		}
		if a.status != http.StatusOK || !strings.Contains(a.body, GoodAnswer) {
			return fmt.Errorf("ordinary request %d of 10, beside 600 slow clients: %d %.200s; want 200", i+1, a.status, a.body)
		}
		time.Sleep(600 * time.Millisecond)
	}
	return nil
}

// waitGivenBack waits until serve's resident memory is back to at most
// twice before, what it was before the attack.
func (t *Target) waitGivenBack(ctx context.Context, after string, before int64) error {
	for {
		rss, err := t.RSS()
		if err != nil || rss <= 2*before {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s, serve holds %d MB; want its memory given back, to at most twice the %d MB before", after, rss>>20, before>>20)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// compiledRules is issue 35's third break: eight versions of jax, each
// 4,000 legal six-deep exists nests (0.9 MiB, under the file limit), moved
// one by one into the rules folder.
func compiledRules(ctx context.Context, t *Target) error {
	var nests strings.Builder
	for i := range 4000 {
		cond := fmt.Sprintf("f == %d", i+2)
		for _, v := range []string{"f", "e", "d", "c", "b", "a"} {
			cond = fmt.Sprintf("[1].exists(%s, %s)", v, cond)
		}
		fmt.Fprintf(&nests, "  - id: nest-%d\n    when: \"%s\"\n    device: {type: kDLCPU, id: 0}\n", i, cond)
	}
	before, err := t.RSS()
	if err != nil {
		return err
	}
	for v := 10; v < 18; v++ {
		if err := t.addVersion(fmt.Sprintf("v%d", v), nests.String(), true); err != nil {
			return err
		}
	}
	if err := t.waitRefused(ctx, "load_too_large"); err != nil {
		return err
	}
	// The refused rules' heap is given back: serve held 146 MB after
	// them, the peak, until a collection minutes later.
	return t.waitGivenBack(ctx, "the refused rules", before)
}

// addVersion moves a copy of jax@v3 into the rules folder as jax/version,
// in one rename, with rules put before its first; dropReleases leaves its
// mirrors.releases out, so that it claims none of jax@v3's.
func (t *Target) addVersion(version, rules string, dropReleases bool) error {
	files := ruletest.Rules()
	stage := filepath.Join(t.work, "stage-"+version)
	for _, name := range []string{"device_types.yaml", "manifest.yaml", "rules.yaml", "tests.yaml"} {
		data := files["jax/v3/"+name].Data
		switch name {
		case "manifest.yaml":
			if dropReleases {
				data = ruletest.AsVersion(data, version)
			} else {
				data = bytes.Replace(data, []byte("version: v3"), []byte("version: "+version), 1)
			}
		case "rules.yaml":
			data = bytes.Replace(data, []byte("\nrules:\n"), []byte("\nrules:\n"+rules), 1)
		}
		if err := os.MkdirAll(stage, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			return err
		}
	}
	return os.Rename(stage, filepath.Join(t.Dir, "jax", version))
}

// slowCheck is issue 35's fourth break: jax@v3 with ten slow rules is put
// in force, then 2,000 tests that each go through them (minutes of
// checking: ruletest.WithSlowTests) are added. /v1/status must say a check
// runs; the fix that follows must cancel it (checkCanceled).
func slowCheck(ctx context.Context, t *Target) error {
	slow := ruletest.WithSlowTests()
	before, err := t.status(ctx)
	if err != nil {
		return err
	}
	if err := ruletest.WriteFile(filepath.Join(t.Dir, "jax", "v3", "rules.yaml"), slow["jax/v3/rules.yaml"].Data); err != nil {
		return err
	}
	if _, err := t.waitStatus(ctx, "activation of the slow rules", func(st status) bool { return st.Activations > before.Activations }); err != nil {
		return err
	}
	if err := ruletest.WriteFile(filepath.Join(t.Dir, "jax", "v3", "tests.yaml"), slow["jax/v3/tests.yaml"].Data); err != nil {
		return err
	}
	_, err = t.waitStatus(ctx, "check under way in /v1/status", func(st status) bool { return st.Checking != nil })
	return err
}

// checkCanceled: serve's log says the slow check was canceled for the fix.
func checkCanceled(t *Target) error {
	if !strings.Contains(t.Log(), `msg="rules check canceled: a newer change is checked instead"`) {
		return errors.New("serve's log does not say the slow check was canceled for the fix:\n" + t.Log())
	}
	return nil
}

// guardedRules is issue 35's fifth break on `serve --engine wasm`, and
// its first weaker one natively: 2,000 rules, each guarded by a
// comparison that holds only on the platform "slow" and then a loop of
// 14,400 steps (ruletest.WithSlowRules, 300 KB). Both engines refuse them
// alike, at load; serve logs no guest stack and keeps deciding.
func guardedRules(ctx context.Context, t *Target) error {
	slow := ruletest.WithSlowRules(ruletest.Rules(), 2000)
	if err := ruletest.WriteFile(filepath.Join(t.Dir, "jax", "v3", "rules.yaml"), slow["jax/v3/rules.yaml"].Data); err != nil {
		return err
	}
	if err := t.waitRefused(ctx, "decision_cost"); err != nil {
		return err
	}
	if log := t.Log(); strings.Contains(log, "goroutine ") || strings.Contains(log, "wasm stack trace") || strings.Count(log, "\n") > 100 {
		return fmt.Errorf("serve's log holds a stack, or more than 100 lines:\n%s", log)
	}
	return nil
}

// withSlowRules adds ruletest.WithSlowRules's ten slow rules (about a
// second a decision in the module) to the good rules.
func withSlowRules(fsys fstest.MapFS) fstest.MapFS { return ruletest.WithSlowRules(fsys, 10) }

// wasmHeld is issue 35's second weaker break: two clients send decisions
// on the slow platform without pause, holding the module's instances,
// while another sends seven ordinary ones; each of those is answered.
func wasmHeld(ctx context.Context, t *Target) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				// Each input another, so that no answer is remembered.
				t.post(ctx, "", fmt.Sprintf(`{"platform":"%s","platform_version":"v%d.%d","local_hardware_id":0}`, ruletest.SlowPlatform, c, i))
			}
		}()
	}
	defer wg.Wait()
	defer close(done)
	for i := range 7 {
		a, err := t.post(ctx, "", GoodInput)
		if err != nil {
			return err
		}
		if a.status != http.StatusOK || !strings.Contains(a.body, GoodAnswer) {
			return fmt.Errorf("ordinary request %d of 7, beside two slow clients: %d %.200s; want 200", i+1, a.status, a.body)
		}
	}
	return nil
}

// overlap is issue 35's third weaker break: a jax/v4 whose manifest
// claims jax@v3's releases. It is refused; a request naming one of them
// is still decided, by jax@v3.
func overlap(ctx context.Context, t *Target) error {
	if err := t.addVersion("v4", "", false); err != nil {
		return err
	}
	if err := t.waitRefused(ctx, "overlapping_releases"); err != nil {
		return err
	}
	a, err := t.post(ctx, "?ruleset=jax==0.11.0", GoodInput)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK || !strings.Contains(a.body, `"ruleset":"jax@v3"`) {
		return fmt.Errorf("?ruleset=jax==0.11.0 after the overlap: %d %.200s; want 200 from jax@v3", a.status, a.body)
	}
	return nil
}

// badName is issue 35's fourth and fifth weaker breaks: a rule-set folder
// whose name holds a control or bidi character, a copy of jax. It is
// refused with bad_name, and serve's log quotes the name.
func badName(name string) func(context.Context, *Target) error {
	return func(ctx context.Context, t *Target) error {
		files := ruletest.Rules()
		stage := filepath.Join(t.work, "stage-name")
		for p, f := range files {
			if rest, ok := strings.CutPrefix(p, "jax/v3/"); ok {
				data := f.Data
				if rest == "manifest.yaml" {
					data = bytes.Replace(data, []byte("name: jax"), []byte("name: "+name), 1)
				}
				if err := os.MkdirAll(filepath.Join(stage, "v3"), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(stage, "v3", rest), data, 0o644); err != nil {
					return err
				}
			}
		}
		if err := os.Rename(stage, filepath.Join(t.Dir, name)); err != nil {
			return err
		}
		if err := t.waitRefused(ctx, "bad_name"); err != nil {
			return err
		}
		if log := t.Log(); strings.ContainsAny(log, "\x1b\u202e") {
			return fmt.Errorf("serve's log holds the folder's name raw: %q", log)
		}
		return nil
	}
}

// together runs f n times at once and returns the first error.
func together(n int, f func() error) error {
	errs := make(chan error, n)
	for range n {
		go func() { errs <- f() }()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
