package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
)

// issuePattern is issue 25's: 378 characters that cel-go charged by
// their length, and that RE2 compiles to about 84,000 instructions.
var issuePattern = strings.Repeat(".{0,1000}", 42) + "b"

// TestLoadRefusesCostlyPatterns puts into jax@v3 a matches whose cost on
// a platform_version of MaxStringLen passes the cost limit, or has no
// bound (issue 25): Load refuses it at the call, with the code given.
func TestLoadRefusesCostlyPatterns(t *testing.T) {
	const rulesFile = "jax/v3/rules.yaml"
	tests := []struct {
		name, when string
		code       engine.Code
		at         string // the error points at the first occurrence of this text
	}{
		{"issue 25's rule", "platform == 'evil' && platform_version.matches('" + issuePattern + "')", engine.CodeCostLimit, "('.{0,1000}"},
		{"one instruction over the limit", "platform_version.matches('.{0,121}b')", engine.CodeCostLimit, "('.{0,121}b')"},
		{"an input as the pattern", "'a'.matches(platform_version)", engine.CodeCostLimit, "(platform_version)"},
		{"a pattern built from literals", "platform_version.matches('.{0,10}' + 'b')", engine.CodeCostLimit, "('.{0,10}'"},
		{"the global form", "matches(platform_version, '.{0,300}b')", engine.CodeCostLimit, "(platform_version, '"},
		{"a repeated group", "platform_version.matches('(?:" + strings.Repeat(".", 30) + "){1000}')", engine.CodeCostLimit, "('(?:"},
		{"a pattern over MaxRegexInsts", "platform_version.matches('" + strings.Repeat(".{0,1000}", 600) + "')", engine.CodeCostLimit, "('.{0,1000}"},
		{"a string of no known size", "gpu_matches.size() > 0 && gpu_matches[0].marker.matches('^cuda')", engine.CodeCostLimit, "('^cuda')"},
		{"a string built before a pattern", "platform_version.replace('', platform_version) != '' && platform_version.matches('.{0,300}b')", engine.CodeCostLimit, "('', platform_version)"},
		{"a pattern before a string built", "platform_version.matches('.{0,300}b') && platform_version.replace('', platform_version) != ''", engine.CodeCostLimit, "('.{0,300}b')"},
		{"a pattern that does not compile", "platform_version.matches('(cuda')", engine.CodeCELType, "('(cuda"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := versionFS(t, "v3")
			text := edit(t, fsys, rulesFile, "when: platform == 'cpu'", `when: "`+tt.when+`"`)
			start := time.Now()
			cat, err := engine.Load(fsys, engine.Options{})
			if cat != nil || err == nil {
				t.Fatalf("Load accepted %s", tt.when)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Load took %v to refuse it", d)
			}
			errs := engine.Errors(err)
			if len(errs) != 1 || errs[0].Code != tt.code {
				t.Fatalf("Load(%s) got %v, want one %s", tt.when, err, tt.code)
			}
			line, col := positionOf(t, text, tt.at)
			if p := errs[0].Pos; p == nil || p.File != "rules/"+rulesFile || p.Line != line || p.Column != col {
				t.Errorf("error at %v, want rules/%s:%d:%d (at %q):\n%v", p, rulesFile, line, col, tt.at, errs[0])
			}
			if errs[0].Hint == "" {
				t.Errorf("no hint: %v", errs[0])
			}
		})
	}
}

// TestBoundedPatternsAnswerQuickly: a pattern whose cost fits the limit
// on a platform_version of MaxStringLen loads, and decides on the worst
// such input (no match, so RE2 tries every position; a later rule then
// decides) within 100 ms.
func TestBoundedPatternsAnswerQuickly(t *testing.T) {
	worst := strings.Repeat("a", engine.MaxStringLen)
	for _, pattern := range []string{
		"^cuda 1[2-9]",
		"cuda [0-9]+",
		".{0,120}b", // 243 instructions: 99,559 of the 100,000, the most an input's matches may cost
	} {
		fsys := versionFS(t, "v3")
		edit(t, fsys, "jax/v3/rules.yaml", "when: platform == 'cpu'", `when: "platform == 'cpu' || platform_version.matches('`+pattern+`')"`)
		cat, err := engine.Load(fsys, engine.Options{SkipTests: true})
		if err != nil {
			t.Errorf("Load refused %s:\n%v", pattern, err)
			continue
		}
		rs := ruleSet(t, cat, "jax@v3")
		in := engine.Input{"platform": "evil", "platform_version": worst}
		d := time.Hour // the best of 5: a shared machine's pauses are not the engine's
		for range 5 {
			start := time.Now()
			d0, err0 := rs.Resolve(context.Background(), in) // inputs this long are never memoised
			d = min(d, time.Since(start))
			if d0.Rule == "cpu" || engine.Errors(err0) != nil && engine.Errors(err0)[0].Code.Input() {
				t.Fatalf("%s: Resolve got %v, %v: the pattern matched, or the input is wrong", pattern, d0, err0)
			}
		}
		t.Logf("%s: %v", pattern, d)
		if limit := 100 * time.Millisecond * raceSlowdown; d > limit {
			t.Errorf("%s: Resolve on %d characters took %v, want under %v", pattern, engine.MaxStringLen, d, limit)
		}
	}
}

