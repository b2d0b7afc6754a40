package playground

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/playground"
	"github.com/dlroute/dlroute/rules"
)

// The page decides with the decision module (decision.wasm, plans.bin)
// from its first decision, and starts the compiler module (dlroute.wasm)
// after it, for the trace and the tests and any edit. These tests serve
// the playground's handler in the test, with Options.Decision, as
// `dlroute playground` serves it once it hands the handler the decision
// module.

// decisionSite serves the playground of the embedded rules with the
// compiler module and, withDecision, the decision module, and returns
// its URL.
func decisionSite(t *testing.T, withDecision bool) string {
	t.Helper()
	return serveSite(t, decisionHandler(t, withDecision))
}

// serveSite serves h on a loopback port for the test, and returns its URL.
func serveSite(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// decisionHandler is decisionSite's handler.
func decisionHandler(t *testing.T, withDecision bool) http.Handler {
	t.Helper()
	testenv.Short(t, "the playground in a browser")
	ctx := context.Background()
	module, gz, err := wasmbuild.Gzipped(ctx, wasmbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := playground.Options{Rules: rules.FS, Source: "embedded", Module: module, ModuleGzip: gz}
	if withDecision {
		if opts.Decision, err = decisionwasm.Bytes(); err != nil {
			t.Fatal(err)
		}
	}
	h, err := playground.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// baselineEnv names a directory holding another version of the page:
// the index.html, style.css and modules of its playground/, as
// `git archive <commit> playground | tar -x` leaves them.
// TestDecisionFirstColdLoad then loads that page too, alternating with
// this checkout's, so that a change to the page is measured against the
// page before it in one run, on one machine's load.
const baselineEnv = "DLROUTE_PLAYGROUND_BASELINE"

// baselinePage serves the page files in dir (.html, .js and .css) as
// package playground serves its own, compressed, and the rest of the
// site (rules.json, the modules, the plans, the modules shared with
// wasm/node) from h.
func baselinePage(t *testing.T, h http.Handler, dir string) http.Handler {
	t.Helper()
	types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	page := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v", baselineEnv, err)
	}
	for _, e := range entries {
		if types[path.Ext(e.Name())] == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		page[e.Name()] = gz.Bytes()
	}
	if page["index.html"] == nil {
		t.Fatalf("%s=%s holds no index.html", baselineEnv, dir)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := strings.TrimPrefix(req.URL.Path, "/")
		if name == "" {
			name = "index.html"
		}
		gz, ok := page[name]
		if !ok || !strings.Contains(req.Header.Get("Accept-Encoding"), "gzip") {
			h.ServeHTTP(w, req)
			return
		}
		hdr := w.Header()
		hdr.Set("Content-Security-Policy", playground.ContentSecurityPolicy)
		hdr.Set("Content-Type", types[path.Ext(name)])
		hdr.Set("Cache-Control", "no-cache")
		hdr.Set("Content-Encoding", "gzip")
		w.Write(gz)
	})
}

// firstLoad is what a cold load of the page did on its way to its own
// engine's first decision.
type firstLoad struct {
	// EngineCold is navigation start to the page's engine's first
	// decision; CompilerAsked when the page started the compiler module
	// (0: it had not by then).
	EngineCold, CompilerAsked float64
	// LongestBefore is the longest main-thread task up to the engine's
	// first decision, LongestAll up to the tests shown; Tasks are the
	// long tasks, "@start+ms".
	LongestBefore, LongestAll float64
	Tasks                     []string
}

func (p page) firstLoad() firstLoad {
	p.t.Helper()
	return eval[firstLoad](p, `(() => {
		const first = performance.getEntriesByName('dlroute:engine-first-decision')[0]?.startTime ?? 0;
		const asked = performance.getEntriesByName('dlroute:compiler-asked')[0]?.startTime;
		const tasks = window.__longTasks ?? [];
		return {
			EngineCold: performance.getEntriesByName('dlroute:cold-to-engine-decision')[0]?.duration ?? 0,
			CompilerAsked: asked !== undefined && asked < first ? asked : 0,
			LongestBefore: Math.max(0, ...tasks.filter((e) => e.start < first).map((e) => e.ms)),
			LongestAll: Math.max(0, ...tasks.map((e) => e.ms)),
			Tasks: tasks.map((e) => '@' + Math.round(e.start) + '+' + Math.round(e.ms)),
		};
	})()`)
}

// TestDecisionFirstAnswersAsTheEngine: the page's first decision is the
// decision module's, made before the page asks for the compiler module;
// the page's answers with the decision module are the native engine's,
// byte for byte, for every test case of every embedded version that
// rules/plans.bin holds; the first screen's trace is the decision
// module's; and the compiler module starts for the tests when they are
// asked for, and compiles an edit of the rules.
func TestDecisionFirstAnswersAsTheEngine(t *testing.T) {
	ctx := browser(t)
	url := decisionSite(t, true)
	p := coldTab(t, ctx, 1280, 720, 1)
	p.open(url)
	p.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")

	p.waitFor("the page's engine's first decision", `performance.getEntriesByName('dlroute:engine-first-decision').length > 0`)
	first := p.firstLoad()
	if first.EngineCold == 0 {
		t.Fatal("the page's engine made no first decision")
	}
	if first.CompilerAsked != 0 {
		t.Errorf("the page asked for the compiler module at %.0f ms, before its own first decision at %.0f ms; want it asked for after", first.CompilerAsked, first.EngineCold)
	}
	// The page took decision.wasm, plans.bin and first.json from its
	// preloads, once each, and decided with no worker: it asked for no
	// worker's script; the status line still says how the module came.
	fetched := eval[string](p, `performance.getEntriesByType('resource').filter((e) => /\/(decision\.wasm|plans\.bin|first\.json|engine-worker\.js)$/.test(e.name))
		.map((e) => e.name.split('/').pop() + ' by ' + e.initiatorType).sort().join(', ')`)
	if fetched != "decision.wasm by link, first.json by link, plans.bin by link" {
		t.Errorf("the page fetched %q; want decision.wasm, first.json and plans.bin once each, by index.html's preloads, and no worker's script", fetched)
	}
	if by := eval[string](p, `document.querySelector('[data-testid=decision]').dataset.by`); by != "page" {
		t.Errorf("the decision shown is the %s's; want the page's own engine's", by)
	}
	if status := p.text("status"); !strings.Contains(status, "module ") || !strings.Contains(status, " MiB") {
		t.Errorf("the status line says %q; want the decision module's size and how it came", status)
	}

	// The trace is the decision module's, and the page has not started
	// the compiler module: no edit, no tests asked for.
	if !eval[bool](p, `!!document.querySelector('[data-testid=trace] ol.rules li') && !!document.querySelector('[data-testid=markers-tried]')`) {
		t.Errorf("the first screen has no trace, or not the fix for an unknown platform: %q", p.text("trace"))
	}
	if eval[bool](p, `performance.getEntriesByName('dlroute:compiler-asked').length > 0`) {
		t.Errorf("the page started the compiler module with no edit and no tests asked for")
	}

	refs, lines, want := nativeLines(t)
	type answer struct{ Status, Output, By string }
	refsJSON, _ := json.Marshal(refs)
	linesJSON, _ := json.Marshal(lines)
	got := eval[[]answer](p, fmt.Sprintf(`(async () => {
		const refs = %s, lines = %s, out = [];
		for (let i = 0; i < refs.length; i++) {
			const by = window.dlroute.decidedBy(refs[i]);
			const r = await window.dlroute.resolveJSON(refs[i], lines[i]);
			out.push({Status: r.status, Output: r.output, By: by});
		}
		return out;
	})()`, refsJSON, linesJSON))
	if len(got) != len(want) {
		t.Fatalf("the page answered %d lines of %d", len(got), len(want))
	}
	planned := map[string]bool{}
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		planned[e.Ref] = true
	}
	differ, byDecision := 0, 0
	for i, a := range got {
		if want := map[bool]string{true: "decision", false: "compiler"}[planned[refs[i]]]; a.By != want {
			t.Errorf("%s: the page decided with the %s module; want the %s module (rules/plans.bin holds %d versions)", refs[i], a.By, want, len(entries))
		}
		if a.By == "decision" {
			byDecision++
		}
		if a.Status != "ok" || a.Output != want[i] {
			if differ++; differ <= 10 {
				t.Errorf("%s: resolveJSON(%s) in the page = %s %s; natively %s", refs[i], lines[i], a.Status, a.Output, want[i])
			}
		}
	}
	t.Logf("%d lines of %d versions, %d of them by the decision module: %d differ from the native engine", len(got), countRefs(refs), byDecision, differ)

	// The tests, asked for, and an edit: the compiler module's.
	p.waitForTests()
	p.typeInto("editor-rules.yaml", "when: platform == 'gpu' && gpu_matches.size() == 0", true, " &&")
	p.waitFor("the edit's error on its line", `!!document.querySelector('[data-testid=editors] .gl.is-err')`)
}

