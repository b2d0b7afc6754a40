package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
)

// decisionWasm is the decision module built from this checkout, cached
// by source hash. Its tests skip under -short, as every host's do; its
// benchmarks run under -short, which spares them the compiler module's
// build in TestMain.
var decisionWasm = sync.OnceValues(func() ([]byte, error) {
	data, err := decisionwasm.Bytes()
	return data, err
})

// decisionCache is one compilation cache for every test and benchmark:
// the module compiles once per process.
var decisionCache = wazero.NewCompilationCache()

func compileDecision(t testing.TB) *DecisionModule {
	t.Helper()
	wasm, err := decisionWasm()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := CompileDecision(ctx, DecisionConfig{Module: wasm, Cache: decisionCache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	return m
}

var nativeCatalog = sync.OnceValues(func() (*engine.Catalog, error) { return engine.Load(rules.FS, engine.Options{}) })

// TestDecisionMatchesEngine: every embedded version's plan, loaded from
// rules.Plans into the decision module, answers every case of its
// tests.yaml, and lines that are not valid, with the native engine's
// bytes and status: the decision's JSON, or the error object and
// input_error or eval_error that the compiler module answers.
func TestDecisionMatchesEngine(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	cat, err := nativeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	odd := []string{``, `{`, `[]`, `{"a":1} x`, `{"platform":1}`, `{"nope":true}`, `{"platform":"gpu","platform":"cpu"}`, "{\"platform\":\"\\ud800<&>\"}"}
	for _, rs := range cat.RuleSets() {
		t.Run(rs.Ref(), func(t *testing.T) {
			d, err := m.NewDecider(ctx, rules.Plans, rs.Ref())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close(ctx)
			var lines [][]byte
			for _, c := range rs.Cases() {
				line, err := json.Marshal(c.Input)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, line)
			}
			for _, line := range odd {
				lines = append(lines, []byte(line))
			}
			for _, line := range lines {
				sameAsEngine(t, d, rs, line, false)
			}
		})
	}
}

// TestDecisionExplainMatchesEngine: every embedded version's plan,
// loaded from rules.Plans into the decision module, explains every case
// of its tests.yaml, and lines that are not valid, with the native
// engine's bytes (engine.RuleSet.ExplainJSON), or its error.
func TestDecisionExplainMatchesEngine(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	cat, err := nativeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	odd := []string{``, `{`, `{"platform":1}`, `{"nope":true}`, "{\"platform\":\"\\ud800<&>\"}"}
	for _, rs := range cat.RuleSets() {
		t.Run(rs.Ref(), func(t *testing.T) {
			d, err := m.NewDecider(ctx, rules.Plans, rs.Ref())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close(ctx)
			var lines [][]byte
			for _, c := range rs.Cases() {
				line, err := json.Marshal(c.Input)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, line)
			}
			for _, line := range odd {
				lines = append(lines, []byte(line))
			}
			for _, line := range lines {
				want, werr := rs.ExplainJSON(ctx, line)
				got, gerr := d.ExplainJSON(ctx, line)
				var ge *engine.Error
				switch {
				case werr != nil && (!errors.As(gerr, &ge) || !bytes.Equal(contract.ErrorJSON(ge), contract.ErrorJSON(werr))):
					t.Errorf("ExplainJSON(%s) = %v; want the error %v", line, gerr, werr)
				case werr == nil && (gerr != nil || !bytes.Equal(got, want)):
					t.Errorf("ExplainJSON(%s)\n got %.300s, %v\nwant %.300s", line, got, gerr, want)
				}
			}
		})
	}
}

