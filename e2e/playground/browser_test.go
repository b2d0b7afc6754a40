package playground

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dlroute/dlroute/e2e/jstools"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/playground"
	"github.com/dlroute/dlroute/rules"
)

// The browser tests run `dlroute playground` (the binary of this
// checkout, dlroute_test.go) on a loopback port and drive
// the page in headless Chromium (Debian's chromium package; .ci/run
// installs it), as a person would: they type into the editors and the
// form, and read what the page shows by its data-testid attributes.
// Screenshots of the main states go to testout/playground/; the figures
// BENCHMARKS.md reports go to testout/playground/timings.json.

// testOut is where screenshots and timings go, under the repository root.
const testOut = "../../testout/playground"

// chromium finds the browser, or skips: only where it is absent.
func chromium(t *testing.T) string {
	t.Helper()
	testenv.Short(t, "the playground in a browser")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "chromium is not installed, so the playground's browser tests do not run (apt-get install -y chromium; .ci/run does)")
	return ""
}

// browser starts headless Chromium with a fresh profile (no cache: the
// first page load is cold) and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1440, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, testenv.Patience(t))
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// newTab opens another tab of the browser that ctx runs in, closed when t
// ends.
func newTab(t *testing.T, ctx context.Context) page {
	tab, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	return page{t, tab}
}

// page is a tab on the playground, with helpers that fail the test.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates JavaScript, awaiting a promise, and decodes its value.
func eval[T any](p page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		if len(js) > 300 {
			js = js[:300] + "..."
		}
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor waits until a JavaScript condition holds, for as long as the
// test may run.
func (p page) waitFor(what, cond string) {
	p.t.Helper()
	p.waitWithin(testenv.Patience(p.t), what, cond)
}

// waitWithin waits until a JavaScript condition holds, for up to d.
func (p page) waitWithin(d time.Duration, what, cond string) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for {
		_, err = chromedp.Run(p.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		// A navigation that ends while the poll runs takes its
		// JavaScript context with it (a busy machine made it so once,
		// in TestPlaygroundRulesetByRelease's second open): poll again,
		// in the new document, until the deadline.
		if err == nil || !contextGone(err) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		state, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`JSON.stringify(Object.fromEntries(['decision', 'problems', 'message', 'live', 'input-message', 'tests-summary'].map((id) => [id, document.querySelector('[data-testid=' + id + ']')?.innerText])))`))
		p.t.Fatalf("waiting for %s (%s): %v\npage: %s", what, cond, err, state)
	}
}

// contextGone is the error of a call into a JavaScript context that a
// navigation destroyed.
func contextGone(err error) bool {
	return strings.Contains(err.Error(), "Cannot find context with specified id") || strings.Contains(err.Error(), "Execution context was destroyed")
}

func (p page) text(testid string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`document.querySelector('[data-testid=%q]').innerText`, testid))
}

// typeInto puts the caret in a textarea or input, selecting the first
// occurrence of find (or after it, with after), and types keys there as
// key events: one input event per key, as a person makes.
func (p page) typeInto(testid, find string, after bool, keys string) {
	p.t.Helper()
	ok := eval[bool](p, fmt.Sprintf(`(() => {
		const el = document.querySelector('[data-testid=%q]');
		const i = el.value.indexOf(%q);
		if (i < 0) return false;
		el.focus();
		const end = i + %d;
		el.setSelectionRange(%t ? end : i, end);
		return true;
	})()`, testid, find, len(find), after))
	if !ok {
		p.t.Fatalf("%s holds no %q", testid, find)
	}
	p.run("typing into "+testid, chromedp.KeyEvent(keys))
}

// paste replaces a field's whole value at once, and fires the one input
// event a paste fires.
func (p page) paste(testid, value string) {
	p.t.Helper()
	eval[bool](p, fmt.Sprintf(`(() => {
		const el = document.querySelector('[data-testid=%q]');
		el.focus();
		el.value = %q;
		return el.dispatchEvent(new InputEvent('input', {inputType: 'insertFromPaste', bubbles: true}));
	})()`, testid, value))
}

