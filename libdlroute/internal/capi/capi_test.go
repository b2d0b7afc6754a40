package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/rules"
)

var lines = []string{
	`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}`,
	`{"platform":"gpu","platform_version":"rocm 60300","memory_kind":"pinned_host","local_hardware_id":2}`,
	`{"platform":"tpu","platform_version":"PJRT C API\nTFRT TPU","local_hardware_id":1}`,
	`{"platform":7}`,
	`{"platform":"cpu","x":1}`,
	`[1,2]`,
}

func openRulesT(t *testing.T, path string) uint64 {
	t.Helper()
	h, out, st := Open(path, "")
	if st != StatusOK {
		t.Fatalf("Open(%q): %s %s", path, st, out)
	}
	t.Cleanup(func() { Close(h) })
	return h
}

func takeRuleSet(t *testing.T, h uint64, ref string) uint64 {
	t.Helper()
	rh, out, st := RuleSet(h, ref)
	if st != StatusOK {
		t.Fatalf("RuleSet(%q): %s %s", ref, st, out)
	}
	return rh
}

// TestResolveJSON: every answer is the line `dlroute resolve --json`
// writes for the input alone, from the embedded rules (compiled a version
// at a time) and from a directory (compiled at open) alike.
func TestResolveJSON(t *testing.T) {
	testenv.ContentOnly(t)
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	dir := filepath.Join(wd, "..", "..", "..", "rules")
	for _, path := range []string{"", dir} {
		h := openRulesT(t, path)
		for _, ref := range []string{"jax", "jax@v1", "exchange", "exchange@v1"} {
			rs, _ := cat.RuleSet(ref)
			rh := takeRuleSet(t, h, ref)
			for _, line := range lines {
				out, err := rs.ResolveJSON(context.Background(), []byte(line))
				want := contract.Line(1, out, err)
				for range 2 { // the second from the memo
					got, st := ResolveJSON(context.Background(), rh, []byte(line))
					if !bytes.Equal(got, want) {
						t.Errorf("%q %s ResolveJSON(%s) = %s, want %s", path, ref, line, got, want)
					}
					if (st == StatusOK) != (err == nil) {
						t.Errorf("%q %s ResolveJSON(%s): status %s with error %v", path, ref, line, st, err)
					}
				}
			}
		}
	}
}

func TestRuleSetErrors(t *testing.T) {
	testenv.ContentOnly(t)
	whole, _ := engine.Load(rules.FS, engine.Options{})
	h := openRulesT(t, "")
	for _, ref := range []string{"nosuch", "jax@v99"} {
		_, want := whole.RuleSet(ref)
		_, out, st := RuleSet(h, ref)
		var e engine.Error
		if st != StatusNoRuleSet || json.Unmarshal(out, &e) != nil || e.Error() != want.Error() {
			t.Errorf("RuleSet(%s) = %s %s, want no_ruleset %v", ref, st, out, want)
		}
	}
	if a, b := takeRuleSet(t, h, "jax"), takeRuleSet(t, h, "jax@v3"); a != b {
		t.Errorf("jax and jax@v3 have handles %d and %d", a, b)
	}
	if _, _, st := RuleSet(12345678, "jax"); st != StatusBadHandle {
		t.Errorf("RuleSet of a made-up handle: %s", st)
	}
	if _, out, st := Open("/nonexistent", ""); st != StatusLoadError || !bytes.HasPrefix(out, []byte("[")) {
		t.Errorf("Open(/nonexistent) = %s %s", st, out)
	}
	if _, out, st := Open("", "not a key"); st != StatusLoadError {
		t.Errorf("Open with a key and no bundle = %s %s", st, out)
	}
}

