package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/rules"
)

// What an opened cell says besides its steps: the fix of a refusal
// ("Fix: x.contiguous() → in place", the fix copyable), how the consumer
// reads the array (by x.__dlpack__() or the C exchange API) and what the
// other way would come to, and a silent difference drawn as a warning,
// not as an exception. TestPlaygroundInteropFix sets these fields in a
// few cells of the served interop.json (injectCells), whatever the rules'
// matrix holds yet, and reads what the page makes of them.

// cellAt names one cell of interop.json: a row's producer, platform and
// memory, and a consumer.
type cellAt struct{ producer, platform, memory, consumer string }

// injectCells serves h, with the cells of interop.json that set names
// changed: each field set replaces the cell's, and a field set to nil is
// taken out of it.
func injectCells(t *testing.T, h http.Handler, set map[cellAt]map[string]any) http.Handler {
	t.Helper()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/interop.json" {
			h.ServeHTTP(w, req)
			return
		}
		inner := req.Clone(req.Context())
		inner.Header.Del("Accept-Encoding")
		inner.Header.Del("If-None-Match")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, inner)
		var doc struct {
			Consumers []string         `json:"consumers"`
			Rows      []map[string]any `json:"rows"`
		}
		var whole map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Errorf("interop.json: %v", err)
		}
		json.Unmarshal(rec.Body.Bytes(), &whole)
		found := 0
		for at, fields := range set {
			for _, row := range doc.Rows {
				if row["producer"] != at.producer || row["platform"] != at.platform || row["memory"] != at.memory || row["older"] == true {
					continue
				}
				for i, c := range doc.Consumers {
					if c != at.consumer {
						continue
					}
					cell := row["cells"].([]any)[i].(map[string]any)
					for k, v := range fields {
						if v == nil {
							delete(cell, k)
						} else {
							cell[k] = v
						}
					}
					found++
				}
			}
		}
		if found != len(set) {
			t.Errorf("interop.json has %d of the %d cells to change", found, len(set))
		}
		whole["rows"] = doc.Rows
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(whole)
	})
}

// The cells TestPlaygroundInteropFix changes.
var (
	// The seed's exchange keeps its exception, with a fix.
	fixSeed = cellAt{"jax@v3", "gpu <unknown>", "device", "torch@v3"}
	// A refusal with no fix, in a document whose other cells have one.
	fixNone = cellAt{"jax@v3", "gpu <unknown>", "device", "numpy@v2"}
	// A silent difference with no fix.
	fixSilentNone = cellAt{"torch@v3", "cpu", "pinned", "numpy@v2"}
	// A torch array numpy reads with the sign of every value flipped.
	fixSilent = cellAt{"torch@v3", "cpu", "-", "numpy@v2"}
	// An exchange by the C exchange API, which by x.__dlpack__() copies.
	fixCLane = cellAt{"numpy@v2", "(kDLCPU, 0)", "-", "torch@v3"}
	// A cell that does not say its lane, as interop.json did before.
	fixNoLane = cellAt{"jax@v3", "cpu cpu", "device", "torch@v3"}
)

const silentMessage = "the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say: numpy reads every value with its sign flipped, and nothing raises"

func fixCells() map[cellAt]map[string]any {
	return map[cellAt]map[string]any{
		fixSeed: {"remedy": map[string]any{"kind": "contiguous", "fix": "x.contiguous()", "outcome": "in_place"}},
		fixNone: {"remedy": nil},
		fixSilent: {"outcome": "error", "device": nil, "short": "SilentlyDifferent: the capsule holds…",
			"error":  map[string]any{"type": "SilentlyDifferent", "message": silentMessage},
			"remedy": map[string]any{"kind": "resolve_neg", "fix": "x.resolve_neg()", "outcome": "in_place"}},
		fixSilentNone: {"outcome": "error", "device": nil, "short": "SilentlyDifferent: the capsule holds…", "remedy": nil,
			"error": map[string]any{"type": "SilentlyDifferent", "message": silentMessage}},
		fixCLane:  {"lane": "c_exchange_api", "other_lane": "consumer_copy"},
		fixNoLane: {"lane": nil, "other_lane": nil},
	}
}

// selector is the grid's button of the cell.
func (c cellAt) selector() string {
	return fmt.Sprintf(`[data-testid=interop-cell][data-producer=%q][data-platform=%q][data-memory=%q][data-consumer=%q] button`, c.producer, c.platform, c.memory, c.consumer)
}

// opened is what the opened cell's sheet says: its fix, the fix's code,
// how the consumer reads the array, its heading, and the whole sheet.
type opened struct{ Fix, Code, Lane, Heading, Text string }