// TestMatchesChargedAtRunTime: an expression whose estimate passes the
// limit only because it repeats a matches is tracked, and the tracker
// charges each matches by its program (cel-go charged 1,000 a call
// here), so it stops at the limit.
func TestMatchesChargedAtRunTime(t *testing.T) {
	fsys := versionFS(t, "v3")
	edit(t, fsys, "jax/v3/rules.yaml", "when: platform == 'cpu'",
		`when: "platform == 'cpu' || gpu_markers.all(m, !(m.marker + platform_version).matches('.{0,100}b'))"`)
	cat, err := engine.Load(fsys, engine.Options{SkipTests: true})
	if err != nil {
		t.Fatal(err)
	}
	rs := ruleSet(t, cat, "jax@v3")
	_, err = rs.Resolve(context.Background(), engine.Input{"platform": "evil", "platform_version": strings.Repeat("a", engine.MaxStringLen-6)})
	if errs := engine.Errors(err); len(errs) != 1 || errs[0].Code != engine.CodeCostLimit {
		t.Errorf("Resolve got %v, want %s", err, engine.CodeCostLimit)
	}
}

// TestLoadBoundsPatternsCompiled: patterns that each fit the cost limit
// (on an empty literal, 80,003 instructions cost 8,001) are compiled
// once each, by their text, and a load that would compile more than
// MaxLoadRegexInsts of them in all (by their size bounds, 120,125 each)
// is refused at each pattern past it, across expressions, before it is
// compiled: a rules file of hundreds of such patterns compiles a few of
// them.
func TestLoadBoundsPatternsCompiled(t *testing.T) {
	pattern := func(i int) string { return strings.Repeat(".{0,1000}", 40) + fmt.Sprint(i) }
	call := func(i int) string { return "''.matches('" + pattern(i) + "')" }
	places := []string{
		"when: platform == 'cpu'",
		"when: platform == 'gpu' && gpu_matches.size() == 0",
		"when: platform == 'gpu' && local_hardware_id == null",
		"when: platform == 'tpu' && memory_kind != 'pinned_host'",
		"when: platform == 'tpu' && local_hardware_id == null",
	}
	load := func(patterns ...int) (string, error) {
		fsys := versionFS(t, "v3")
		var text string
		for i, p := range patterns {
			old := places[i]
			text = edit(t, fsys, "jax/v3/rules.yaml", old, `when: "`+strings.TrimPrefix(old, "when: ")+` && !`+call(p)+`"`)
		}
		_, err := engine.Load(fsys, engine.Options{SkipTests: true})
		return text, err
	}
	// The same pattern five times is compiled once; with another, two.
	if _, err := load(0, 0, 1, 0, 0); err != nil {
		t.Fatalf("Load refused two patterns of 80,003 instructions, one of them repeated:\n%v", err)
	}
	// A third pattern passes MaxLoadRegexInsts with the two before it.
	text, err := load(0, 1, 0, 2, 3)
	errs := engine.Errors(err)
	if len(errs) != 2 || errs[0].Code != engine.CodeCostLimit || errs[1].Code != engine.CodeCostLimit {
		t.Fatalf("Load got %v, want two %s, at the third and fourth patterns", err, engine.CodeCostLimit)
	}
	for i, p := range []int{2, 3} {
		line, col := positionOf(t, text, "('"+pattern(p))
		if pos := errs[i].Pos; pos == nil || pos.Line != line || pos.Column != col {
			t.Errorf("error at %v, want line %d column %d:\n%v", pos, line, col, errs[i])
		}
		if !strings.Contains(errs[i].Message, "patterns of a load compile to at most") || errs[i].Hint == "" {
			t.Errorf("the error does not say which limit, or has no hint:\n%v", errs[i])
		}
	}
}
