package playground

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/rules"
)

// longTasks records, from before the page's first script, every task of
// the page's main thread over 50 ms (PerformanceObserver 'longtask'), for
// the test to read as window.__longTasks.
const longTasks = `window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push({start: e.startTime, ms: e.duration}); })
	.observe({type: 'longtask', buffered: true});`

// coldTab opens a tab of w x h with the browser's cache off (every load is
// cold: no module, no compiled code from before), the CPU slowed rate
// times (1: not at all), and the page's long tasks recorded.
func coldTab(t *testing.T, ctx context.Context, w, h int64, rate float64) page {
	t.Helper()
	return coldTabOf(t, newTab(t, ctx), w, h, rate)
}

func coldTabOf(t *testing.T, q page, w, h int64, rate float64) page {
	t.Helper()
	q.run("a cold tab", chromedp.EmulateViewport(w, h), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: longTasks}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate})
		return err
	}))
	return q
}

// decisionsBeforeEngine counts the decisions the page showed up to its
// engine's first, that one included: 1 where the engine's was the first,
// 2 where the server's came before it.
func (p page) decisionsBeforeEngine() int {
	p.t.Helper()
	return eval[int](p, `(() => {
		const engine = performance.getEntriesByName('dlroute:engine-first-decision')[0]?.startTime ?? -1;
		return performance.getEntriesByName('dlroute:decision').filter((e) => e.startTime <= engine).length;
	})()`)
}

// mainThread is what the page's main thread did: its first paint, and
// the longest task after it.
type mainThread struct {
	FirstPaint, Longest float64
	Over200             int
	// Tasks are the long tasks after the first paint, and Parts the
	// page's own measures of its work (dlroute:show, draw-grid, ...),
	// each "name@start+ms", to tell what a long task was.
	Tasks, Parts []string
}

func (p page) mainThread() mainThread {
	p.t.Helper()
	return eval[mainThread](p, `(() => {
		const paint = performance.getEntriesByName('first-paint')[0]?.startTime ?? 0;
		const after = (window.__longTasks ?? []).filter((e) => e.start >= paint);
		const parts = performance.getEntriesByType('measure').filter((e) => e.name.startsWith('dlroute:') && !e.name.includes('edit-to') && !e.name.includes('cold-to') && e.duration > 20);
		return {FirstPaint: paint, Longest: Math.max(0, ...after.map((e) => e.ms)), Over200: after.filter((e) => e.ms > 200).length,
			Tasks: after.map((e) => '@' + Math.round(e.start) + '+' + Math.round(e.ms)), Parts: parts.map((e) => e.name.slice(8) + '@' + Math.round(e.startTime) + '+' + Math.round(e.duration))};
	})()`)
}

