package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/rules"
)

// TestPlaygroundInBrowser is the playground as a person uses it, one step
// after another in one browser: each step starts from where the last one
// left the page.
func TestPlaygroundInBrowser(t *testing.T) {
	ctx := browser(t)
	url := servePlayground(t)
	p := page{t, ctx}
	report := map[string]any{}

	// A fresh profile: nothing cached, so this load is cold.
	p.open(url)
	p.wantDecision("the seed's case", "gpu-unknown-platform", "Unknown GPU platform for __dlpack__: <unknown>")
	cold := p.timings()
	report["cold_first_decision_ms"] = cold.Cold
	report["cold_engine_first_decision_ms"] = cold.EngineCold
	report["cold_marks_ms"] = cold.Marks
	report["module_bytes"] = cold.Wasm.DecodedBodySize
	report["module_transfer_bytes"] = cold.Wasm.TransferSize
	report["module_encoded_bytes"] = cold.Wasm.EncodedBodySize
	t.Logf("cold load to first decision: %.0f ms; the engine's %.0f ms (marks %v); module %.0f bytes, %.0f transferred", cold.Cold, cold.EngineCold, cold.Marks, cold.Wasm.DecodedBodySize, cold.Wasm.TransferSize)
	first := eval[map[string]float64](p, `window.dlroute.timings().first`)
	report["cold_first_refresh_ms"] = first
	t.Logf("first refresh: %v", first)
	// The first decision is the page's own engine's (the decision
	// module, on the page's main thread, first.js), shown before the
	// page is built from rules.json; no server's decision comes before it.
	if cold.EngineCold <= 0 || cold.EngineCold > cold.Marks["page"] || p.decisionsBeforeEngine() != 1 {
		t.Errorf("the engine's first decision at %.0f ms, the page built at %.0f ms, %d decisions shown up to the engine's; want the engine's the first, before the page is built", cold.EngineCold, cold.Marks["page"], p.decisionsBeforeEngine())
	}
	if cold.Wasm.EncodedBodySize == 0 || cold.Wasm.EncodedBodySize >= cold.Wasm.DecodedBodySize {
		t.Errorf("the module came %.0f bytes encoded for %.0f decoded; want it gzip-compressed", cold.Wasm.EncodedBodySize, cold.Wasm.DecodedBodySize)
	}
	p.screenshot("01-seed.png")
	p.axe("the first page, a decision that is an exception")

	t.Run("values the decision did not need", func(t *testing.T) {
		// The seed's case is decided by gpu-unknown-platform: gpu_device,
		// which fails on an empty gpu_matches, is not read, so not an error.
		got := eval[struct{ Class, Text, DT string }](p, `(() => {
			const dd = document.querySelector('[data-testid=trace] dd[data-value=gpu_device]');
			return {Class: dd?.className ?? '(none)', Text: dd?.innerText ?? '', DT: dd?.previousElementSibling?.className ?? ''};
		})()`)
		if strings.Contains(got.Class, "err-text") || !strings.Contains(got.Class, "not-needed") || got.DT != "unused" || !strings.Contains(got.Text, "not needed") {
			t.Errorf("gpu_device in the trace: class %q (its name %q), %q; want it not needed, not an error", got.Class, got.DT, got.Text)
		}
		if n := eval[int](p, `document.querySelectorAll('[data-testid=trace] .err-text').length`); n != 0 {
			t.Errorf("the seed's trace shows %d errors, want none: nothing the decision read failed", n)
		}
	})

	t.Run("contrast", func(t *testing.T) {
		// WCAG 2 contrast of each element's text against the first opaque
		// background under it, with the opacity on the way.
		for sel, ratio := range eval[map[string]float64](p, `(() => {
			const rgb = (s) => { const m = s.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
			const lum = (c) => ["r", "g", "b"].map((k) => { const v = c[k] / 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
				.reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
			const ratio = (el) => {
				const fg = rgb(getComputedStyle(el).color);
				let opacity = 1, bg = null;
				for (let e = el; e && !bg; e = e.parentElement) {
					const cs = getComputedStyle(e);
					opacity *= Number(cs.opacity);
					const b = rgb(cs.backgroundColor);
					if (b.a > 0) bg = b;
				}
				bg ??= { r: 255, g: 255, b: 255 };
				const a = fg.a * opacity;
				const seen = Object.fromEntries(["r", "g", "b"].map((k) => [k, fg[k] * a + bg[k] * (1 - a)]));
				const [hi, lo] = [lum(seen), lum(bg)].sort((x, y) => y - x);
				return (hi + 0.05) / (lo + 0.05);
			};
			const out = {};
			for (const sel of ["[data-testid=editors] .editor-box:not([hidden]) .gl:not(.is-err):not(.is-hit)",
				"[data-testid=trace] dl.values dt.unused button", "[data-testid=trace] dl.values dd.unused",
				"[data-testid=trace] ol.rules li.miss .mark"]) {
				const el = document.querySelector(sel);
				out[sel] = el ? ratio(el) : -1;
			}
			return out;
		})()`) {
			if ratio < 4.5 {
				t.Errorf("%s: contrast %.2f:1, want at least 4.5:1 (-1: no such element)", sel, ratio)
			}
		}
	})

	t.Run("the editor from the keyboard", func(t *testing.T) {
		hint := eval[struct {
			Text    string
			Visible bool
		}](p, `(() => {
			const ta = document.querySelector('[data-testid="editor-rules.yaml"]');
			const el = document.getElementById(ta.getAttribute('aria-describedby'));
			const r = el?.getBoundingClientRect();
			return {Text: el?.innerText ?? '', Visible: !!r && r.width > 0 && r.height > 0 && getComputedStyle(el).visibility === 'visible'};
		})()`)
		if !hint.Visible || !strings.Contains(hint.Text, "Tab moves on") {
			t.Errorf("the editor's aria-describedby hint is %q (visible %v), want a visible hint saying Tab moves on", hint.Text, hint.Visible)
		}
		editor := `document.querySelector('[data-testid="editor-rules.yaml"]')`
		before := eval[string](p, editor+`.value`)
		p.run("focusing the editor", chromedp.Focus(`[data-testid="editor-rules.yaml"]`))
		// Headless Chromium's page has no window focus, so :focus never
		// matches there: the ring is the :focus-visible rule that applies to
		// the editor, read from the style sheet.
		ring := eval[string](p, `(() => {
			const ta = document.querySelector('[data-testid="editor-rules.yaml"]');
			for (const sheet of document.styleSheets) for (const r of sheet.cssRules) {
				if (!r.selectorText?.includes(':focus-visible')) continue;
				for (const sel of r.selectorText.split(',')) {
					if (sel.includes(':focus-visible') && ta.matches(sel.replaceAll(':focus-visible', '')) && r.style.outlineStyle && r.style.outlineStyle !== 'none' && parseFloat(r.style.outlineWidth) > 0) return r.cssText;
				}
			}
			return '';
		})()`)
		if ring == "" {
			t.Errorf("no :focus-visible rule gives the editor an outline, want a visible focus ring")
		}
		// Ctrl+] and Ctrl+[ indent and outdent the caret's line, as one edit each.
		p.typeInto("editor-rules.yaml", "  - id: cpu\n", false, "")
		p.run("Ctrl+]", chromedp.KeyEvent("]", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		if got := eval[string](p, editor+`.value`); got != strings.Replace(before, "\n  - id: cpu\n", "\n    - id: cpu\n", 1) {
			t.Errorf("Ctrl+] on '  - id: cpu' did not indent that line alone by two spaces")
		}
		p.run("Ctrl+[", chromedp.KeyEvent("[", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		if got := eval[string](p, editor+`.value`); got != before {
			t.Errorf("Ctrl+[ after Ctrl+] did not give back the text as it was")
		}
		// The indented line did not load; the text as it was does, and its
		// decision (from the engine's worker) closes the problems strip.
		p.waitFor("the rules loading again", `document.querySelector('[data-testid=problems]').hidden`)
		p.run("Tab", chromedp.KeyEvent(kb.Tab))
		if still := eval[bool](p, `document.activeElement === `+editor); still {
			t.Errorf("Tab left the focus in the editor, want it on the next control")
		}
		if after := eval[string](p, editor+`.value`); after != before {
			t.Errorf("Tab changed the rules")
		}
		p.run("Shift+Tab", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
		if back := eval[bool](p, `document.activeElement === `+editor); !back {
			t.Errorf("Shift+Tab after Tab did not come back to the editor, but to %s", eval[string](p, `document.activeElement.outerHTML.slice(0, 80)`))
		}
		p.waitFor("no edit left", `Object.keys(window.dlroute.edited()).length === 0`)

		// The file tabs are one stop for Tab; the arrow keys move between them.
		p.run("ArrowRight on the rules.yaml tab", chromedp.Focus(`[data-testid="tab-rules.yaml"]`), chromedp.KeyEvent(kb.ArrowRight))
		if got := eval[string](p, `document.activeElement.dataset.testid + ' ' + !document.querySelector('[data-testid="editor-tests.yaml"]').closest('.editor-box').hidden`); got != "tab-tests.yaml true" {
			t.Errorf("ArrowRight on the rules.yaml tab: focus and tests.yaml shown are %q, want \"tab-tests.yaml true\"", got)
		}
		p.run("ArrowLeft", chromedp.KeyEvent(kb.ArrowLeft))
		if got := eval[string](p, `[...document.querySelectorAll('[data-testid=file-tabs] [role=tab]')].map((t) => t.dataset.testid + ':' + t.tabIndex + ':' + t.getAttribute('aria-selected')).join(' ')`); !strings.HasPrefix(got, "tab-rules.yaml:0:true tab-tests.yaml:-1:false") {
			t.Errorf("after ArrowLeft the tabs are %s, want rules.yaml selected and the only one Tab stops at", got)
		}
	})

	t.Run("engine agrees with native", func(t *testing.T) {
		refs, lines, want := nativeLines(t)
		js, _ := json.Marshal(map[string]any{"refs": refs, "lines": lines})
		got := eval[[]string](p, fmt.Sprintf(`(() => { const x = %s; return Promise.all(x.lines.map(async (l, i) => (await window.dlroute.resolveJSON(x.refs[i], l)).output)); })()`, js))
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("%s: resolveJSON(%s) in the page = %q, native %s", refs[i], lines[i], at(got, i), want[i])
			}
		}
	})

	t.Run("form, multi-line version and marker position", func(t *testing.T) {
		p.typeInto("input-platform_version", "<unknown>", false, "PJRT C API\ncuda 12030")
		p.wantDecision("the PJRT string", "gpu", "(kDLCUDA, 0)")
		if m := p.text("marker"); !strings.Contains(m, "offset 11, line 2, column 1") {
			t.Errorf("the marker panel says %q, want the marker at offset 11, line 2, column 1", m)
		}
		js := eval[string](p, `document.querySelector('[data-testid=input-json]').value`)
		if !strings.Contains(js, `"platform_version":"PJRT C API\ncuda 12030"`) {
			t.Errorf("the JSON input is %s, want the form's platform_version in it", js)
		}
		hit := eval[bool](p, `!!document.querySelector('[data-testid=editors] .bl.is-hit') && !!document.querySelector('[data-testid=editors] mark.is-marker')`)
		if !hit {
			t.Errorf("the rules file marks no deciding rule or no marker row")
		}
		p.screenshot("02-pjrt-c-api.png")
	})

	t.Run("edit a marker", func(t *testing.T) {
		p.paste("input-platform_version", "nvfork 1.0")
		p.wantDecision("an unknown marker", "gpu-unknown-platform", "nvfork 1.0")
		// Enter keeps the marker row's indentation: the new row is typed
		// from its dash, as in an editor that indents.
		p.typeInto("editor-rules.yaml", "{marker: oneapi, device: kDLOneAPI}", true, "\n- {marker: nvfork, device: kDLCUDA}")
		p.wantDecision("the new marker", "gpu", "(kDLCUDA, 0)")
		if v := eval[string](p, `document.querySelector('[data-testid="editor-rules.yaml"]').value`); !strings.Contains(v, "      - {marker: oneapi, device: kDLOneAPI}\n      - {marker: nvfork, device: kDLCUDA}\n") {
			t.Errorf("Enter after the oneapi marker row did not keep its six spaces: the new row is not under it")
		}
		p.waitFor("what changed", `Number(document.querySelector('[data-testid=diff]').dataset.changes) >= 1`)
		if got := p.text("diff-summary"); !strings.Contains(got, "inputs derived from the rules decide differently") {
			t.Errorf("what changed says %q, want dlroute diff's inputs derived from the rules", got)
		}
		if got := p.text("diff"); !strings.Contains(got, "gpu-unknown-platform (BufferError) → gpu (kDLCUDA)") {
			t.Errorf("what changed says %q, want the unknown platform now decided kDLCUDA", got)
		}
		edited := eval[map[string]string](p, `window.dlroute.edited()`)
		if !strings.Contains(edited["jax/v3/rules.yaml"], "{marker: nvfork, device: kDLCUDA}") || len(edited) != 1 {
			t.Errorf("edited files: %v, want jax/v3/rules.yaml with the new row", keys(edited))
		}
		p.screenshot("03-new-marker.png")
		eval[bool](p, `(document.querySelector('[data-testid=tests-list]').closest('.panel').scrollIntoView(), true)`)
		p.screenshot("04-tests-and-what-changed.png")
		eval[bool](p, `(document.querySelector('.more').scrollTop = 0, true)`)
	})

	t.Run("tests pane counts", func(t *testing.T) {
		cases := len(ruleSet(t, rules.FS, "jax@v3").Cases())
		p.waitFor("all tests pass", fmt.Sprintf(`document.querySelector('[data-testid=tests-summary]').innerText === '%d passed, 0 failed'`, cases))
		if tone := p.tone("[data-testid=tests-summary]"); tone != "green" {
			t.Errorf("with every test passing the summary is %s, want green", tone)
		}
		p.typeInto("editor-rules.yaml", "{marker: rocm,", false, "{marker: rocmx,")
		passed, failed := nativeTest(t, p)
		p.waitFor("failing tests", fmt.Sprintf(`document.querySelector('[data-testid=tests-summary]').innerText === '%d passed, %d failed'`, passed, failed))
		if failed == 0 {
			t.Fatalf("renaming the rocm marker failed no case natively")
		}
		if tone := p.tone("[data-testid=tests-summary]"); tone != "red" {
			t.Errorf("with %d tests failing the summary is %s, want red", failed, tone)
		}
		p.screenshot("05-tests-failing.png")
		p.typeInto("editor-rules.yaml", "{marker: rocmx,", false, "{marker: rocm,")
		p.waitFor("tests pass again", fmt.Sprintf(`document.querySelector('[data-testid=tests-summary]').innerText === '%d passed, 0 failed'`, cases))
	})

	t.Run("errors at their position", func(t *testing.T) {
		for _, c := range []struct{ name, find, replace, code, shot string }{
			{"a broken expression", "when: platform == 'cpu'", "when: platform == 'cpu' &&", "cel_syntax", "06-syntax-error.png"},
			{"a CEL type error", "when: shards != 1", "when: shards != 'one'", "cel_type", "07-type-error.png"},
			{"invalid YAML", "- id: cpu", "- id: [cpu", "yaml_syntax", ""},
		} {
			p.typeInto("editor-rules.yaml", c.find, false, c.replace)
			edited := eval[map[string]string](p, `window.dlroute.edited()`)
			pos := nativeErrorPosition(t, edited, engine.Code(c.code))
			p.waitFor(c.name+" in the problems", fmt.Sprintf(`document.querySelector('[data-testid=problems]').innerText.includes(%q)`, pos))
			line := strings.Split(pos, ":")[1]
			p.waitFor(c.name+" marked in the editor", fmt.Sprintf(`!!document.querySelector('[data-testid=editors] .bl.is-err[data-line="%s"]')`, line))
			p.waitFor(c.name+": no tests", `document.querySelector('[data-testid=tests-summary]').innerText.includes('the rules did not load')`)
			if tone := p.tone("[data-testid=tests-summary]"); tone != "red" {
				t.Errorf("with %s the tests summary %q is %s, want red: no tests ran", c.name, p.text("tests-summary"), tone)
			}
			if c.code == "cel_syntax" {
				p.axe("an error in the rules, with the problems strip shown")
			}
			if text, rule, state := p.decision(); state != "stale" || rule != "gpu" || !strings.Contains(text, "kDLCUDA") {
				t.Errorf("with %s the decision is %q by %s (%s), want the last good one, (kDLCUDA, 0) by gpu, shown as stale", c.name, text, rule, state)
			}
			if c.shot != "" {
				p.screenshot(c.shot)
			}
			p.typeInto("editor-rules.yaml", c.replace, false, c.find)
			p.wantDecision("the fixed rules", "gpu", "(kDLCUDA, 0)")
		}
	})

	t.Run("an error on the last visible line stays in view", func(t *testing.T) {
		// The caret's line is the editor's last visible one; the error typed
		// there opens the problems strip, which makes the editor shorter.
		line := eval[int](p, `(() => {
			const ta = document.querySelector('[data-testid="editor-rules.yaml"]');
			const lines = ta.value.split('\n');
			const n = lines.indexOf("    when: platform == 'cpu'") + 1;
			const cs = getComputedStyle(ta);
			const end = lines.slice(0, n).join('\n').length;
			ta.focus();
			ta.setSelectionRange(end, end);
			ta.scrollTop = parseFloat(cs.paddingTop) + n * parseFloat(cs.lineHeight) - ta.clientHeight;
			return n;
		})()`)
		height := eval[float64](p, `document.querySelector('[data-testid="editor-rules.yaml"]').clientHeight`)
		p.run("typing an error", chromedp.KeyEvent(" &&"))
		p.waitFor("the error marked", fmt.Sprintf(`!document.querySelector('[data-testid=problems]').hidden && !!document.querySelector('[data-testid=editors] .bl.is-err[data-line="%d"]')`, line))
		// The editor keeps its line in view when the strip's layout resizes
		// it, a frame or two after the strip opens (more on a loaded
		// machine): each frame is looked at, for up to 2 s.
		got := eval[struct{ Shrunk, Visible bool }](p, fmt.Sprintf(`new Promise((ok) => {
			const until = performance.now() + 2000;
			const look = () => {
				const ta = document.querySelector('[data-testid="editor-rules.yaml"]');
				const box = ta.getBoundingClientRect();
				const r = document.querySelector('[data-testid=editors] .bl.is-err[data-line="%d"]').getBoundingClientRect();
				const got = {Shrunk: ta.clientHeight < %f, Visible: r.top >= box.top && r.bottom <= box.top + ta.clientHeight + 0.5};
				if ((got.Shrunk && got.Visible) || performance.now() > until) ok(got); else requestAnimationFrame(look);
			};
			requestAnimationFrame(look);
		})`, line, height))
		if !got.Shrunk {
			t.Errorf("the problems strip did not make the editor shorter, so this checks nothing")
		}
		if !got.Visible {
			t.Errorf("the error on line %d, the editor's last visible line, is out of view once the problems strip opens", line)
		}
		p.screenshot("07b-error-last-line.png")
		p.typeInto("editor-rules.yaml", "when: platform == 'cpu' &&", false, "when: platform == 'cpu'")
		p.wantDecision("the fixed rules", "gpu", "(kDLCUDA, 0)")
	})

	t.Run("the share link round-trips", func(t *testing.T) {
		link := eval[string](p, `window.dlroute.link()`)
		if shown := eval[string](p, `document.querySelector('[data-testid=share-link]').href`); shown != link {
			t.Errorf("the share link shows %s, want %s", shown, link)
		}
		before := eval[map[string]any](p, `window.dlroute.state()`)
		report["share_link_bytes"] = len(link)
		q := newTab(t, ctx)
		q.open(link)
		q.wantDecision("the linked state", "gpu", "(kDLCUDA, 0)")
		after := eval[map[string]any](q, `window.dlroute.state()`)
		a, _ := json.Marshal(before)
		b, _ := json.Marshal(after)
		if string(a) != string(b) {
			t.Errorf("the link's state in a new tab:\n%s\nwant\n%s", b, a)
		}
	})

	t.Run("bad input keeps the last good decision", func(t *testing.T) {
		p.typeInto("input-json", "}", true, "}")
		p.waitFor("the JSON message", `document.querySelector('[data-testid=input-message]').innerText.includes('not valid JSON')`)
		if _, rule, state := p.decision(); state != "stale" || rule != "gpu" {
			t.Errorf("with invalid JSON the decision is by %s (%s), want the last good one, stale", rule, state)
		}
		p.typeInto("input-json", "}}", false, "}")
		p.wantDecision("valid JSON again", "gpu", "(kDLCUDA, 0)")
		huge := strings.Repeat("cuda ", 20000)
		p.paste("input-platform_version", huge)
		p.waitFor("the too_long message", `document.querySelector('[data-testid=input-message]').innerText.includes('too_long')`)
		kept := eval[int](p, `document.querySelector('[data-testid=input-platform_version]').value.length`)
		if kept != len(huge) {
			t.Errorf("the pasted string is %d characters in the field, want all %d", kept, len(huge))
		}
		p.screenshot("08-bad-input.png")

		// Two megabytes pasted: too large to send. The field holds them
		// and shows their start and their length, not an empty box; the
		// JSON line has them all.
		big := strings.Repeat("cuda ", 2<<20/5)
		p.paste("input-platform_version", big)
		p.waitFor("the 2 MiB message", `document.querySelector('[data-testid=input-message]').innerText.includes('the input is 2.0 MiB')`)
		if n := eval[int](p, `JSON.parse(document.querySelector('[data-testid=input-json]').value).platform_version.length`); n != len(big) {
			t.Errorf("the JSON line's platform_version is %d characters, want all %d pasted", n, len(big))
		}
		if size, want := p.text("input-platform_version-size"), fmt.Sprintf("%s characters (2.0 MiB), more than the 4096 bytes the engine takes; the field shows the first 1,000.", commas(len(big))); !strings.Contains(size, want) {
			t.Errorf("under the field: %q, want it to say %q", size, want)
		}
		if ink := p.inkPixels(`[data-testid=input-platform_version]`); ink < 200 {
			t.Errorf("the field holding 2 MB draws %d pixels of text, want it to look full, not empty", ink)
		}
		p.axe("a 2 MB platform_version")
		p.screenshot("08b-2mb-pasted.png")
		p.run("Clear", chromedp.Click(`[data-testid=input-platform_version-clear]`))
		if got := eval[string](p, `(() => { const f = document.querySelector('[data-testid=input-platform_version]'); return JSON.stringify([f.value, f.readOnly, JSON.parse(document.querySelector('[data-testid=input-json]').value).platform_version]); })()`); got != `["",false,""]` {
			t.Errorf("after Clear the field, its read-only flag and the JSON's platform_version are %s, want all empty and editable", got)
		}
		p.paste("input-platform_version", "cuda 12030")
		p.wantDecision("a real version", "gpu", "(kDLCUDA, 0)")

		// Two megabytes pasted into a rule file: the engine refuses the
		// file, the page keeps it and the last good decision.
		tests := eval[string](p, `document.querySelector('[data-testid="editor-tests.yaml"]').value`)
		p.paste("editor-tests.yaml", strings.Repeat("# pasted\n", 2<<20/9))
		p.waitFor("too_long in the problems", `document.querySelector('[data-testid=problems]').innerText.includes('too_long')`)
		if _, rule, state := p.decision(); state != "stale" || rule != "gpu" {
			t.Errorf("with a huge rule file the decision is by %s (%s), want the last good one, stale", rule, state)
		}
		p.paste("editor-tests.yaml", tests)
		p.wantDecision("the tests file back", "gpu", "(kDLCUDA, 0)")
	})

	t.Run("download", func(t *testing.T) {
		b64 := eval[string](p, `window.dlroute.rulesTar()`)
		fsys := untar(t, b64)
		rs := ruleSet(t, fsys, "jax@v3")
		d, err := rs.Resolve(context.Background(), engine.Input{"platform": "gpu", "platform_version": "nvfork 1.0", "local_hardware_id": 0})
		if err != nil || d.DeviceType != "kDLCUDA" {
			t.Errorf("the downloaded rules decide nvfork as %v (%v), want kDLCUDA", d, err)
		}
		if len(fsys) != len(filesIn(t, rules.FS)) {
			t.Errorf("the download holds %d files, want every one of the %d served", len(fsys), len(filesIn(t, rules.FS)))
		}
	})

	t.Run("examples", func(t *testing.T) {
		// ArrowDown on the closed menu moves the choice and applies nothing;
		// Enter applies it.
		state := eval[map[string]any](p, `window.dlroute.state()`)
		p.run("ArrowDown on the examples menu", chromedp.Focus(`[data-testid=examples]`), chromedp.KeyEvent(kb.ArrowDown))
		eval[bool](p, `new Promise((ok) => setTimeout(() => ok(true), 300))`)
		if after := eval[map[string]any](p, `window.dlroute.state()`); fmt.Sprint(after) != fmt.Sprint(state) {
			t.Errorf("ArrowDown on the closed examples menu changed the state:\n%v\nwant\n%v", after, state)
		}
		if _, rule, _ := p.decision(); rule != "gpu" {
			t.Errorf("after ArrowDown on the examples menu the decision is by %s, want gpu as before", rule)
		}
		p.run("Enter on the examples menu", chromedp.KeyEvent(kb.Enter))
		p.wantDecision("the first example, by Enter", "gpu-unknown-platform", "<unknown>")
		for _, ex := range []struct {
			id, rule, contains string
			edits              int
		}{
			{"seed", "gpu-unknown-platform", "<unknown>", 0},
			{"rocm-pinned", "gpu", "(kDLROCMHost, 1)", 0},
			{"pjrt-c-api", "gpu", "(kDLCUDA, 0)", 0},
			{"tpu-device", "tpu-not-pinned-host", "TPU pinned host memory", 0},
			{"new-marker", "gpu", "(kDLCUDA, 0)", 1},
			{"seed-exchange", "unknown-platform-host-copy", "(kDLCPU, 0)", 0},
		} {
			eval[bool](p, fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid=examples]'); s.value = %q; return s.dispatchEvent(new Event('change')); })()`, ex.id))
			p.wantDecision("example "+ex.id, ex.rule, ex.contains)
			// An example's edits replace the ones before it (the edit a
			// marker step's, new-marker's).
			if edited := eval[map[string]string](p, `window.dlroute.edited()`); len(edited) != ex.edits {
				t.Errorf("after example %s the edited files are %v, want %d", ex.id, keys(edited), ex.edits)
			}
		}
		p.waitFor("the imported rules' tab", `!!document.querySelector('[data-testid="tab-jax/v3/rules.yaml"]')`)
		p.screenshot("09-exchange.png")
		// Edits of the exchange reload it and the version it imports.
		before := len(p.timings().RulesEdits)
		p.typeInto("editor-rules.yaml", "rules:", true, "\n  # typed key by key")
		p.wantDecision("the exchange after an edit", "unknown-platform-host-copy", "(kDLCPU, 0)")
		report["exchange_rules_edit_to_decision_ms"] = summarize(p.timings().RulesEdits[before:])
	})

	t.Run("a malformed link", func(t *testing.T) {
		q := newTab(t, ctx)
		q.open(url + "#s=not-a-state!")
		q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
		if m := q.text("message"); !strings.Contains(m, "This link could not be read") {
			t.Errorf("the message is %q, want it to say the link could not be read", m)
		}
		q.screenshot("10-malformed-link.png")
	})

	t.Run("--rules DIR", func(t *testing.T) {
		dir := t.TempDir()
		for name, data := range filesIn(t, rules.FS) {
			if !strings.HasPrefix(name, "jax/v3/") {
				continue
			}
			if name == "jax/v3/rules.yaml" {
				data = []byte(strings.Replace(string(data), "      - {marker: oneapi, device: kDLOneAPI}\n", "      - {marker: oneapi, device: kDLOneAPI}\n      - {marker: nvfork, device: kDLCUDA}\n", 1))
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		q := newTab(t, ctx)
		q.open(servePlayground(t, "--rules", dir))
		if refs := eval[[]string](q, `window.dlroute.refs()`); !slices.Equal(refs, []string{"jax@v3"}) {
			t.Errorf("the page offers %v, want the directory's jax@v3 only", refs)
		}
		q.paste("input-platform_version", "nvfork 1.0")
		q.wantDecision("the directory's marker", "gpu", "(kDLCUDA, 0)")
		if status := q.text("status"); !strings.Contains(status, dir) {
			t.Errorf("the status line says %q, want it to name %s", status, dir)
		}
	})

	t.Run("a phone's width", func(t *testing.T) {
		q := newTab(t, ctx)
		q.run("a 390x844 viewport", chromedp.EmulateViewport(390, 844))
		q.open(url)
		q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
		// The file tabs scroll and the example menu shrinks: nothing is
		// wider than the viewport, and the page does not scroll sideways.
		wide := eval[struct {
			Scroll, View int
			Wider        []string
		}](q, `(() => {
			const vw = document.documentElement.clientWidth;
			const wider = [...document.querySelectorAll('header *, .tabbar, .tabbar > *, main > *, .panel')].filter((e) => e.getBoundingClientRect().right > vw + 0.5).map((e) => e.dataset.testid || e.className || e.tagName);
			return {Scroll: document.scrollingElement.scrollWidth, View: innerWidth, Wider: wider};
		})()`)
		if wide.Scroll > wide.View || len(wide.Wider) > 0 {
			t.Errorf("at 390 px wide the page scrolls %d px wide in a %d px viewport; past the viewport: %v", wide.Scroll, wide.View, wide.Wider)
		}
		// The decision is on the first screen, without scrolling.
		if y := eval[float64](q, `scrollY`); y != 0 {
			t.Errorf("the page opened scrolled to %.0f", y)
		}
		if r := q.rect("[data-testid=decision]"); !r.inView() {
			t.Errorf("at 390x844 the decision is at %.0f-%.0f px down, %.0f-%.0f across; want it all inside the %.0fx%.0f viewport", r.Top, r.Bottom, r.Left, r.Right, r.ViewWidth, r.ViewHeight)
		}
		q.screenshot("11-phone.png")
		q.axe("a phone's width")
	})

	t.Run("a laptop's screen", func(t *testing.T) {
		q := newTab(t, ctx)
		q.run("a 1280x720 viewport", chromedp.EmulateViewport(1280, 720))
		q.open(url)
		q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
		q.waitForTests()
		// The header is one row: every item overlaps every other vertically.
		if rows := eval[bool](q, `(() => {
			const boxes = [...document.querySelector('header').children].map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
			return Math.max(...boxes.map((r) => r.top)) < Math.min(...boxes.map((r) => r.bottom));
		})()`); !rows {
			t.Errorf("at 1280x720 the header wraps onto a second row")
		}
		for _, sel := range []string{"[data-testid=decision]", "[data-testid=tests-summary]", "[data-testid=tests-list] li"} {
			if r := q.rect(sel); !r.inView() {
				t.Errorf("at 1280x720 %s is at %.0f-%.0f px down; want it on the first screen, inside %.0f px", sel, r.Top, r.Bottom, r.ViewHeight)
			}
		}
		q.screenshot("12-laptop.png")
		q.axe("a laptop's screen")
		// The examples menu open, its list showing (a tab in front: a tab
		// behind another opens no menu).
		q.run("opening the examples menu", chromedp.Focus(`[data-testid=examples]`), chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt)))
		q.waitFor("the examples menu open", `document.querySelector('[data-testid=examples]').matches(':open')`)
		q.axe("the examples menu open")
		q.run("closing the examples menu", chromedp.KeyEvent(kb.Escape))
		q.waitFor("the examples menu closed", `!document.querySelector('[data-testid=examples]').matches(':open')`)
	})

	t.Run("served by a static server", func(t *testing.T) {
		q := newTab(t, ctx)
		q.open(staticSite(t))
		q.wantDecision("the seed's case", "gpu-unknown-platform", "<unknown>")
		// The server sends dlroute.wasm.gz, the site's precompressed module,
		// as nginx's gzip_static does.
		if w := q.timings().Wasm; w.EncodedBodySize == 0 || w.EncodedBodySize > w.DecodedBodySize/3 {
			t.Errorf("from the static site the module came %.0f bytes encoded for %.0f decoded; want its precompressed .gz", w.EncodedBodySize, w.DecodedBodySize)
		}
	})

	// The edits above were typed key by key: each key one decision.
	tm := p.timings()
	report["edit_to_decision_ms"] = summarize(tm.Edits)
	report["rules_edit_to_decision_ms"] = summarize(tm.RulesEdits)
	report["input_edit_to_decision_ms"] = summarize(tm.InputEdits)
	parts := tm.rulesEditParts()
	report["rules_edit_parts_ms"] = parts
	t.Logf("edit to decision: rules %v, input %v, all %v", summarize(tm.RulesEdits), summarize(tm.InputEdits), summarize(tm.Edits))
	t.Logf("a rules edit's parts: %v", parts)

	// The same page again, from the browser's cache.
	p.open(url)
	p.wantDecision("the seed's case, warm", "gpu-unknown-platform", "<unknown>")
	warm := p.timings()
	report["warm_first_decision_ms"] = warm.Cold
	report["warm_marks_ms"] = warm.Marks
	t.Logf("warm load to first decision: %.0f ms (marks %v)", warm.Cold, warm.Marks)

	mergeTimings(t, report)
}

// commas writes n with thousands separators, as the page does.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(nothing)"
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// summarize is a list of durations as its count, median, 90th percentile
// and maximum.
func summarize(ms []float64) map[string]float64 {
	if len(ms) == 0 {
		return nil
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return map[string]float64{"n": float64(len(s)), "median": s[len(s)/2], "p90": s[len(s)*9/10], "max": s[len(s)-1]}
}

func ruleSet(t *testing.T, fsys fs.FS, ref string) *engine.RuleSet {
	t.Helper()
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// withEdits is the embedded rules with the page's edited files.
func withEdits(t *testing.T, edited map[string]string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for name, data := range filesIn(t, rules.FS) {
		out[name] = &fstest.MapFile{Data: data}
	}
	for name, text := range edited {
		out[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return out
}

// nativeTest runs jax@v3's cases natively on the page's edits.
func nativeTest(t *testing.T, p page) (passed, failed int) {
	t.Helper()
	edited := eval[map[string]string](p, `window.dlroute.edited()`)
	for _, r := range ruleSet(t, withEdits(t, edited), "jax@v3").Test(context.Background()) {
		if r.Pass {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// nativeErrorPosition is where `dlroute lint` puts the first error of the
// given code in the page's edits: rules/jax/v3/rules.yaml:LINE:COL.
func nativeErrorPosition(t *testing.T, edited map[string]string, code engine.Code) string {
	t.Helper()
	_, err := engine.Load(withEdits(t, edited), engine.Options{})
	for _, e := range engine.Errors(err) {
		if e.Code == code && e.Pos != nil {
			return e.Pos.String()
		}
	}
	t.Fatalf("the edited rules load natively with %v, want a %s error", err, code)
	return ""
}

// TestPlaygroundRulesetByRelease: ?ruleset= names a rule set as --ruleset
// does, and jax==0.10.2 opens the version for that jax release (the
// module resolves it over every version's manifest); a release no version
// covers says so, naming the nearest, and the page stays on its default.
func TestPlaygroundRulesetByRelease(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	url := servePlayground(t)
	p := page{t, browser(t)}

	p.open(url + "?ruleset=jax==0.10.2")
	p.wantDecision("the seed's case on jax 0.10.2's rules", "gpu-unknown-platform", "Unknown GPU platform")
	if ref := eval[string](p, `document.querySelector('[data-testid=ruleset]').value`); ref != "jax@v1.1" {
		t.Errorf("?ruleset=jax==0.10.2 shows %s, want jax@v1.1", ref)
	}
	if msg := p.text("message"); !strings.Contains(msg, "jax==0.10.2 is jax@v1.1") {
		t.Errorf("the page says %q, want it to name the version chosen", msg)
	}

	p.open(url + "?ruleset=jax==0.4.14")
	p.wantDecision("the seed's case on the default rules", "gpu-unknown-platform", "Unknown GPU platform")
	if ref := eval[string](p, `document.querySelector('[data-testid=ruleset]').value`); ref != "jax@v3" {
		t.Errorf("?ruleset=jax==0.4.14 shows %s, want the default jax@v3", ref)
	}
	if msg := p.text("message"); !strings.Contains(msg, "no version for release 0.4.14") || !strings.Contains(msg, "jax@v0 covers 0.4.15 to 0.4.25") {
		t.Errorf("the page says %q, want the release refused with the nearest version", msg)
	}
}

// TestPlaygroundInterop is the interop grid: interop.json, the matrix
// `dlroute interop` decides of the rules served, drawn as a table whose
// cells each open their deciding step in the page's own decision, trace
// and rule file; from the mouse and from the keyboard, at a phone's width
// and under axe-core.
func TestPlaygroundInterop(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	ctx := browser(t)
	url := servePlayground(t)
	p := page{t, ctx}
	p.open(url)
	p.waitFor("the grid", `document.querySelectorAll('[data-testid=interop-cell]').length > 0`)

	// What the native matrix says of the two cells, to compare the page with.
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := interop.Options{}.Decide(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	native := func(producer, platform, consumer string) interop.Cell {
		col := slices.Index(m.Consumers, consumer)
		for _, r := range m.Rows {
			if r.Producer == producer && r.Array.Platform == platform && col >= 0 {
				return r.Cells[col]
			}
		}
		t.Fatalf("the native matrix has no %s %s into %s", producer, platform, consumer)
		return interop.Cell{}
	}
	cellSel := func(producer, platform, consumer string) string {
		return fmt.Sprintf(`[data-testid=interop-cell][data-producer=%q][data-platform=%q][data-consumer=%q]`, producer, platform, consumer)
	}
	type cellShown struct{ Text, Outcome, Kind string }
	shown := func(sel string) cellShown {
		return eval[cellShown](p, fmt.Sprintf(`(() => { const td = document.querySelector(%q); return td ? {Text: td.innerText, Outcome: td.dataset.outcome, Kind: td.className} : {}; })()`, sel))
	}
	seed, inPlace := cellSel("jax@v3", "gpu <unknown>", "torch@v3"), cellSel("numpy@v2", "(kDLCPU, 0)", "torch@v3")

	if n, want := eval[int](p, `document.querySelectorAll('[data-testid=interop-cell]').length`), len(m.Rows)*len(m.Consumers); n != want {
		t.Errorf("the grid has %d cells, want the native matrix's %d", n, want)
	}
	if c := shown(seed); c.Outcome != "error" || c.Kind != "o-error" || !strings.Contains(c.Text, "BufferError") || !strings.Contains(c.Text, "Unknown GPU plat") {
		t.Errorf("the seed's cell, JAX gpu <unknown> into torch@v3, shows %+v; want BufferError: Unknown GPU platform, drawn as an error", c)
	}
	if c := shown(inPlace); c.Outcome != "in_place" || c.Kind != "o-in-place" || !strings.Contains(c.Text, "in place") {
		t.Errorf("numpy's CPU array into torch@v3 shows %+v; want in place", c)
	}
	if note := p.text("interop"); !strings.Contains(note, "not your edits") || !strings.Contains(note, "the rules the server serves") {
		t.Errorf("the panel says %q; want it to say the grid is of the served rules, not the page's edits", note)
	}
	// The row headers and the column headers a screen reader reads out.
	if heads := eval[[]string](p, `[...document.querySelectorAll('[data-testid=interop-grid] thead th')].map((th) => th.scope + ':' + th.innerText)`); !slices.Equal(heads[:3], []string{"col:producer", "col:platform", "col:memory"}) || len(heads) != 3+len(m.Consumers) || heads[3] != "col:into "+m.Consumers[0] {
		t.Errorf("the grid's column headers are %v", heads)
	}

	// Every step of every cell, decided again by the page's engine (the
	// WebAssembly module, on the rules as served), is what the server's
	// native engine decided.
	type differs struct{ Ref, Input, Page, Server string }
	diffs := eval[struct {
		Steps int
		Diffs []differs
	}](p, `fetch('interop.json').then((r) => r.json()).then(async (doc) => {
		const canon = (v) => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
		let steps = 0;
		const diffs = [];
		for (const row of doc.rows) for (const cell of row.cells) for (const s of cell.steps) {
			steps++;
			const line = JSON.stringify(s.input);
			const r = await window.dlroute.resolveJSON(s.ref, line);
			const got = r.status === 'ok' ? canon(JSON.parse(r.output)) : r.status + ': ' + r.output;
			if (got !== canon(s.decision)) diffs.push({Ref: s.ref, Input: line, Page: got, Server: canon(s.decision)});
		}
		return {Steps: steps, Diffs: diffs};
	})`)
	if diffs.Steps < len(m.Rows)*len(m.Consumers) {
		t.Errorf("the page checked %d steps, want at least one per cell", diffs.Steps)
	}
	for _, d := range diffs.Diffs[:min(len(diffs.Diffs), 5)] {
		t.Errorf("%s %s: the page decides %s, the server %s", d.Ref, d.Input, d.Page, d.Server)
	}
	t.Logf("%d steps of %d cells decided again in the page, %d differ", diffs.Steps, len(m.Rows)*len(m.Consumers), len(diffs.Diffs))

	// A click on the in-place cell shows torch's import of numpy's capsule.
	want := native("numpy@v2", "(kDLCPU, 0)", "torch@v3").Decider()
	p.run("clicking numpy into torch", chromedp.Click(chromedp.CSS(inPlace+" button")))
	p.wantDecision("numpy's CPU array into torch", want.Decision.Rule, "(kDLCPU, 0)")
	if ref := eval[string](p, `document.querySelector('[data-testid=ruleset]').value`); ref != want.Decision.RuleSet || want.Decision.RuleSet != "torch@v3" {
		t.Errorf("the cell opened %s, want its last step's rule set, torch@v3 (natively %s)", ref, want.Decision.RuleSet)
	}

	// From the keyboard: the arrow keys move between cells, Enter opens one.
	p.run("focusing the seed's cell", chromedp.Focus(chromedp.CSS(seed+" button")))
	p.run("ArrowLeft", chromedp.KeyEvent(kb.ArrowLeft))
	moved := eval[string](p, `document.activeElement.closest('td')?.dataset.consumer ?? ''`)
	p.run("ArrowRight", chromedp.KeyEvent(kb.ArrowRight))
	back := eval[string](p, `document.activeElement.closest('td')?.dataset.consumer ?? ''`)
	if left := m.Consumers[slices.Index(m.Consumers, "torch@v3")-1]; moved != left || back != "torch@v3" {
		t.Errorf("ArrowLeft from the seed's cell focused %q, ArrowRight then %q; want %s's cell, then torch@v3's again", moved, back, left)
	}
	if n := eval[int](p, `document.querySelectorAll('[data-testid=interop-grid] button.cell[tabindex="0"]').length`); n != 1 {
		t.Errorf("%d cells are in the tab order, want one: Tab passes the grid in one stop", n)
	}
	p.run("Enter on the seed's cell", chromedp.KeyEvent(kb.Enter))
	p.wantDecision("the seed's cell", "gpu-unknown-platform", "Unknown GPU platform for __dlpack__: <unknown>")
	step := native("jax@v3", "gpu <unknown>", "torch@v3").Decider()
	if text, rule, _ := p.decision(); rule != step.Decision.Rule || !strings.Contains(p.text("decision"), "of jax@v3") {
		t.Errorf("the decision shows %q by %s (%q); want the native step's, %s of jax@v3", text, rule, p.text("decision"), step.Decision.Rule)
	}
	if ref := eval[string](p, `document.querySelector('[data-testid=ruleset]').value`); ref != "jax@v3" {
		t.Errorf("the seed's cell opened %s, want jax@v3", ref)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(eval[string](p, `document.querySelector('[data-testid=input-json]').value`)), &input); err != nil || input["platform_version"] != "<unknown>" || input["platform"] != "gpu" {
		t.Errorf("the input box holds %v (%v), want the step's input, platform gpu at <unknown>", input, err)
	}
	if hit := eval[int](p, `document.querySelectorAll('[data-testid=editors] .editor-box:not([hidden]) .bl.is-hit').length`); hit == 0 {
		t.Errorf("the rule file highlights no rule, want gpu-unknown-platform's")
	}
	if s := p.text("interop-steps"); !strings.Contains(s, "jax@v3 __dlpack_device__") || !strings.Contains(s, "decided the outcome") {
		t.Errorf("the opened cell's steps read %q, want jax@v3's __dlpack_device__ as the one that decided", s)
	}
	p.screenshot("20-interop.png")
	p.axe("the interop grid, a cell opened")

	t.Run("a phone's width", func(t *testing.T) {
		q := newTab(t, ctx)
		q.run("a 390x844 viewport", chromedp.EmulateViewport(390, 844))
		q.open(url)
		q.waitFor("the grid", `document.querySelectorAll('[data-testid=interop-cell]').length > 0`)
		eval[bool](q, `(document.querySelector('[data-testid=interop]').scrollIntoView(), true)`)
		wide := eval[struct {
			Scroll, View, Inner, InnerView int
		}](q, `(() => {
			const s = document.querySelector('[data-testid=interop-scroll]');
			return {Scroll: document.scrollingElement.scrollWidth, View: innerWidth, Inner: s.scrollWidth, InnerView: s.clientWidth};
		})()`)
		if wide.Scroll > wide.View {
			t.Errorf("at 390 px wide the page scrolls %d px wide in a %d px viewport, want no sideways scroll", wide.Scroll, wide.View)
		}
		if wide.InnerView > wide.View || wide.Inner <= wide.InnerView {
			t.Errorf("the grid is %d px wide in a %d px box (the viewport %d); want it to scroll inside its panel", wide.Inner, wide.InnerView, wide.View)
		}
		q.run("tapping the seed's cell", chromedp.Click(chromedp.CSS(seed+" button")))
		q.wantDecision("the seed's cell", "gpu-unknown-platform", "<unknown>")
		// The tapped cell's steps (its answer in words, each step a button
		// that opens it) come up in view, under the cell.
		if r := q.rect("[data-testid=interop-steps]"); !r.inView() {
			t.Errorf("after the tap the cell's steps are at %.0f-%.0f px down, want them in view", r.Top, r.Bottom)
		}
		eval[bool](q, `(document.querySelector('[data-testid=interop]').scrollIntoView(), true)`)
		q.screenshot("21-interop-phone.png")
		q.axe("the interop grid at a phone's width")
	})

	t.Run("live rules", func(t *testing.T) {
		// --rules DIR followed: rules that pass change the grid in the open
		// page, as they change rules.json. Without cupy, it is a consumer
		// and a producer fewer.
		dir, _, _ := copyAllRules(t)
		q := newTab(t, ctx)
		q.open(servePlayground(t, "--rules", dir))
		cupy := `document.querySelectorAll('[data-testid=interop-cell][data-consumer^="cupy@"], [data-testid=interop-cell][data-producer^="cupy@"]').length`
		q.waitFor("the grid with cupy", cupy+` > 0`)
		if err := os.RemoveAll(filepath.Join(dir, "cupy")); err != nil {
			t.Fatal(err)
		}
		q.waitFor("the grid without cupy", cupy+` === 0 && document.querySelectorAll('[data-testid=interop-cell]').length > 0`)
		if s := q.text("interop"); !strings.Contains(s, "revision "+eval[string](q, `window.dlroute.revision()`)) {
			t.Errorf("the panel says %q, want it to name the revision the page has", s)
		}
	})
}
