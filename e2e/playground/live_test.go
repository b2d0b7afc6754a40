package playground

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// `dlroute playground --rules DIR` follows DIR (cmd/dlroute's
// playground_live_test.go checks the server's side with no browser);
// here a person has the page open while DIR changes.

// TestPlaygroundInBrowserFollowsRules: a person has the page open on
// --rules DIR and edits DIR in their own editor. Each save that passes
// shows in the page without a reload, keeping what they typed in the
// page; a save that does not pass is shown with its errors while the
// decision stands.
func TestPlaygroundInBrowserFollowsRules(t *testing.T) {
	ctx := browser(t)
	dir, rulesFile, _ := copyRules(t)
	url := servePlayground(t, "--rules", dir)
	p := page{t, ctx}
	p.open(url)
	p.wantDecision("the seed's case", "gpu-unknown-platform", "Unknown GPU platform for __dlpack__: <unknown>")
	p.paste("input-platform_version", "nvfork 1.0")
	p.wantDecision("an unknown marker", "gpu-unknown-platform", "nvfork 1.0")
	eval[bool](p, `(window.sameDocument = true)`)
	editorText := func() string {
		return eval[string](p, `document.querySelector('[data-testid="editor-rules.yaml"]').value`)
	}

	// A marker saved on disk decides, with no reload.
	saved := time.Now()
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA}")
	p.wantDecisionWithin(testenv.Patience(t), "the marker saved on disk", "gpu", "(kDLCUDA, 0)")
	took := time.Since(saved)
	t.Logf("a marker saved on disk to the page's new decision: %v", took.Round(time.Millisecond))
	if !eval[bool](p, `window.sameDocument === true`) {
		t.Errorf("the page was reloaded; want the rules loaded into the open page")
	}
	if got := p.text("live-summary"); !strings.Contains(got, "changed: jax/v3/rules.yaml") {
		t.Errorf("the page says %q; want the file that changed named", got)
	}
	if !strings.Contains(editorText(), "marker: nvfork") {
		t.Errorf("the editor does not show the saved marker")
	}
	writeTimings(t, map[string]any{"save_to_decision_ms": took.Milliseconds()})

	// The person edits rules.yaml in the page; the same file changes on
	// disk. Their text stays, and Revert file gives the disk's.
	p.typeInto("editor-rules.yaml", "{marker: nvfork, device: kDLCUDA}", true, "\n- {marker: pagefork, device: kDLCUDA}") // Enter keeps the row's indentation
	p.paste("input-platform_version", "pagefork 1.0")
	p.wantDecision("the page's own marker", "gpu", "(kDLCUDA, 0)")
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: diskfork, device: kDLCUDA}")
	p.waitWithin(testenv.Patience(t), "the conflict", `!!document.querySelector('[data-testid=live-conflicts]')`)
	if got := p.text("live-conflicts"); !strings.Contains(got, "jax/v3/rules.yaml") {
		t.Errorf("the conflict says %q", got)
	}
	if text := editorText(); !strings.Contains(text, "pagefork") || strings.Contains(text, "diskfork") {
		t.Errorf("after the disk's change the editor holds pagefork %v, diskfork %v; want the person's text", strings.Contains(text, "pagefork"), strings.Contains(text, "diskfork"))
	}
	p.wantDecision("the page's marker, still", "gpu", "(kDLCUDA, 0)")
	p.screenshot("11-live-conflict.png")
	eval[bool](p, `(document.querySelector('[data-testid=revert]').click(), true)`)
	if text := editorText(); strings.Contains(text, "pagefork") || !strings.Contains(text, "diskfork") {
		t.Errorf("after Revert file the editor holds pagefork %v, diskfork %v; want the disk's text", strings.Contains(text, "pagefork"), strings.Contains(text, "diskfork"))
	}
	p.paste("input-platform_version", "diskfork 1.0")
	p.wantDecision("the disk's marker", "gpu", "(kDLCUDA, 0)")

	// A typo saved on disk is refused where it is; the decision stands.
	good := readFile(t, rulesFile)
	writeFile(t, rulesFile, strings.Replace(good, "platform_version.contains(m.marker)", "platform_versoin.contains(m.marker)", 1))
	p.waitWithin(testenv.Patience(t), "the refusal", `!!document.querySelector('[data-testid=live-errors]')`)
	refusal, errs := p.text("live-refusal"), p.text("live-errors")
	if !strings.Contains(refusal, "refused at the compile step") || !strings.Contains(errs, "jax/v3/rules.yaml:") || !strings.Contains(errs, "platform_versoin") {
		t.Errorf("the refusal says %q, its errors %q; want the compile step, the file and line, and the typo", refusal, errs)
	}
	p.wantDecision("the last good rules deciding", "gpu", "(kDLCUDA, 0)")
	p.screenshot("12-live-refused.png")
	writeFile(t, rulesFile, good)
	p.waitWithin(testenv.Patience(t), "the refusal withdrawn", `document.querySelector('[data-testid=live]').hidden`)

	// A new version moved in whole appears in the menu, as the default.
	staging := filepath.Join(t.TempDir(), "v4")
	if err := os.CopyFS(staging, os.DirFS(filepath.Dir(rulesFile))); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(staging, "manifest.yaml")
	writeFile(t, manifest, string(ruletest.AsVersion([]byte(readFile(t, manifest)), "v4")))
	if err := os.Rename(staging, filepath.Join(dir, "jax", "v4")); err != nil {
		t.Fatal(err)
	}
	p.waitWithin(testenv.Patience(t), "jax@v4 in the menu", `[...document.querySelector('[data-testid=ruleset]').options].some((o) => o.value === 'jax@v4' && o.text.includes('default'))`)
	if !eval[bool](p, `window.sameDocument === true`) {
		t.Errorf("the page was reloaded")
	}
}

// writeTimings adds figures to testout/playground/timings-live.json.
func writeTimings(t *testing.T, figures map[string]any) {
	t.Helper()
	data, _ := json.MarshalIndent(figures, "", "  ")
	if err := os.MkdirAll(testOut, 0o755); err == nil {
		os.WriteFile(filepath.Join(testOut, "timings-live.json"), append(data, '\n'), 0o644)
	}
}