// contrast is the WCAG 2 contrast of an element's text against the first
// opaque background under it; -1 when there is no such element.
func (p page) contrast(sel string) float64 {
	p.t.Helper()
	return eval[float64](p, fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el) return -1;
		const rgb = (s) => { const m = s.match(/[\d.]+/g).map(Number); return {r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1}; };
		const lum = (c) => ['r', 'g', 'b'].map((k) => { const v = c[k] / 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
			.reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
		const fg = rgb(getComputedStyle(el).color);
		let bg = null;
		for (let e = el; e && !bg; e = e.parentElement) { const b = rgb(getComputedStyle(e).backgroundColor); if (b.a > 0) bg = b; }
		bg ??= {r: 255, g: 255, b: 255};
		const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
		return (hi + 0.05) / (lo + 0.05);
	})()`, sel))
}

// TestPlaygroundFirstScreen is the question a person comes to the page
// with: "will torch.from_dlpack take my JAX GPU array, whose platform JAX
// does not know?", answered in words on the first screen of a laptop and
// of a phone, with the step that decided and the rule; the grid behind
// it; the trace's fix; the small faults of issue 29; and the figures
// BENCHMARKS.md reports (cold load, at 4x CPU throttling, long tasks).
func TestPlaygroundFirstScreen(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	ctx := browser(t)
	url := servePlayground(t)

	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	matrix := func(args engine.Input) *interop.Matrix {
		m, err := interop.Options{Args: args}.Decide(context.Background(), cat)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	native := func(m *interop.Matrix, producer, platform, consumer string) interop.Cell {
		col := slices.Index(m.Consumers, consumer)
		for _, r := range m.Rows {
			if r.Producer == producer && r.Array.Platform == platform && col >= 0 {
				return r.Cells[col]
			}
		}
		t.Fatalf("the native matrix has no %s %s into %s", producer, platform, consumer)
		return interop.Cell{}
	}
	torch := ""
	m := matrix(nil)
	for _, c := range m.Consumers {
		if strings.HasPrefix(c, "torch@") {
			torch = c
		}
	}
	seed := native(m, "jax@v3", "gpu <unknown>", torch)
	if seed.Error == nil {
		t.Fatalf("natively, the seed's array into %s raises nothing: %+v", torch, seed)
	}
	wantAnswer := fmt.Sprintf("torch.from_dlpack(x) raises %s: %s", seed.Error.Type, seed.Error.Message)
	report := map[string]any{}

	for _, vp := range []struct {
		name string
		w, h int64
	}{{"1280x720", 1280, 720}, {"390x844", 390, 844}} {
		t.Run(vp.name, func(t *testing.T) {
			q := coldTab(t, ctx, vp.w, vp.h, 1)
			q.open(url)
			q.waitFor("the answer", fmt.Sprintf(`document.querySelector('[data-testid=answer]')?.innerText.includes(%q)`, wantAnswer))
			if y := eval[float64](q, `scrollY`); y != 0 {
				t.Errorf("the page opened scrolled to %.0f", y)
			}
			for _, sel := range []string{"[data-testid=answer]", "[data-testid=answer-rule]", "[data-testid=q-consumer]"} {
				if r := q.rect(sel); !r.inView() {
					t.Errorf("at %s %s is at %.0f-%.0f px down, %.0f-%.0f across; want it on the first screen", vp.name, sel, r.Top, r.Bottom, r.Left, r.Right)
				}
			}
			step := seed.Decider()
			if s := q.text("answer-step"); !strings.Contains(s, "rule "+step.Decision.Rule+" of jax@v3") || !strings.Contains(s, "__dlpack_device__") {
				t.Errorf("under the answer: %q, want the deciding step, rule %s of jax@v3's __dlpack_device__", s, step.Decision.Rule)
			}
			q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
			q.screenshot("30-question-" + vp.name + ".png")
			q.axe(vp.name + ": the question answered")

			// The rule's button opens the step: its rule set, its input, the
			// decision, and the trace's fix for an unknown platform.
			q.run("the rule of the answer", chromedp.Click(chromedp.CSS("[data-testid=answer-rule]")))
			q.wantDecision("the answer's step", step.Decision.Rule, "<unknown>")
			fix := q.text("markers-tried")
			for _, want := range []string{"none of the 3 markers gpu_markers tries, in order: cuda, rocm, oneapi", "add a row for it to gpu_markers", "rules.yaml:"} {
				if !strings.Contains(fix, want) {
					t.Errorf("the trace says %q; want it to say %q", fix, want)
				}
			}
			if row := q.text("markers-fix"); !strings.HasPrefix(row, "      - {marker: ") {
				t.Errorf("the row to add reads %q, want it indented as gpu_markers' rows are", row)
			}

			// The grid's cell of the same exchange: its steps in view, the
			// cell marked opened, not as a hovered one is.
			cell := `[data-testid=interop-cell][data-producer="jax@v3"][data-platform="gpu <unknown>"][data-consumer="` + torch + `"] button`
			q.waitFor("the grid", `document.querySelectorAll('[data-testid=interop-cell]').length > 0`)
			q.run("opening the seed's cell", chromedp.Click(chromedp.CSS(cell)))
			q.waitFor("the steps", `document.querySelector('[data-testid=interop-steps]').innerText.includes('decided the outcome')`)
			if r := q.rect("[data-testid=interop-steps]"); !r.inView() {
				t.Errorf("at %s the opened cell's steps are at %.0f-%.0f px down; want them in the viewport", vp.name, r.Top, r.Bottom)
			}
			if r := q.rect(cell); r.Bottom <= 0 || r.Top >= r.ViewHeight {
				t.Errorf("at %s the opened cell is at %.0f-%.0f px down, out of view", vp.name, r.Top, r.Bottom)
			}
			look := eval[struct{ Opened, Plain string }](q, `(() => {
				const o = document.querySelector('button.cell[aria-current=true]');
				const p = document.querySelector('button.cell:not([aria-current])');
				return {Opened: getComputedStyle(o).boxShadow + '|' + getComputedStyle(o, '::before').content, Plain: getComputedStyle(p).boxShadow + '|' + getComputedStyle(p, '::before').content};
			})()`)
			if look.Opened == look.Plain || !strings.Contains(look.Opened, "opened") {
				t.Errorf("the opened cell looks like any other (%q, others %q); want a frame and a word of its own", look.Opened, look.Plain)
			}
			q.screenshot("31-cell-opened-" + vp.name + ".png")
			q.axe(vp.name + ": a grid cell opened")

			// Escape puts the steps away and gives the focus back to the cell.
			q.run("Escape", chromedp.Focus(chromedp.CSS(cell)), chromedp.KeyEvent(kb.Escape))
			if got := eval[string](q, `document.querySelector('[data-testid=interop-steps]').innerText.trim() + '|' + (document.activeElement.closest('td')?.dataset.consumer ?? '')`); got != "|"+torch {
				t.Errorf("after Escape the steps and the focus are %q, want no steps and the cell focused", got)
			}

			if vp.name == "390x844" {
				small := eval[[]string](q, `[...document.querySelectorAll('button, select, input, [role=tab], summary, a[href]')].filter((e) => {
					const r = e.getBoundingClientRect();
					return r.width > 0 && r.height > 0 && !e.closest('[hidden]') && getComputedStyle(e).visibility !== 'hidden' && (r.width < 24 || r.height < 24);
				}).map((e) => (e.dataset.testid || e.className || e.tagName) + ' ' + Math.round(e.getBoundingClientRect().width) + 'x' + Math.round(e.getBoundingClientRect().height))`)
				if len(small) > 0 {
					t.Errorf("at 390x844 %d controls are under 24 px each way (WCAG 2.5.8): %v", len(small), small[:min(len(small), 10)])
				}
			}
		})
	}

	t.Run("copy=True", func(t *testing.T) {
		q := newTab(t, ctx)
		q.open(url)
		q.waitFor("the answer", `!!document.querySelector('[data-testid=q-copy]')`)
		eval[bool](q, `(() => { const s = document.querySelector('[data-testid=q-copy]'); s.value = 'true'; return s.dispatchEvent(new Event('change')); })()`)
		want := native(matrix(engine.Input{"copy": true}), "jax@v3", "gpu <unknown>", torch)
		got := eval[struct{ Outcome, Text string }](q, `({Outcome: document.querySelector('[data-testid=answer]').dataset.outcome, Text: document.querySelector('[data-testid=answer]').innerText})`)
		if got.Outcome != string(want.Outcome) || want.Error != nil && !strings.Contains(got.Text, "torch.from_dlpack(x, copy=True) raises "+want.Error.Type) {
			t.Errorf("with copy=True the answer is %+v; natively the exchange is %s %v", got, want.Outcome, want.Error)
		}
		// An older version of the producer: jax@v1.1's array, as natively.
		eval[bool](q, `(() => { const s = document.querySelector('[data-testid=q-producer]'); s.value = 'jax@v1.1'; return s.dispatchEvent(new Event('change')); })()`)
		eval[bool](q, `(() => { const s = document.querySelector('[data-testid=q-array]'); s.value = [...s.options].find((o) => o.text.includes('<unknown>')).value; return s.dispatchEvent(new Event('change')); })()`)
		mo, err := interop.Options{Producers: []string{"jax@v1.1"}, Args: engine.Input{"copy": true}}.Decide(context.Background(), cat)
		if err != nil {
			t.Fatal(err)
		}
		old := native(mo, "jax@v1.1", "gpu <unknown>", torch)
		if got := eval[string](q, `document.querySelector('[data-testid=answer]').dataset.outcome`); got != string(old.Outcome) {
			t.Errorf("jax@v1.1's unknown platform into torch with copy=True: the page answers %s, natively %s", got, old.Outcome)
		}

		// The grid's filter: exceptions only leaves no in-place cell showing.
		q.waitFor("the grid", `!!document.querySelector('[data-testid=interop-filter]')`)
		eval[bool](q, `(() => { const s = document.querySelector('[data-testid=interop-filter]'); s.value = 'errors'; return s.dispatchEvent(new Event('change')); })()`)
		if n := eval[int](q, `[...document.querySelectorAll('[data-testid=interop-cell]')].filter((td) => td.dataset.kind !== 'error' && td.closest('tr:not([hidden])') && getComputedStyle(td.querySelector('button')).visibility !== 'hidden').length`); n != 0 {
			t.Errorf("with exceptions only, %d cells that are no exception still show", n)
		}
		q.axe("the grid, exceptions only")
	})

	t.Run("small faults", func(t *testing.T) {
		q := newTab(t, ctx)
		q.run("a 1280x720 viewport", chromedp.EmulateViewport(1280, 720))
		q.open(url)
		q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")

		// Two megabytes pasted, then Ctrl+A and a key: the key replaces them.
		q.paste("input-platform_version", strings.Repeat("cuda ", 2<<20/5))
		q.waitFor("the 2 MiB message", `document.querySelector('[data-testid=input-message]').innerText.includes('the input is 2.0 MiB')`)
		q.run("Ctrl+A, then typing", chromedp.Focus(`[data-testid=input-platform_version]`),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.KeyEvent("rocm 6"))
		q.wantDecision("the typed version", "gpu", "(kDLROCM, 0)")
		if got := eval[string](q, `JSON.parse(document.querySelector('[data-testid=input-json]').value).platform_version`); got != "rocm 6" {
			t.Errorf("after Ctrl+A and typing, platform_version is %.40q, want the typed \"rocm 6\"", got)
		}

		// The tests list is one Tab stop; the arrow keys move in it.
		q.waitForTests()
		stops := eval[int](q, `[...document.querySelectorAll('[data-testid=tests-list] button')].filter((b) => b.tabIndex >= 0).length`)
		if stops != 1 {
			t.Errorf("the tests list has %d Tab stops, want one", stops)
		}
		q.run("ArrowDown in the tests list", chromedp.Focus(`[data-testid=tests-list] button[tabindex="0"]`), chromedp.KeyEvent(kb.ArrowDown))
		if i := eval[int](q, `[...document.querySelectorAll('[data-testid=tests-list] li')].indexOf(document.activeElement.closest('li'))`); i != 1 {
			t.Errorf("ArrowDown from the first case focused case %d, want the second", i)
		}

		// Escape closes a message.
		eval[bool](q, `(() => { const s = document.querySelector('[data-testid=examples]'); s.value = 'rocm-pinned'; return s.dispatchEvent(new Event('change')); })()`)
		q.waitFor("the example's message", `!document.querySelector('[data-testid=message]').hidden`)
		q.run("Escape", chromedp.KeyEvent(kb.Escape))
		if !eval[bool](q, `document.querySelector('[data-testid=message]').hidden`) {
			t.Errorf("Escape left the message open")
		}

		// An error on the deciding rule's own line: its number reads.
		q.paste("input-platform_version", "<unknown>")
		q.wantDecision("the seed's rule again", "gpu-unknown-platform", "<unknown>")
		q.typeInto("editor-rules.yaml", "when: platform == 'gpu' && gpu_matches.size() == 0", true, " &&")
		q.waitFor("the error on the deciding line", `!!document.querySelector('[data-testid=editors] .gl.is-err.is-hit')`)
		if c := q.contrast("[data-testid=editors] .gl.is-err.is-hit"); c < 4.5 {
			t.Errorf("the broken deciding line's number has contrast %.2f:1, want at least 4.5:1", c)
		}
		q.screenshot("32-error-on-deciding-line.png")
		q.axe("an error on the deciding line")
	})

	t.Run("cold load", func(t *testing.T) {
		load, _ := os.ReadFile("/proc/loadavg")
		report["loadavg"] = strings.TrimSpace(string(load))
		for _, rate := range []float64{1, 4} {
			var firsts, engines, answers, longest []float64
			over := 0
			for i := 0; i < *coldLoads; i++ {
				// Each load in a tab of its own, closed after it: the load
				// before does not run beside it.
				tab, closeTab := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
				q := coldTabOf(t, page{t, tab}, 1280, 720, rate)
				q.open(url)
				q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
				q.waitFor("the answer", fmt.Sprintf(`document.querySelector('[data-testid=answer]')?.innerText.includes(%q)`, wantAnswer))
				tm := q.timings()
				// The first decision is the page's own engine's (first.js), and
				// it agrees with the server's (rules.json "first").
				if n := q.decisionsBeforeEngine(); n != 1 {
					t.Errorf("%gx, load %d: %d decisions shown up to the engine's first at %.0f ms; want the engine's the first", rate, i+1, n, tm.EngineCold)
				}
				if by := eval[string](q, `document.querySelector('[data-testid=decision]').dataset.by + (document.querySelector('[data-testid=decision]').dataset.disagreed ?? '')`); by != "page" {
					t.Errorf("%gx, load %d: after the engine's first decision the panel says %q, want the page's decision, agreeing with the server's", rate, i+1, by)
				}
				// The tests compile when the page is idle: wait for them, so
				// that their work is counted among the long tasks too.
				q.waitForTests()
				mt := q.mainThread()
				firsts, engines, answers, longest = append(firsts, tm.Cold), append(engines, tm.EngineCold), append(answers, tm.Marks["answer"]), append(longest, mt.Longest)
				over += mt.Over200
				closeTab()
				t.Logf("%gx, load %d: first paint %.0f ms; marks %s; the first decision's parts %s; long tasks after it %v; the page's parts %v", rate, i+1, mt.FirstPaint, marksLine(tm.Marks), tm.First, mt.Tasks, mt.Parts)
			}
			name := fmt.Sprintf("cold_%gx", rate)
			report[name] = map[string]any{"first_decision_ms": firsts, "answer_ms": answers, "longest_task_after_first_paint_ms": longest,
				"first_decision_median_ms": median(firsts), "answer_median_ms": median(answers),
				"engine_first_decision_ms": engines, "engine_first_decision_median_ms": median(engines)}
			t.Logf("cold at %gx CPU: first decision %v ms (median %.0f), the engine's %v ms (median %.0f), answer %v ms, longest main-thread task after first paint %v ms (load %s)",
				rate, firsts, median(firsts), engines, median(engines), answers, longest, report["loadavg"])
			// The page's work is the same on a loaded machine, but its time
			// is not: the figure is held to where the machine is quiet (a load
			// average under its CPUs), and recorded with the load everywhere.
			if rate == 1 && over > 0 {
				if quiet() {
					t.Errorf("%d main-thread tasks over 200 ms after the first paint, in %d cold loads; want none", over, *coldLoads)
				} else {
					t.Logf("%d main-thread tasks over 200 ms after the first paint, in %d cold loads, on a loaded machine (%s)", over, *coldLoads, report["loadavg"])
				}
			}
		}
	})

	mergeTimings(t, map[string]any{"first_screen": report})
}

// The cold loads of TestPlaygroundFirstScreen are a first visit's: in a
// browser context of its own, the page takes no code of the module from
// Chrome's code cache (the trace event wasm.Deserialize), which turning
// the network cache off does not turn off. New tabs of the browser's own
// profile take it after the first load (with the network cache off too,
// though not every time, which is why each cold load has a context of its
// own); with the network cache on they do, which shows that the trace
// sees the event at all (BENCHMARKS.md, "The playground's first screen,
// cold"). It checks the figures' method, in six loads that each start the
// compiler module, so it runs where figures are measured: with -loads
// above 1, as BENCHMARKS.md's commands ask (e2e/RATIONALE.md, "Why does
// the check that cold loads are cold run only with the figures?").
func TestPlaygroundColdLoadsAreCold(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	if *coldLoads < 2 {
		t.Skip("checks that the figures' cold loads are cold; runs with the figures, -loads 2 or more (BENCHMARKS.md)")
	}
	ctx := browser(t)
	url := servePlayground(t)
	reused := 0
	for i := 0; i < 3; i++ {
		fresh, closeFresh := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
		if n := deserialized(coldTabOf(t, page{t, fresh}, 1280, 720, 1), url); n > 0 {
			t.Errorf("load %d, in a browser context of its own, took %d pieces of the module's code from the code cache; want a first visit's load", i+1, n)
		}
		closeFresh()
		tab, closeTab := chromedp.NewContext(ctx)
		if deserialized(page{t, tab}, url) > 0 {
			reused++
		}
		closeTab()
	}
	t.Logf("in the browser's own profile, %d of 3 loads, each in a new tab, took the module's code from the code cache", reused)
	if reused == 0 {
		t.Errorf("no load in the browser's own profile took the module's code from the code cache either: the trace does not show it, and the check above cannot tell a cold load")
	}
}

// deserialized opens url in q, traced (DevTools' Tracing, category
// v8.wasm), until the tests have run, and counts the module's code V8
// took from the code cache.
func deserialized(q page, url string) int {
	q.t.Helper()
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	chromedp.Listen(q.ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			defer mu.Unlock()
			for _, v := range e.Value {
				if b, _ := json.Marshal(v); bytes.Contains(b, []byte(`"name":"wasm.Deserialize"`)) {
					n++
				}
			}
		case *tracing.EventTracingComplete:
			close(done)
		}
	})
	tracer := func(start bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			if start {
				_, err = cdp.Call(ctx, tg, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
					TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{"v8.wasm"}}})
			} else {
				_, err = cdp.Call(ctx, tg, tracing.End, cdp.Empty{})
			}
			return err
		})
	}
	q.run("starting a trace", tracer(true))
	q.open(url)
	q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
	// The tests start the compiler module, and Chrome keeps a module's code
	// once it has run it a while: V8 writes its code cache when enough
	// has been optimized, then waits (wasm_caching_timeout_ms, 2 s) for
	// more. The decision module is too small to reach that threshold, so
	// the compiler module is the one whose cache this checks.
	q.waitForTests()
	time.Sleep(3 * time.Second)
	q.run("ending the trace", tracer(false))
	select {
	case <-done:
	case <-time.After(testenv.Patience(q.t)):
		q.t.Fatal("the trace did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	return n
}

// mergeTimings writes figures into testout/playground/timings.json,
// keeping the figures there of the other browser tests.
func mergeTimings(t *testing.T, figures map[string]any) {
	t.Helper()
	path := filepath.Join(testOut, "timings.json")
	all := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		json.Unmarshal(data, &all)
	}
	for k, v := range figures {
		all[k] = v
	}
	data, _ := json.MarshalIndent(all, "", "  ")
	if err := os.MkdirAll(testOut, 0o755); err != nil {
		t.Error(err)
		return
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Error(err)
	}
}

// quiet says whether the machine's load average over the last minute is
// under its number of CPUs.
func quiet() bool {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return false
	}
	var one float64
	if _, err := fmt.Sscan(string(data), &one); err != nil {
		return false
	}
	return one < float64(runtime.NumCPU())
}

// marksLine is the page's marks in the order they came, each "name@ms".
func marksLine(marks map[string]float64) string {
	names := slices.Collect(maps.Keys(marks))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(marks[a], marks[b]) })
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, " %s@%.0f", n, marks[n])
	}
	return strings.TrimSpace(b.String())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