// TestExplainJSONErrors: ExplainJSON refuses what DecideJSON refuses,
// with the same errors: an input error, a line past the hosts' limit, a
// canceled context.
func TestExplainJSONErrors(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	ctx := context.Background()
	d, err := m.NewDecider(ctx, rules.Plans, "jax@v3")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	for _, line := range []string{`{"platform":"gpu"}`, `{"platform":"gpu",`, `{"platform":"` + strings.Repeat("x", contract.MaxLineLen) + `"}`} {
		_, derr := d.DecideJSON(ctx, []byte(line))
		_, xerr := d.ExplainJSON(ctx, []byte(line))
		var e *engine.Error
		if !errors.As(xerr, &e) || !e.Code.Input() || xerr.Error() != derr.Error() {
			t.Errorf("ExplainJSON(%.40s...) = %v; want DecideJSON's input error %v", line, xerr, derr)
		}
	}
	out, err := d.ExplainJSON(ctx, []byte(`{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}`))
	if err != nil || !bytes.HasPrefix(out, []byte(`{"decision":{"device_type":"kDLCPU"`)) || !bytes.Contains(out, []byte(`"trace":{"rules":[`)) {
		t.Errorf("ExplainJSON(cpu) = %.120s, %v; want kDLCPU and its trace", out, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	var e *engine.Error
	if _, err := d.ExplainJSON(canceled, []byte(`{}`)); !errors.As(err, &e) || e.Code != engine.CodeCanceled {
		t.Errorf("ExplainJSON on a canceled context = %v, want canceled", err)
	}
}

// TestDecideJSONErrors: DecideJSON answers as engine.RuleSet.ResolveJSON
// does, an *engine.Error for an input it refuses, and a line past the
// hosts' limit is too_long, as on every host.
func TestDecideJSONErrors(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	ctx := context.Background()
	d, err := m.NewDecider(ctx, rules.Plans, "jax@v3")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	for _, c := range []struct {
		line string
		code engine.Code
	}{
		{`{"platform":"gpu"}`, engine.CodeMissingField},
		{`{"platform":"gpu","platform_version":"cuda","local_hardware_id":"0"}`, engine.CodeWrongType},
		{`{"platform":"gpu",`, engine.CodeJSON},
		{`{"platform":"` + strings.Repeat("x", contract.MaxLineLen) + `"}`, engine.CodeTooLong},
	} {
		_, err := d.DecideJSON(ctx, []byte(c.line))
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != c.code || !e.Code.Input() {
			t.Errorf("DecideJSON(%.40s...) = %v, want an input error %s", c.line, err, c.code)
		}
	}
	if _, err := d.DecideJSON(ctx, []byte(`{"platform":"`+strings.Repeat("x", contract.MaxLineLen)+`"}`)); err == nil || err.Error() != contract.TooLong().Error() {
		t.Errorf("a line past MaxLineLen: %v, want %v", err, contract.TooLong())
	}
	out, err := d.DecideJSON(ctx, []byte(`{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}`))
	if err != nil || !bytes.Contains(out, []byte(`"device_type":"kDLCPU"`)) {
		t.Errorf("DecideJSON(cpu) = %s, %v; want kDLCPU", out, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	var e *engine.Error
	if _, err := d.DecideJSON(canceled, []byte(`{}`)); !errors.As(err, &e) || e.Code != engine.CodeCanceled {
		t.Errorf("DecideJSON on a canceled context = %v, want canceled", err)
	}
}

// TestNewDeciderRefuses: bytes that are not a plan, a version the set
// lacks and a module that is not WebAssembly are refused with their
// codes, and the module goes on loading good plans.
func TestNewDeciderRefuses(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	ctx := context.Background()
	cases := []struct {
		plan []byte
		ref  string
		code engine.Code
	}{
		{[]byte("not a plan"), "", "bad_plan"},
		{rules.Plans[:len(rules.Plans)/2], "jax@v3", "bad_plan"},
		{rules.Plans, "jax@v99", engine.CodeNoRuleSet},
		{rules.Plans, "", "bad_plan"}, // a set is not a plan
	}
	for _, c := range cases {
		d, err := m.NewDecider(ctx, c.plan, c.ref)
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != c.code {
			t.Errorf("NewDecider(%.12q, %q) = %v, want %s", c.plan, c.ref, err, c.code)
		}
		if d != nil {
			d.Close(ctx)
		}
	}
	if _, err := CompileDecision(ctx, DecisionConfig{Module: []byte("plain text")}); err == nil || !strings.Contains(err.Error(), "not WebAssembly") {
		t.Errorf("CompileDecision(text) = %v, want a module_error", err)
	}
	cat, err := nativeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := cat.RuleSet("numpy")
	data, err := rs.Plan()
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.NewDecider(ctx, data, "")
	if err != nil {
		t.Fatalf("NewDecider(a plan of %s) = %v", rs.Ref(), err)
	}
	d.Close(ctx)
}

// TestDecisionImportsHostFunctions: the decision module imports exactly
// the compiler module's two host functions, with their signatures, and
// nothing else, not even WASI's (ABI.md, "Start-up").
func TestDecisionImportsHostFunctions(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasm, err := decisionWasm()
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.ImportedFunctions() {
		module, name, _ := f.Import()
		got = append(got, fmt.Sprintf("%s.%s%v->%v", module, name, f.ParamTypes(), f.ResultTypes()))
	}
	i32 := []api.ValueType{api.ValueTypeI32}
	want := []string{
		fmt.Sprintf("%s.platform_version%v->%v", contract.HostModule, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, i32),
		fmt.Sprintf("%s.copy_to_host%v->%v", contract.HostModule, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, i32),
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the decision module imports %q; want %q", got, want)
	}
	if _, ok := m.ExportedMemories()["memory"]; !ok {
		t.Error("the decision module exports no memory")
	}
}

// decisionLine is a JSON line of an unknown GPU platform never seen
// before, as uniqueInput: a miss in every memo.
func decisionLine(i int64) []byte {
	return []byte(`{"platform":"gpu","platform_version":"fork ` + strconv.FormatInt(i, 10) + `","local_hardware_id":0}`)
}

// BenchmarkDecisionMiss compares a decision of jax's newest version on a
// line never seen before: "native-miss" is engine.RuleSet.ResolveJSON
// (cel-go, its memo missing), "native-miss-input" engine.RuleSet.Resolve
// of the same input already decoded (BenchmarkWasmResolve's native-miss,
// the baseline), "plan" the plan decided natively, and "module"
// the decision module in wazero:
//
//	go test ./wasmhost -short -run '^$' -bench 'BenchmarkDecisionMiss' -benchmem -count 5
func BenchmarkDecisionMiss(b *testing.B) {
	ctx := context.Background()
	cat, err := nativeCatalog()
	if err != nil {
		b.Fatal(err)
	}
	native, _ := cat.RuleSet("jax")
	var n int64
	b.Run("native-miss", func(b *testing.B) {
		for b.Loop() {
			n++
			if _, err := native.ResolveJSON(ctx, decisionLine(n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("native-miss-input", func(b *testing.B) {
		for b.Loop() {
			n++
			if _, err := native.Resolve(ctx, uniqueInput(n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plan", func(b *testing.B) {
		data, err := native.Plan()
		if err != nil {
			b.Fatal(err)
		}
		p, err := plan.Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			n++
			if _, err := p.Decide(decisionLine(n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("module", func(b *testing.B) {
		d, err := compileDecision(b).NewDecider(ctx, rules.Plans, native.Ref())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			n++
			if _, err := d.DecideJSON(ctx, decisionLine(n)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecisionStart measures a host's start to its first decision:
// compile the decision module from a warm compilation cache, instantiate
// it, load jax's newest plan from rules.Plans, decide one line:
//
//	go test ./wasmhost -short -run '^$' -bench 'BenchmarkDecisionStart' -count 5
func BenchmarkDecisionStart(b *testing.B) {
	ctx := context.Background()
	wasm, err := decisionWasm()
	if err != nil {
		b.Fatal(err)
	}
	cache := wazero.NewCompilationCache()
	defer cache.Close(ctx)
	start := func() {
		m, err := CompileDecision(ctx, DecisionConfig{Module: wasm, Cache: cache})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close(ctx)
		d, err := m.NewDecider(ctx, rules.Plans, "jax@v3")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.DecideJSON(ctx, decisionLine(1)); err != nil {
			b.Fatal(err)
		}
	}
	start() // fills the cache
	for b.Loop() {
		start()
	}
}

// TestDecisionReleasedHandle: after dlroute_release a handle answers
// bad_handle, and DecideJSON says the module answered outside what it
// asked for.
func TestDecisionReleasedHandle(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	m := compileDecision(t)
	ctx := context.Background()
	d, err := m.NewDecider(ctx, rules.Plans, "jax@v3")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if _, err := d.mod.ExportedFunction("dlroute_release").Call(ctx, uint64(d.handle)); err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}`)
	if _, status, err := d.Decide(ctx, line); err != nil || status != contract.StatusBadHandle {
		t.Errorf("Decide after release = %s, %v; want bad_handle", status, err)
	}
	var e *engine.Error
	if _, err := d.DecideJSON(ctx, line); !errors.As(err, &e) || e.Code != CodeModule {
		t.Errorf("DecideJSON after release = %v, want %s", err, CodeModule)
	}
}
