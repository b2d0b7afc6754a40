package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/fuzzbound"
)

// FuzzLoad feeds arbitrary rules.yaml text to the loader (the other three
// files of jax@v3 stay as they are). Load must never panic, and an input
// must be loaded and tested within fuzzTime and fuzzAlloc. Load either
// compiles the version or refuses it with errors that each have a code, a
// message and a position, inside the file when it is the fuzzed one. What
// it compiles must run its own cases: each passes, or says why not (an
// error with a code, or a decision its want does not match), and says the
// same when run again, from the memo. Seeds: testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	base := versionFS(f, "v3")
	f.Add(base["jax/v3/rules.yaml"].Data)
	f.Fuzz(func(t *testing.T, rulesYAML []byte) {
		fsys := versionFS(t, "v3")
		fsys["jax/v3/rules.yaml"].Data = rulesYAML
		type result struct {
			problems []string
			alloc    uint64
		}
		done := make(chan result, 1)
		go func() {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			problems := loadAndTest(fsys, rulesYAML)
			runtime.ReadMemStats(&after)
			done <- result{problems, after.TotalAlloc - before.TotalAlloc}
		}()
		select {
		case r := <-done:
			for _, p := range r.problems {
				t.Error(p)
			}
			if r.alloc > fuzzAlloc {
				t.Errorf("loading and testing the input allocated %d MiB, more than %d", r.alloc>>20, fuzzAlloc>>20)
			}
		case <-time.After(fuzzbound.Time(fuzzTime)):
			t.Fatalf("loading and testing the input has not returned after %v", fuzzbound.Time(fuzzTime))
		}
	})
}

// The bounds of one FuzzLoad input: loading jax@v3 and running its cases
// takes tens of milliseconds and megabytes, so an input that takes
// seconds or hundreds of megabytes is an attack the limits let through.
const (
	fuzzTime  = 2 * time.Second
	fuzzAlloc = 256 << 20
)

// loadAndTest loads fsys, whose rules.yaml is rulesYAML, runs the cases
// of what loads twice, and says what is wrong.
func loadAndTest(fsys fstest.MapFS, rulesYAML []byte) []string {
	var problems []string
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		// Lines end as YAML ends them: "\n", "\r\n" or "\r" alone.
		text := strings.ReplaceAll(string(rulesYAML), "\r\n", "\n")
		lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 1
		list := engine.Errors(err)
		if len(list) == 0 {
			problems = append(problems, fmt.Sprintf("Load error is no *engine.Error: %v", err))
		}
		for _, e := range list {
			switch {
			case e.Code == "" || e.Message == "":
				problems = append(problems, fmt.Sprintf("error without code or message: %#v", e))
			case e.Pos == nil || e.Pos.File == "":
				problems = append(problems, fmt.Sprintf("error without a position: %v", e))
			case e.Pos.File == "rules/jax/v3/rules.yaml" && e.Pos.Line > lines:
				problems = append(problems, fmt.Sprintf("error at line %d of a %d-line file: %v", e.Pos.Line, lines, e))
			}
			_ = e.Error()
		}
		return problems
	}
	for _, rs := range cat.RuleSets() {
		first, again := rs.Test(context.Background()), rs.Test(context.Background())
		for i, r := range first {
			what := fmt.Sprintf("%s case %q", rs.Ref(), r.Name)
			switch {
			case r.Pos.File == "" || r.Pos.Line < 1:
				problems = append(problems, fmt.Sprintf("%s has no position: %v", what, r.Pos))
			case r.Pass && (r.Err != nil || !r.Want.Matches(r.Got)):
				problems = append(problems, fmt.Sprintf("%s passes with error %v, decision %v, want %v", what, r.Err, r.Got, r.Want))
			case !r.Pass && r.Err == nil && r.Want.Matches(r.Got):
				problems = append(problems, fmt.Sprintf("%s fails, yet decided %v as it wants", what, r.Got))
			case r.Err != nil && !allCoded(r.Err):
				problems = append(problems, fmt.Sprintf("%s: an error without a code: %v", what, r.Err))
			case again[i].Pass != r.Pass || !again[i].Got.Equal(r.Got) || codeOf(again[i].Err) != codeOf(r.Err):
				problems = append(problems, fmt.Sprintf("%s: %v (%v), then from the memo %v (%v)", what, r.Got, r.Err, again[i].Got, again[i].Err))
			}
		}
	}
	return problems
}

func allCoded(err error) bool {
	list := engine.Errors(err)
	for _, e := range list {
		if e.Code == "" {
			return false
		}
	}
	return len(list) > 0
}

func codeOf(err error) engine.Code {
	if list := engine.Errors(err); len(list) > 0 {
		return list[0].Code
	}
	return ""
}

// FuzzDecodeInput feeds arbitrary lines to `resolve --json`'s decoder. A
// line it accepts must resolve without an input error, and must decide the
// same after a trip through JSON. Seeds: testdata/fuzz/FuzzDecodeInput.
func FuzzDecodeInput(f *testing.F) {
	f.Add([]byte(`{"platform":"gpu","platform_version":"cuda 12030","memory_kind":"device","local_hardware_id":0,"shards":1}`))
	rs := ruleSet(f, loadEmbedded(f, engine.Options{MemoSize: 64}), "jax")
	f.Fuzz(func(t *testing.T, line []byte) {
		in, err := rs.DecodeInput(line)
		if err != nil {
			if len(engine.Errors(err)) != 1 {
				t.Fatalf("DecodeInput error is not an *engine.Error: %v", err)
			}
			return
		}
		d, err := rs.Resolve(context.Background(), in)
		if err != nil {
			t.Fatalf("DecodeInput accepted %q but Resolve failed: %v", line, err)
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		in2, err := rs.DecodeInput(again)
		if err != nil {
			t.Fatalf("re-encoded input %s is refused: %v", again, err)
		}
		if d2, err := rs.Resolve(context.Background(), in2); err != nil || !d2.Equal(d) {
			t.Fatalf("input %q decides %v, after JSON %v (%v)", line, d, d2, err)
		}
	})
}