func countRefs(refs []string) int {
	seen := map[string]bool{}
	for _, r := range refs {
		seen[r] = true
	}
	return len(seen)
}

// TestDecisionFirstColdLoad measures the page's own engine's first
// decision, cold (no cache, a browser context of its own per load), at
// 1x CPU, with the decision module and without it (the compiler module
// alone, as the page decided before), -loads of each (coldLoads), alternating, and
// the longest main-thread task up to that decision and up to the tests
// shown; with DLROUTE_PLAYGROUND_BASELINE (baselineEnv), that page with
// the decision module too ("baseline"). It records the figures
// BENCHMARKS.md reports in testout/playground/timings.json
// ("decision_first") and holds them to nothing: figures, not verdicts.
func TestDecisionFirstColdLoad(t *testing.T) {
	ctx := browser(t)
	h := decisionHandler(t, true)
	sites := map[string]string{"compiler": decisionSite(t, false), "decision": serveSite(t, h)}
	names := []string{"compiler", "decision"}
	if dir := os.Getenv(baselineEnv); dir != "" {
		sites["baseline"] = serveSite(t, baselinePage(t, h, dir))
		names = []string{"compiler", "baseline", "decision"}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	report := map[string]any{"loadavg": strings.TrimSpace(string(load))}
	runs := map[string][]firstLoad{}
	for i := 0; i < *coldLoads; i++ {
		for _, name := range names {
			tab, closeTab := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
			q := coldTabOf(t, page{t, tab}, 1280, 720, 1)
			q.open(sites[name])
			q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
			q.waitForTests()
			f := q.firstLoad()
			// Structure, not time: with the decision module the engine's
			// decision is the page's first; without it the server's comes
			// first, while the compiler module starts.
			if want := map[string]int{"compiler": 2, "decision": 1}[name]; want != 0 && q.decisionsBeforeEngine() != want {
				t.Errorf("%s, load %d: %d decisions shown up to the engine's first; want %d", name, i+1, q.decisionsBeforeEngine(), want)
			}
			closeTab()
			runs[name] = append(runs[name], f)
			t.Logf("%s, load %d: the engine's first decision at %.0f ms; longest main-thread task %.0f ms before it, %.0f ms in all; long tasks %v", name, i+1, f.EngineCold, f.LongestBefore, f.LongestAll, f.Tasks)
		}
	}
	for name, fs := range runs {
		var cold, before, all []float64
		for _, f := range fs {
			cold, before, all = append(cold, f.EngineCold), append(before, f.LongestBefore), append(all, f.LongestAll)
		}
		report[name] = map[string]any{"engine_first_decision_ms": cold, "engine_first_decision_median_ms": median(cold),
			"longest_task_before_ms": before, "longest_task_all_ms": all}
		t.Logf("%s: the engine's first decision %v ms, median %.0f; longest main-thread task before it %v ms, in all %v ms (load %s)", name, cold, median(cold), before, all, report["loadavg"])
	}
	mergeTimings(t, map[string]any{"decision_first": report})
}

// waitForTests waits for the tests to pass, first asking for them where
// the page offers to run them (it decides with plans, which hold none,
// until the compiler module has started).
func (p page) waitForTests() {
	p.t.Helper()
	p.waitFor("the tests run or offered", `['pass', 'fail', 'offer'].includes(document.querySelector('[data-testid=tests]').dataset.state)`)
	eval[bool](p, `(document.querySelector('[data-testid=run-tests]')?.click(), true)`)
	p.waitFor("the tests", `document.querySelector('[data-testid=tests]').dataset.state === 'pass'`)
}