func (p page) screenshot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(testOut, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(testOut, name), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// decision is what the decision panel says, and its data attributes.
func (p page) decision() (text, rule, state string) {
	p.t.Helper()
	d := eval[struct{ Text, Rule, State string }](p, `(() => { const d = document.querySelector('[data-testid=decision]'); return {Text: d.querySelector('[data-testid=verdict]')?.innerText ?? '', Rule: d.dataset.rule ?? '', State: d.dataset.state}; })()`)
	return d.Text, d.Rule, d.State
}

func (p page) wantDecision(what, rule, contains string) {
	p.t.Helper()
	p.wantDecisionWithin(testenv.Patience(p.t), what, rule, contains)
}

func (p page) wantDecisionWithin(d time.Duration, what, rule, contains string) {
	p.t.Helper()
	p.waitWithin(d, what, fmt.Sprintf(`(() => { const d = document.querySelector('[data-testid=decision]'); return d.dataset.state === 'fresh' && d.dataset.rule === %q && d.innerText.includes(%q); })()`, rule, contains))
}

// timings are the page's performance measures (window.dlroute.timings).
type timings struct {
	Cold       float64     `json:"cold"`
	EngineCold float64     `json:"engineCold"`
	Edits      []float64   `json:"edits"`
	RulesEdits []float64   `json:"rulesEdits"`
	InputEdits []float64   `json:"inputEdits"`
	EditParts  []editParts `json:"editParts"`
	// First is where the first decision's time went, after the page was
	// ready: its parts as an edit's.
	First editParts `json:"first"`
	Marks map[string]float64
	Wasm  struct {
		TransferSize    float64 `json:"transferSize"`
		EncodedBodySize float64 `json:"encodedBodySize"`
		DecodedBodySize float64 `json:"decodedBodySize"`
	} `json:"wasm"`
}

// editParts is where one change's time went (playground/timings.js
// markDecision).
type editParts struct {
	Kind                                                    string
	Ms, Waited, Decide, Rules, Explain, Worker, Show, Paint float64
}

// String is the parts in milliseconds, as the test logs show them.
func (e editParts) String() string {
	return fmt.Sprintf("waited %.0f, decide %.0f (rules %.0f, explain %.0f, worker %.0f), show %.0f, paint %.0f", e.Waited, e.Decide, e.Rules, e.Explain, e.Worker, e.Show, e.Paint)
}

// rulesEditParts summarises each part over the rules edits.
func (tm timings) rulesEditParts() map[string]map[string]float64 {
	parts := map[string][]float64{}
	for _, e := range tm.EditParts {
		if e.Kind != "rules" {
			continue
		}
		for name, v := range map[string]float64{"waited": e.Waited, "decide": e.Decide, "rules": e.Rules, "explain": e.Explain, "worker": e.Worker, "show": e.Show, "paint": e.Paint} {
			parts[name] = append(parts[name], v)
		}
	}
	out := map[string]map[string]float64{}
	for name, ms := range parts {
		out[name] = summarize(ms)
	}
	return out
}

func (p page) timings() timings {
	p.t.Helper()
	return eval[timings](p, `window.dlroute.timings()`)
}

// open navigates to url and waits for the page's first decision. The
// load event alone is not enough: under load the old document, or the new
// one before app.js ran, can still answer the first evaluation (CI saw
// window.dlroute undefined there), so it first waits for the new document
// and the page's API. The old document is marked before the navigation:
// a new one lacks the mark. Its address is not enough to tell them apart,
// since the page writes its state into the fragment once it has decided
// (link.js), and a first decision can now come before the test looks
// (CI saw the page's own fragment there). A navigation that changes only
// the fragment keeps the document, which reads the new link.
func (p page) open(url string) {
	p.t.Helper()
	old := eval[string](p, `(window.__dlrouteLeft = true, location.href)`)
	base := func(u string) string { b, _, _ := strings.Cut(u, "#"); return b }
	p.run("opening "+url, chromedp.Navigate(url))
	if strings.Contains(url, "#") && base(old) == base(url) {
		p.waitFor("the link at "+url, fmt.Sprintf(`location.href === new URL(%q, location.href).href && window.dlroute?.ready instanceof Promise`, url))
	} else {
		p.waitFor("the page's script at "+url, fmt.Sprintf(`!window.__dlrouteLeft && location.href.split('#')[0] === new URL(%q, location.href).href.split('#')[0] && window.dlroute?.ready instanceof Promise`, url))
	}
	eval[bool](p, `window.dlroute.ready.then(() => true)`)
}

// axe runs axe-core (pinned in e2e/jstools) over the page as it is
// now and fails the test for each violation, naming the page's state.
// The script goes in through DevTools' Runtime.evaluate, which the page's
// Content-Security-Policy does not govern, so the policy stays as served.
func (p page) axe(state string) {
	p.t.Helper()
	if !eval[bool](p, `typeof window.axe?.run === 'function'`) {
		src, err := os.ReadFile(jstools.Path(p.t, "axe-core/axe.min.js"))
		if err != nil {
			p.t.Fatal(err)
		}
		eval[bool](p, string(src)+"\n;typeof window.axe?.run === 'function'")
	}
	type violation struct {
		ID, Impact, Help string
		Nodes            []string
	}
	for _, v := range eval[[]violation](p, `axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations.map((v) => ({
		ID: v.id, Impact: v.impact ?? '', Help: v.help,
		Nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + (n.failureSummary ?? '').replaceAll('\n', ' ')),
	})))`) {
		p.t.Errorf("axe-core, %s: %s (%s): %s, on %d elements:\n\t%s", state, v.ID, v.Impact, v.Help, len(v.Nodes), strings.Join(v.Nodes, "\n\t"))
	}
}

// rect is an element's box in the viewport, as getBoundingClientRect
// gives it, with the viewport's size.
type rect struct {
	Top, Bottom, Left, Right float64
	ViewWidth, ViewHeight    float64
}

// inView says whether the box is wholly inside the viewport.
func (r rect) inView() bool {
	return r.Top >= 0 && r.Left >= 0 && r.Bottom <= r.ViewHeight && r.Right <= r.ViewWidth && r.Bottom > r.Top
}

func (p page) rect(selector string) rect {
	p.t.Helper()
	return eval[rect](p, fmt.Sprintf(`(() => {
		const r = document.querySelector(%q)?.getBoundingClientRect();
		return r ? {Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right, ViewWidth: innerWidth, ViewHeight: innerHeight} : {Top: -1, Bottom: -1, Left: -1, Right: -1, ViewWidth: innerWidth, ViewHeight: innerHeight};
	})()`, selector))
}

// tone is the hue an element's text is drawn in: "green", "red", or
// "grey" for neither.
func (p page) tone(selector string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`(() => {
		const [r, g, b] = getComputedStyle(document.querySelector(%q)).color.match(/[\d.]+/g).map(Number);
		return g > r + 40 && g > b + 20 ? 'green' : r > g + 40 && r > b + 40 ? 'red' : 'grey';
	})()`, selector))
}