// TestResolveBinary: the binary entry decides as the JSON one does.
func TestResolveBinary(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	rh := takeRuleSet(t, h, "jax")
	desc, _ := Describe(rh)
	var d struct {
		Inputs []engine.InputDecl
		Rules  []string
	}
	if err := json.Unmarshal(desc, &d); err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"platform": "gpu", "platform_version": "rocm 60300", "memory_kind": "pinned_host", "local_hardware_id": int64(2)}
	var b []byte
	for _, decl := range d.Inputs {
		v, ok := in[decl.Name]
		var err error
		if b, err = contract.AppendField(b, v, ok); err != nil {
			t.Fatal(err)
		}
	}
	out, st := Resolve(context.Background(), rh, b)
	if st != StatusOK {
		t.Fatalf("Resolve: %s %s", st, out)
	}
	got, err := contract.DecodeDecision(out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != contract.KindDevice || got.Code != 11 || got.ID != 2 || d.Rules[got.Rule] != "gpu" {
		t.Errorf("Resolve(rocm pinned_host) = %+v, want kDLROCMHost (11), 2 by rule gpu", got)
	}
	if _, st := Resolve(context.Background(), rh, []byte{9, 9, 9}); st != StatusBadArgument {
		t.Errorf("Resolve(garbage) = %s, want bad_argument", st)
	}
}

func TestExchangeJSON(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	rh := takeRuleSet(t, h, "exchange")
	for _, c := range []struct {
		line   string
		step   contract.Step
		status Status
	}{
		{`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`, contract.StepCopyToHost, StatusOK},
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`, contract.StepInPlace, StatusOK},
		{`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"copy":false}`, contract.StepRaise, StatusOK},
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0,"copy":true}`, contract.StepRaise, StatusHostError},
	} {
		out, step, st := ExchangeJSON(context.Background(), rh, []byte(c.line))
		if step != c.step || st != c.status {
			t.Errorf("ExchangeJSON(%s) = step %d, %s %s; want step %d, %s", c.line, step, st, out, c.step, c.status)
		}
	}
}

// TestConcurrentClose: rule sets answer from many goroutines while their
// rules are closed under them; every call ends with an answer or
// bad_handle, never a fault (run with -race).
func TestConcurrentClose(t *testing.T) {
	h, _, _ := Open("", "")
	rh := takeRuleSet(t, h, "jax")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if _, st := ResolveJSON(context.Background(), rh, []byte(lines[0])); st != StatusOK && st != StatusBadHandle {
					t.Errorf("status %s", st)
					return
				}
			}
		}()
	}
	Close(h)
	wg.Wait()
	if _, st := ResolveJSON(context.Background(), rh, []byte(lines[0])); st != StatusBadHandle {
		t.Errorf("after Close: %s, want bad_handle", st)
	}
	if st := Close(h); st != StatusBadHandle {
		t.Errorf("Close twice: %s", st)
	}
}

// TestLazyCompileReuses: the embedded rules compiled a version at a time
// share what one compile made with the next: jax@v3, compiled as
// exchange's import, is the very rule set handed out for jax.
func TestLazyCompileReuses(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	takeRuleSet(t, h, "exchange")
	o, _ := rulesOf(h)
	imported := o.last.RuleSets()
	rh := takeRuleSet(t, h, "jax")
	r, _ := ruleSetOf(rh)
	i := slices.IndexFunc(imported, func(rs *engine.RuleSet) bool { return rs.Ref() == "jax@v3" })
	if i < 0 {
		t.Fatalf("exchange's compile holds %v, not its import jax@v3", imported)
	}
	if imported[i] != r.rs {
		t.Errorf("jax@v3 was compiled again after exchange imported it")
	}
}

