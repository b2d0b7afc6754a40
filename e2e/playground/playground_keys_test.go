package playground

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// personsPace is the time between two keys of a fast typist: 100 ms is
// 120 words a minute. A decision within 100 ms of its key keeps up with
// it, so at this pace a key never waits behind the decision of the key
// before (playground/RATIONALE.md: "Why is a rules key measured at a person's
// pace?").
const personsPace = 100 * time.Millisecond

// TestPlaygroundKeyToDecision measures a rules key to its decision on
// screen, the page's own measure (timings.js), as a marker row is typed
// into jax@v3's rules: once at a person's pace, each key after the one
// before it by personsPace, and once in a burst, every key sent as soon
// as the browser took the one before, where a key's decision waits for
// the one in progress. Each row is checked decided by the new marker
// (rule gpu, kDLCUDA) and drawn line for line in the editor; the
// figures, with where each key's time went, go to
// testout/playground/timings.json and the test's log. It measures; it
// asserts no figure (BENCHMARKS.md has them, with the load they were
// taken at).
func TestPlaygroundKeyToDecision(t *testing.T) {
	testenv.Short(t, "the playground in a browser")
	url := servePlayground(t)
	p := page{t, browser(t)}
	p.open(url)
	p.wantDecision("the seed's case", "gpu-unknown-platform", "Unknown GPU platform for __dlpack__: <unknown>")

	report := map[string]any{}
	for _, c := range []struct {
		name, marker string
		every        time.Duration
	}{
		{"paced", "acmegpu", personsPace},
		{"burst", "zetagpu", 0},
	} {
		p.paste("input-platform_version", c.marker+" 1.0")
		p.wantDecision("an unknown marker", "gpu-unknown-platform", c.marker+" 1.0")
		before := len(p.timings().EditParts)
		p.typeInto("editor-rules.yaml", "{marker: oneapi, device: kDLOneAPI}", true, "")
		row := fmt.Sprintf("\n- {marker: %s, device: kDLCUDA}", c.marker)
		if c.every == 0 {
			p.run("typing a row in a burst", chromedp.KeyEvent(row))
		} else {
			for _, key := range row {
				p.run("typing a key", chromedp.KeyEvent(string(key)))
				time.Sleep(c.every)
			}
		}
		p.wantDecision("the new marker, typed "+c.name, "gpu", "(kDLCUDA, 0)")
		if bad := editorDrawn(p, "editor-rules.yaml"); len(bad) > 0 {
			t.Errorf("after the row typed %s, the editor's rows do not show its text: %v", c.name, bad)
		}
		tm := p.timings()
		tm.EditParts = tm.EditParts[before:]
		var keys []float64
		for _, e := range tm.EditParts {
			if e.Kind == "rules" {
				keys = append(keys, e.Ms)
			}
		}
		summary, parts := summarize(keys), tm.rulesEditParts()
		report["rules_key_"+c.name+"_ms"] = summary
		report["rules_key_"+c.name+"_parts_ms"] = parts
		t.Logf("a rules key to its decision, typed %s: %v (%d keys typed)", c.name, summary, len([]rune(row)))
		t.Logf("its parts: %v", parts)
	}
	report["rules_key_pace_ms"] = personsPace.Milliseconds()
	mergeTimings(t, report)
}

// editorDrawn compares an editor's line numbers and the rows behind its
// text (drawn again only where a line changed) with the text: each row
// holds its line, numbered in order. It returns the first mismatches.
func editorDrawn(p page, testid string) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(`(() => {
		const ta = document.querySelector('[data-testid=%q]');
		const ed = ta.closest('.editor');
		const lines = ta.value.split('\n');
		const rows = [...ed.querySelectorAll('.backdrop-inner > .bl')];
		const numbers = [...ed.querySelectorAll('.gutter-inner > .gl')];
		const bad = [];
		if (rows.length !== lines.length) bad.push('rows ' + rows.length + ' for ' + lines.length + ' lines');
		if (numbers.length !== lines.length) bad.push('numbers ' + numbers.length + ' for ' + lines.length + ' lines');
		rows.forEach((r, i) => {
			if (r.dataset.line !== String(i + 1)) bad.push('row ' + (i + 1) + ' says line ' + r.dataset.line);
			if (r.textContent !== (lines[i] || ' ')) bad.push('row ' + (i + 1) + ' holds ' + JSON.stringify(r.textContent) + ' for ' + JSON.stringify(lines[i]));
		});
		numbers.forEach((g, i) => { if (g.textContent !== String(i + 1)) bad.push('number ' + (i + 1) + ' says ' + g.textContent); });
		return bad.slice(0, 5);
	})()`, testid))
}