// inkPixels counts the pixels of an element drawn about as dark as text
// (the page's ink is #1d232b), from a screenshot of the viewport cut to
// the element's box: an empty field has none.
func (p page) inkPixels(selector string) int {
	p.t.Helper()
	box := eval[struct{ X, Y, W, H, Scale float64 }](p, fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		el.scrollIntoView({block: 'nearest'});
		const r = el.getBoundingClientRect();
		return {X: r.left, Y: r.top, W: r.width, H: r.height, Scale: devicePixelRatio};
	})()`, selector))
	data, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		p.t.Fatal(err)
	}
	// Inside the border: the border is not text.
	at := func(v float64) int { return int(v * box.Scale) }
	in := image.Rect(at(box.X)+2, at(box.Y)+2, at(box.X+box.W)-2, at(box.Y+box.H)-2).Intersect(img.Bounds())
	n := 0
	for y := in.Min.Y; y < in.Max.Y; y++ {
		for x := in.Min.X; x < in.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if (299*r+587*g+114*b)/1000 < 0x5000 {
				n++
			}
		}
	}
	return n
}

// untar reads the page's download into a file system.
func untar(t *testing.T, b64 string) fstest.MapFS {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the download is not a tar archive: %v", err)
		}
		body, _ := io.ReadAll(tr)
		name, ok := strings.CutPrefix(h.Name, "rules/")
		if !ok {
			t.Errorf("the download holds %s, outside rules/", h.Name)
		}
		out[name] = &fstest.MapFile{Data: body, Mode: 0o644}
	}
}

// nativeLines is every test case of every embedded version as a
// `resolve --json` line, with what the native engine writes for it.
func nativeLines(t *testing.T) (refs, lines, want []string) {
	t.Helper()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range cat.RuleSets() {
		for _, c := range rs.Cases() {
			line, _ := json.Marshal(c.Input)
			d, err := rs.Resolve(context.Background(), c.Input)
			if err != nil {
				t.Fatalf("%s: case %s: %v", rs.Ref(), c.Name, err)
			}
			out, _ := d.MarshalJSON()
			refs, lines, want = append(refs, rs.Ref()), append(lines, string(line)), append(want, string(out))
		}
	}
	return refs, lines, want
}

// staticSite writes the site as `dlroute playground --static` does and
// serves it with the standard library's file server, a server that knows
// nothing of the playground, sending a file's precompressed .gz where
// there is one and the client accepts gzip, as nginx's gzip_static does.
func staticSite(t *testing.T) string {
	t.Helper()
	module, _, err := wasmbuild.Module(context.Background(), wasmbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := playground.WriteSite(dir, playground.Options{Rules: rules.FS, Source: "a static server", Module: module}); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gz := filepath.Join(dir, filepath.FromSlash(r.URL.Path)) + ".gz"
		if _, err := os.Stat(gz); err == nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			if ct := mime.TypeByExtension(path.Ext(r.URL.Path)); ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Vary", "Accept-Encoding")
			http.ServeFile(w, r, gz)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// filesIn is every <name>/<version>/<file> of a rules directory.
func filesIn(t *testing.T, fsys fs.FS) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.Count(p, "/") == 2 {
			out[p], err = fs.ReadFile(fsys, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