// TestRuleSetReleaseWarning: a release ref that no version was checked
// against gets the handle of the version that answers it and the
// engine's warning as JSON, every time; a covered release gets no output.
func TestRuleSetReleaseWarning(t *testing.T) {
	testenv.ContentOnly(t)
	whole, _ := engine.Load(rules.FS, engine.Options{})
	wd, _ := os.Getwd()
	for _, path := range []string{"", filepath.Join(wd, "..", "..", "..", "rules")} {
		h := openRulesT(t, path)
		for _, ref := range []string{"jax==9.0", "jax==0.11.0.dev1", "jax==0.11.0", "numpy==2.4.6"} {
			rs, w, err := whole.Lookup(ref)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			if w != nil {
				want, _ = json.Marshal(w)
			}
			for range 2 { // the second with the handle already handed
				rh, out, st := RuleSet(h, ref)
				if st != StatusOK || !bytes.Equal(out, want) {
					t.Errorf("%q RuleSet(%s) = %s %s, want ok %s", path, ref, st, out, want)
				}
				if pinned := takeRuleSet(t, h, rs.Ref()); rh != pinned {
					t.Errorf("%q RuleSet(%s) = handle %d, %s's is %d", path, ref, rh, rs.Ref(), pinned)
				}
			}
		}
	}
}

// TestOpenDirParsedFileIsNotTaken: a hand-made parsed.bin beside the
// shipped text (issue 25's: `true` is `false`) does not change what a
// directory's rules decide; the embedded rules decide alike.
func TestOpenDirParsedFileIsNotTaken(t *testing.T) {
	testenv.ContentOnly(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, rules.FS); err != nil {
		t.Fatal(err)
	}
	backdoor, err := ruletest.Backdoor()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, engine.ParsedFile), backdoor, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, ""} {
		rh := takeRuleSet(t, openRulesT(t, path), "jax@v3")
		out, st := ResolveJSON(context.Background(), rh, []byte(`{"platform":"mystery","platform_version":"backdoor 1"}`))
		if st != StatusOK || !bytes.Contains(out, []byte("unsupported-platform")) {
			t.Errorf("Open(%q): resolve_json got %s %s, want the catch-all rule unsupported-platform", path, st, out)
		}
	}
}

// TestRuleSetsList: dlroute_rulesets lists every version of the rules,
// the newest of each name marked default, as `dlroute rules --json` does.
func TestRuleSetsList(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	out, st := RuleSets(h)
	var list []struct {
		Ref, Name, Version string
		Default            bool
	}
	if err := json.Unmarshal(out, &list); st != StatusOK || err != nil {
		t.Fatalf("RuleSets = %s %s (%v)", st, out, err)
	}
	defaults := map[string]string{}
	for _, e := range list {
		if e.Ref != e.Name+"@"+e.Version {
			t.Errorf("RuleSets: ref %q of %s %s", e.Ref, e.Name, e.Version)
		}
		if e.Default {
			defaults[e.Name] = e.Ref
		}
	}
	if defaults["jax"] == "" || defaults["exchange"] == "" || len(list) <= len(defaults) {
		t.Errorf("RuleSets: defaults %v of %d versions, want one for jax and exchange among older ones", defaults, len(list))
	}
	if _, st := RuleSets(h + 1000); st != StatusBadHandle {
		t.Errorf("RuleSets of a made-up handle: %s, want bad_handle", st)
	}
}

// TestNoCopierAsTheModuleSays: a copy onto a device, which the rules
// decide and no host makes, is host_error with contract.StepOf's
// no_copier error object, which the WebAssembly module's guest answers
// too (wasm/internal/guest: Exchange). It is not an eval_error, since the
// rules did decide.
func TestNoCopierAsTheModuleSays(t *testing.T) {
	testenv.ContentOnly(t)
	line := []byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0,"copy":true}`)
	h := openRulesT(t, "")
	out, _, status := ExchangeJSON(context.Background(), takeRuleSet(t, h, "exchange"), line)

	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet("exchange")
	if err != nil {
		t.Fatal(err)
	}
	in, err := rs.DecodeInput(line)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rs.Resolve(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	_, stepErr := contract.StepOf(d)
	want := contract.ErrorJSON(stepErr)
	if status != StatusHostError || !bytes.Equal(out, want) || !bytes.HasPrefix(out, []byte(`{"code":"no_copier",`)) {
		t.Errorf("a copy onto a device: %s %s; want host_error %s, as the module answers", status, out, want)
	}
}