// openCell clicks a cell of the grid and reads its sheet.
func (p page) openCell(c cellAt) opened {
	p.t.Helper()
	p.run("opening "+c.producer+" "+c.platform+" into "+c.consumer, chromedp.Click(chromedp.CSS(c.selector())))
	p.waitFor("the opened cell's steps", `document.querySelector('[data-testid=interop-steps]').innerText.includes('decided the outcome')`)
	o := eval[opened](p, `(() => {
		const s = document.querySelector('[data-testid=interop-steps]');
		const text = (id) => s.querySelector('[data-testid=' + id + ']')?.innerText ?? '';
		return {Fix: text('interop-fix'), Code: text('interop-fix-code'), Lane: text('interop-lane'), Heading: s.querySelector('h3')?.innerText ?? '', Text: s.innerText};
	})()`)
	if strings.Contains(o.Text, "null") || strings.Contains(o.Text, "undefined") {
		p.t.Errorf("the opened cell's sheet reads %q: a field the cell leaves out is drawn as a word", o.Text)
	}
	return o
}

func TestPlaygroundInteropFix(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	ctx := browser(t)
	url := serveSite(t, injectCells(t, decisionHandler(t, true), fixCells()))
	p := page{t, ctx}
	p.open(url)
	p.waitFor("the grid", `document.querySelectorAll('[data-testid=interop-cell]').length > 0`)

	// In the grid: the refusal keeps its exception; the silent difference
	// is a warning, in words, a mark and a colour of its own.
	type drawn struct{ Text, Kind, Class, Background, Title string }
	look := func(c cellAt) drawn {
		return eval[drawn](p, fmt.Sprintf(`(() => { const b = document.querySelector(%q), td = b.closest('td');
			return {Text: b.innerText, Kind: td.dataset.kind, Class: td.className, Background: getComputedStyle(td).backgroundColor, Title: b.title}; })()`, c.selector()))
	}
	seed, silent := look(fixSeed), look(fixSilent)
	if seed.Kind != "error" || !strings.Contains(seed.Text, "BufferError") || !strings.Contains(seed.Text, "✗") || !strings.Contains(seed.Title, "Fix: x.contiguous()") {
		t.Errorf("the seed's cell, with a fix, is drawn %+v; want its exception, BufferError, marked ✗, and the fix in its title", seed)
	}
	if silent.Kind != "silent" || !strings.Contains(silent.Class, "o-silent") || !strings.HasPrefix(silent.Text, "⚠") ||
		!strings.Contains(silent.Text, "silently different") || strings.Contains(silent.Text, "SilentlyDifferent") {
		t.Errorf("torch's cpu array into numpy, silently different, is drawn %+v; want a warning: ⚠, silently different in words, not an exception's type", silent)
	}
	if silent.Background == seed.Background || silent.Background == look(fixCLane).Background {
		t.Errorf("the silent difference's cell is %s, an exception's %s: want a colour of its own", silent.Background, seed.Background)
	}
	if legend := p.text("interop"); !strings.Contains(legend, "silently different: the consumer reads other values") {
		t.Errorf("the legend does not say what a silent difference is: %q", legend)
	}
	// The filters tell a silent difference from an exception.
	visible := func(filter string) []string {
		return eval[[]string](p, fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid=interop-filter]'); s.value = %q; s.dispatchEvent(new Event('change'));
			return [...new Set([...document.querySelectorAll('[data-testid=interop-cell]')].filter((td) => td.closest('tr:not([hidden])') && getComputedStyle(td.querySelector('button')).visibility !== 'hidden').map((td) => td.dataset.kind))].sort(); })()`, filter))
	}
	if kinds := visible("silent"); len(kinds) != 1 || kinds[0] != "silent" {
		t.Errorf("the filter of silent differences shows cells of %v, want silent ones only", kinds)
	}
	eval[bool](p, fmt.Sprintf(`(document.querySelector(%q).scrollIntoView({block: 'center'}), new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true)))))`, fixSilent.selector()))
	p.screenshot("42-interop-silent.png")
	if kinds := visible("errors"); len(kinds) != 1 || kinds[0] != "error" {
		t.Errorf("the filter of exceptions shows cells of %v, want exceptions only", kinds)
	}
	if kinds := visible("answers"); strings.Contains(strings.Join(kinds, " "), "silent") {
		t.Errorf("the filter of crossings shows cells of %v; a silent difference is no crossing to rely on", kinds)
	}
	visible("all")

	// Opened: the fix, copyable, and the lane.
	got := p.openCell(fixSeed)
	if got.Fix != "Fix: x.contiguous() → in place Copy" || got.Code != "x.contiguous()" {
		t.Errorf("the seed's cell opened says %+v; want Fix: x.contiguous() → in place, the fix in code, and a Copy button", got)
	}
	if got.Lane != "torch asks for jax's array by x.__dlpack__()." {
		t.Errorf("the seed's cell says of its lane %q", got.Lane)
	}
	// Copy writes the fix to the clipboard; where the page may not, it
	// selects the fix for the person to copy.
	eval[bool](p, `(navigator.clipboard.writeText = (text) => { window.__copied = text; return Promise.resolve(); }, true)`)
	p.run("Copy", chromedp.Click(chromedp.CSS(`[data-testid=interop-fix-copy]`)))
	p.waitFor("the fix copied", `window.__copied === 'x.contiguous()' && document.querySelector('[data-testid=interop-fix]').innerText.includes('copied')`)
	eval[bool](p, `(navigator.clipboard.writeText = () => Promise.reject(new DOMException('denied', 'NotAllowedError')), getSelection().removeAllRanges(), true)`)
	p.run("Copy, the clipboard refused", chromedp.Click(chromedp.CSS(`[data-testid=interop-fix-copy]`)))
	p.waitFor("the fix selected", `getSelection().toString() === 'x.contiguous()' && document.querySelector('[data-testid=interop-fix]').innerText.includes('press Ctrl+C')`)

	if got := p.openCell(fixSilent); got.Fix != "Fix: x.resolve_neg() → in place Copy" || !strings.Contains(got.Heading, "silently different, nothing raises: "+silentMessage) ||
		got.Lane != "numpy reads torch's array by x.__dlpack__()." {
		t.Errorf("the silent difference opened says %+v; want it named silently different, and the fix x.resolve_neg()", got)
	}
	if got := p.openCell(fixNone); got.Fix != "No fix the rules know of makes this exchange cross." || got.Code != "" {
		t.Errorf("a refusal with no fix, opened, says %+v; want it to say no fix is known", got)
	}
	if got := p.openCell(fixSilentNone); got.Fix != "No fix the rules know of makes the consumer read the producer's values." {
		t.Errorf("a silent difference with no fix, opened, says %+v; want it to say no fix is known", got)
	}
	if got := p.openCell(fixCLane); got.Fix != "" ||
		got.Lane != "torch reads numpy's array by the C exchange API (type(x).__dlpack_c_exchange_api__); by x.__dlpack__() instead, it would be a copy, made by torch." {
		t.Errorf("the C exchange API's cell opened says %+v; want its lane and what x.__dlpack__() would do", got)
	}
	if got := p.openCell(fixNoLane); got.Fix != "" || got.Lane != "" || !strings.Contains(got.Heading, "in place") {
		t.Errorf("a cell with no lane, opened, says %+v; want its outcome and no lane", got)
	}
	p.screenshot("40-interop-fix.png")
	p.axe("a cell with a fix opened")

	// The question on the first screen gives the fix too.
	if fix := p.text("answer-fix"); !strings.HasPrefix(fix, "Fix: x.contiguous() → in place") {
		t.Errorf("the question's answer gives the fix %q, want x.contiguous()", fix)
	}
	answer := eval[string](p, `(() => {
		const pick = (id, pred) => { const s = document.querySelector('[data-testid=' + id + ']'); s.value = [...s.options].find((o) => pred(o.textContent, o.value)).value; s.dispatchEvent(new Event('change')); };
		pick('q-producer', (text, v) => v === 'torch@v3');
		pick('q-array', (text) => text === 'cpu, - memory');
		pick('q-consumer', (text) => text.endsWith('(numpy@v2)'));
		return document.querySelector('[data-testid=answer]').innerText + '|' + (document.querySelector('[data-testid=answer-fix]')?.innerText ?? '');
	})()`)
	if !strings.HasPrefix(answer, "Silently different: numpy.from_dlpack(x) raises nothing") || !strings.Contains(answer, "|Fix: x.resolve_neg() → in place") {
		t.Errorf("the question, torch's cpu array into numpy, answers %q; want a silent difference and its fix", answer)
	}

	t.Run("a phone's width", func(t *testing.T) {
		q := newTab(t, ctx)
		q.run("a 390x844 viewport", chromedp.EmulateViewport(390, 844))
		q.open(url)
		q.waitFor("the grid", `document.querySelectorAll('[data-testid=interop-cell]').length > 0`)
		got := q.openCell(fixSeed)
		if got.Code != "x.contiguous()" {
			t.Errorf("at 390x844 the opened seed's cell says %+v, want its fix", got)
		}
		for _, sel := range []string{"[data-testid=interop-fix]", "[data-testid=interop-fix-copy]", "[data-testid=interop-lane]"} {
			if r := q.rect(sel); !r.inView() {
				t.Errorf("at 390x844 %s is at %.0f-%.0f px down, %.0f-%.0f across; want it in view", sel, r.Top, r.Bottom, r.Left, r.Right)
			}
		}
		if w := eval[[]int](q, `[document.scrollingElement.scrollWidth, innerWidth]`); w[0] > w[1] {
			t.Errorf("at 390 px wide the page scrolls %d px wide, want no sideways scroll", w[0])
		}
		q.screenshot("41-interop-fix-phone.png")
		q.axe("a cell with a fix opened, at a phone's width")
	})
}

// TestPlaygroundInteropRealFix opens the seed's cell of the real matrix,
// a JAX GPU array of an unknown platform into torch, as `dlroute
// playground` serves it, and reads the fix the native matrix gives it,
// in the opened cell and in the question's answer.
func TestPlaygroundInteropRealFix(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := interop.Options{}.Decide(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	seed := cellAt{"jax@v3", "gpu <unknown>", "device", "torch@v3"}
	var want *interop.Remedy
	silent := false // whether any cell of the grid reads silently different
	col := slices.Index(m.Consumers, seed.consumer)
	for _, r := range m.Rows {
		if r.Producer == seed.producer && r.Array.Platform == seed.platform && r.Array.Memory == seed.memory && col >= 0 {
			want = r.Cells[col].Remedy
		}
		for _, c := range r.Cells {
			silent = silent || c.Error != nil && c.Error.Type == interop.SilentlyDifferent
		}
	}
	if want == nil {
		t.Fatalf("the native matrix has no fix for %s %s into %s; this test reads one", seed.producer, seed.platform, seed.consumer)
	}
	outcome := map[interop.Outcome]string{interop.InPlace: "in place", interop.ConsumerCopy: "a copy, made by torch", interop.ProducerCopy: "a copy, made by jax", interop.BothCopy: "two copies, one made by jax and one by torch"}[want.Outcome]
	line := "Fix: " + want.Fix + " → " + outcome

	ctx := browser(t)
	p := page{t, ctx}
	p.open(servePlayground(t))
	p.waitFor("the grid", `document.querySelectorAll('[data-testid=interop-cell]').length > 0`)
	// The legend and the filters name silent differences where the grid
	// has one.
	offered := eval[[]bool](p, `[[...document.querySelectorAll('[data-testid=interop-filter] option')].some((o) => o.value === 'silent'), document.querySelector('.interop-legend').innerText.includes('silently different: ')]`)
	if offered[0] != silent || offered[1] != silent {
		t.Errorf("the grid's filter of silent differences: %v, its legend's: %v; want them where the native matrix has one (%v)", offered[0], offered[1], silent)
	}
	if got := p.text("answer-fix"); !strings.HasPrefix(got, line) {
		t.Errorf("the question's answer gives the fix %q; the native matrix's is %q", got, line)
	}
	got := p.openCell(seed)
	if got.Code != want.Fix || !strings.HasPrefix(got.Fix, line) {
		t.Errorf("the seed's cell opened says %+v; the native matrix's fix is %q", got, line)
	}
	if got.Lane != "torch asks for jax's array by x.__dlpack__()." {
		t.Errorf("the seed's cell says of its lane %q, want x.__dlpack__()", got.Lane)
	}

	// torch's CPU tensor into paddle, both of which ship the C exchange
	// API: the lane the native matrix gives the cell, in words.
	both := cellAt{"torch@v3", "cpu", "-", "paddle@v1"}
	var c interop.Cell
	for _, r := range m.Rows {
		if r.Producer == both.producer && r.Array.Platform == both.platform && r.Array.Memory == both.memory {
			c = r.Cells[slices.Index(m.Consumers, both.consumer)]
		}
	}
	ways := map[interop.Lane]string{interop.LaneDLPack: "x.__dlpack__()", interop.LaneCExchange: "the C exchange API (type(x).__dlpack_c_exchange_api__)"}
	verb := map[bool]string{true: "asks for", false: "reads"}[c.Outcome == interop.Raises && c.Error.Type != interop.SilentlyDifferent]
	lane := "paddle " + verb + " torch's array by " + ways[c.Lane]
	if c.OtherLane != "" {
		other := map[interop.Lane]interop.Lane{interop.LaneDLPack: interop.LaneCExchange, interop.LaneCExchange: interop.LaneDLPack}[c.Lane]
		lane += "; by " + ways[other] + " instead, it would be " + map[interop.Outcome]string{interop.InPlace: "in place", interop.ConsumerCopy: "a copy, made by paddle",
			interop.ProducerCopy: "a copy, made by torch", interop.BothCopy: "two copies, one made by torch and one by paddle", interop.Raises: "an exception"}[c.OtherLane]
	}
	if got := p.openCell(both); c.Lane == "" || got.Lane != lane+"." {
		t.Errorf("torch's CPU tensor into paddle, opened, says of its lane %q; the native matrix's is %q (%s, other %q)", got.Lane, lane+".", c.Lane, c.OtherLane)
	}
}
