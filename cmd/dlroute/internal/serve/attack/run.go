package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// MaxPeakRSS bounds serve's peak resident memory (VmHWM) under any
// attack of All, on either engine: 512 MiB. serve of the test rules
// starts at 40 to 60 MB. The bodies attack peaks highest, 188 to 273 MB
// (BENCHMARKS.md, "serve under issue 35's attacks"): the bodies in flight
// at once (serve.DefaultMaxInFlight, 32 MiB) are allocated about four
// times over while read and decoded, and the collector lets the heap grow
// to twice what is live. The bound is about twice that peak, room for a
// collector that a busy machine runs late. Before the budgets the bodies
// took 2.7 GB, a rules folder 2 GB.
const MaxPeakRSS = 512 << 20

// GoodInput is what the probe asks the rules in force throughout an
// attack; GoodAnswer is in every answer to it.
const (
	GoodInput  = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`
	GoodAnswer = `"device_type":"kDLCUDA"`
	// FixInput is decided kDLCUDA only once the operator's fix (a GPU
	// marker, "nvfork", added to jax@v3) is in force.
	FixInput = `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`
)

// Result is what a user of the host saw during one attack.
type Result struct {
	// PeakRSS is serve's peak resident memory (VmHWM) from its start to
	// the end of the attack and the fix; RSSAfter its resident memory then.
	PeakRSS, RSSAfter int64
	// Health is /healthz on the API's address, and DiagnosticHealth on
	// the diagnostic address, each asked every 20 ms on a new connection
	// from a process of its own, as a load balancer asks; Good is
	// GoodInput, asked every 100 ms.
	Health, DiagnosticHealth, Good Probes
	// Answers counts the attack's own requests by status and code, such
	// as "503 busy" or "400 too_long".
	Answers map[string]int
	// Fix is how long the operator's fix took from its write to its first
	// decision.
	Fix time.Duration
	// CPU is the processor time serve used from the attack's start to the
	// fix's first decision: what it needed of the machine, however busy
	// the machine was.
	CPU time.Duration
}

// Procs is the GOMAXPROCS serve runs with under attack: the issue's
// 2-core machine, whatever machine the attack runs on, so that the
// module's instances (one per processor but one), and the memory they
// take, do not grow with the machine.
const Procs = 2

// Probes is what a prober saw: how many requests it sent, how many were
// refused as busy (503 busy, to be retried), how many failed otherwise
// (another status, an error), and the longest answer.
type Probes struct {
	N, Busy, Failed int
	Worst           time.Duration
	// LastFailure says what the last failure was.
	LastFailure string
}

// Run runs a against a new `bin serve` of a rules folder it writes in
// dir, an empty directory: it starts serve, probes /healthz and the good
// rules while the attack runs, checks the attack is refused or bounded as
// a.Outcome says, writes the operator's fix (a marker added to jax@v3,
// every other change undone) and waits until it decides. ctx bounds it
// all. The error is the first thing that did not happen as a.Outcome
// says; the bounds (MaxPeakRSS, no failed probe) are the caller's to hold
// the Result to.
func Run(ctx context.Context, a Attack, bin, dir string) (Result, error) {
	var res Result
	good := ruletest.Rules()
	if a.good != nil {
		good = a.good(good)
	}
	rulesDir := filepath.Join(dir, "rules")
	if err := ruletest.WriteDir(rulesDir, good); err != nil {
		return res, err
	}
	args := []string{"--rules", rulesDir, "--keep", "off"}
	if a.Engine == "wasm" {
		args = append(args, "--engine", "wasm")
	}
	srv, err := Start(ctx, bin, []string{"GOMAXPROCS=" + fmt.Sprint(Procs)}, args...)
	if err != nil {
		return res, err
	}
	cpu, _ := srv.CPU()
	defer srv.Stop()
	t := &Target{Server: srv, Dir: rulesDir, work: dir, answers: map[string]int{}, client: &http.Client{}}
	pctx, stopProbes := context.WithCancel(ctx)
	var probing sync.WaitGroup
	var decisions prober
	probing.Add(1)
	go func() { defer probing.Done(); decisions.run(pctx, 100*time.Millisecond, t.probeGood) }()
	stopHealth, err := healthProbes(t.URL, t.DiagnosticURL)
	if err != nil {
		stopProbes()
		probing.Wait()
		return res, err
	}

	err = a.run(ctx, t)
	if err == nil {
		res.Fix, err = t.fix(ctx, good)
	}
	if err == nil && a.afterFix != nil {
		err = a.afterFix(t)
	}
	stopProbes()
	probing.Wait()
	health, healthErr := stopHealth()
	if err == nil {
		err = healthErr
	}
	res.Health, res.DiagnosticHealth, res.Good, res.Answers = health[t.URL], health[t.DiagnosticURL], decisions.result(), t.answers
	res.PeakRSS, _ = srv.PeakRSS()
	res.RSSAfter, _ = srv.RSS()
	if total, err := srv.CPU(); err == nil {
		res.CPU = total - cpu
	}
	if err == nil && !srv.Running() {
		err = fmt.Errorf("serve exited during the attack:\n%s", srv.Log())
	}
	if stopErr := srv.Stop(); err == nil && stopErr != nil {
		err = fmt.Errorf("serve did not shut down cleanly after the attack (%v):\n%s", stopErr, srv.Log())
	}
	return res, err
}

// Target is a running serve and its rules folder, as an attack sees them.
type Target struct {
	*Server
	// Dir is the rules folder serve watches.
	Dir     string
	work    string // beside Dir, where an attack stages files
	client  *http.Client
	mu      sync.Mutex
	answers map[string]int
}

// count records one answer of the attack's own.
func (t *Target) count(status int, code string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answers[strings.TrimSpace(fmt.Sprint(status)+" "+code)]++
}

// answer is one response to /v1/resolve, read whole.
type answer struct {
	status int
	header http.Header
	body   string
	code   string // the error's code, if it is an error
}

// post sends body to /v1/resolve?query and counts the answer.
func (t *Target) post(ctx context.Context, query, body string) (answer, error) {
	a, err := t.ask(ctx, query, body)
	if err != nil {
		t.count(0, "error")
	} else {
		t.count(a.status, a.code)
	}
	return a, err
}

// ask sends body to /v1/resolve?query.
func (t *Target) ask(ctx context.Context, query, body string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL+"/v1/resolve"+query, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(out), code: errorCode(out)}, err
}

// errorCode is the code of a request's refusal, or of its one input's.
func errorCode(body []byte) string {
	var e struct {
		Error      struct{ Code string }
		InputError struct{ Code string } `json:"input_error"`
	}
	json.Unmarshal(body, &e)
	return e.Error.Code + e.InputError.Code
}

// status is what an attack reads of /v1/status.
type status struct {
	Active struct {
		Revision    string
		ActivatedAt time.Time `json:"activated_at"`
	}
	Checking *struct {
		Revision string
		Since    time.Time
	}
	LastRefusal struct{ Stage, Code, Revision, Reason string } `json:"last_refusal"`
	Activations int
	Refusals    int
}

func (t *Target) status(ctx context.Context) (status, error) {
	var st status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL+"/v1/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// waitStatus asks /v1/status until ok holds of it, or ctx ends.
func (t *Target) waitStatus(ctx context.Context, what string, ok func(status) bool) (status, error) {
	for {
		st, err := t.status(ctx)
		if err == nil && ok(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("no %s (%v): /v1/status = %+v", what, ctx.Err(), st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitRefused waits until the last refusal has code, and checks that the
// rules in force did not change: the refused candidate never decides.
func (t *Target) waitRefused(ctx context.Context, code string) error {
	before, err := t.status(ctx)
	if err != nil {
		return err
	}
	st, err := t.waitStatus(ctx, "refusal with code "+code, func(st status) bool { return st.LastRefusal.Code == code })
	if err == nil && st.Active.Revision != before.Active.Revision {
		err = fmt.Errorf("refused with %s, yet the rules in force changed from %s to %s", code, before.Active.Revision, st.Active.Revision)
	}
	return err
}

// fix is the operator's fix: the rules folder made good again, with a
// marker added, and the time until the marker decides.
func (t *Target) fix(ctx context.Context, good fstest.MapFS) (time.Duration, error) {
	fixed := ruletest.WithMarker(good, "nvfork")
	start := time.Now()
	if err := syncDir(t.Dir, fixed); err != nil {
		return 0, err
	}
	for {
		a, err := t.ask(ctx, "", FixInput)
		if err == nil && a.status == http.StatusOK && strings.Contains(a.body, GoodAnswer) {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			st, _ := t.status(context.Background())
			return 0, fmt.Errorf("the operator's fix was not in force when the time ran out: /v1/status = %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// syncDir makes dir hold fsys's files and nothing else.
func syncDir(dir string, fsys fstest.MapFS) error {
	var extra []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel := filepath.ToSlash(must(filepath.Rel(dir, path)))
		if _, ok := fsys[rel]; ok {
			return nil
		}
		if d.IsDir() {
			for p := range fsys {
				if strings.HasPrefix(p, rel+"/") {
					return nil
				}
			}
			extra = append(extra, path)
			return filepath.SkipDir
		}
		extra = append(extra, path)
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range extra {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return ruletest.WriteDir(dir, fsys)
}

func must[T any](v T, _ error) T { return v }

// probeHealth asks base's /healthz once, on a connection of its own.
func probeHealth(base string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (busy bool, err error) { return false, askHealth(ctx, base) }
}

func askHealth(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return err
	}
	req.Close = true
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/healthz: %s", base, resp.Status)
	}
	return nil
}

// probeGood asks the rules in force GoodInput; 503 busy is a refusal to
// retry, not a failure.
func (t *Target) probeGood(ctx context.Context) (busy bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL+"/v1/resolve", strings.NewReader(GoodInput))
	if err != nil {
		return false, err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable && errorCode(out) == "busy":
		return true, nil
	case resp.StatusCode != http.StatusOK || !strings.Contains(string(out), GoodAnswer):
		return false, fmt.Errorf("the good rules answered %s: %.200s", resp.Status, out)
	}
	return false, nil
}

// prober asks one thing at an interval until its context ends.
type prober struct {
	mu sync.Mutex
	p  Probes
}

func (p *prober) run(ctx context.Context, every time.Duration, ask func(context.Context) (bool, error)) {
	for ctx.Err() == nil {
		start := time.Now()
		busy, err := ask(ctx)
		took := time.Since(start)
		if ctx.Err() != nil {
			return // cut off by the end of the attack: no answer to count
		}
		p.mu.Lock()
		p.p.N++
		p.p.Worst = max(p.p.Worst, took)
		switch {
		case err != nil:
			p.p.Failed++
			p.p.LastFailure = err.Error()
		case busy:
			p.p.Busy++
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

func (p *prober) result() Probes {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.p
}
