package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// The decision module against cel-go on generated inputs: the engine is
// the oracle, the module (wasm/decision) the evaluator under test. Each
// input is built from one embedded version's declared inputs, with the
// values its rules compare them with (the plan's constants, as `dlroute
// diff` derives a domain from the rules) and values no rule expects:
// random strings, nulls, wrong types, fields left out or not declared.

// fuzzVersion is one embedded version: its rules natively, and the
// constants of its plan, by declared kind, to draw inputs from.
type fuzzVersion struct {
	rs      *engine.RuleSet
	p       *plan.Plan
	strings []string
	ints    []int64
}

var fuzzVersions = sync.OnceValues(func() ([]fuzzVersion, error) {
	cat, err := nativeCatalog()
	if err != nil {
		return nil, err
	}
	set, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		return nil, err
	}
	var out []fuzzVersion
	for _, e := range set {
		rs, err := cat.RuleSet(e.Ref)
		if err != nil {
			return nil, err
		}
		p, err := plan.Decode(e.Plan)
		if err != nil {
			return nil, err
		}
		v := fuzzVersion{rs: rs, p: p}
		collectConstants(p, &v)
		out = append(out, v)
	}
	return out, nil
})

// collectConstants gathers the string and int constants of p's nodes and
// its imports': the values its rules compare inputs with.
func collectConstants(p *plan.Plan, v *fuzzVersion) {
	var walk func(c any)
	walk = func(c any) {
		switch x := c.(type) {
		case string:
			if len(x) <= 64 {
				v.strings = append(v.strings, x)
			}
		case int64:
			v.ints = append(v.ints, x, x+1, x-1)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case *plan.Map:
			for i := range x.Keys {
				walk(x.Keys[i])
				walk(x.Vals[i])
			}
		}
	}
	for _, n := range p.Nodes {
		if n.Op == plan.OpConst {
			walk(n.Const)
		}
	}
	for _, imp := range p.Imports {
		collectConstants(imp, v)
	}
}

var fuzzOddStrings = []string{"", "cuda", "rocm 6.0", "PJRT C API\ncuda 12030", "<unknown>", "é", "\u2028", "\x01", "\"\\", "9223372036854775808", "-0", "1e400", "\ud7ff\U0010ffff"}

// fuzzLine makes one JSON input line for v from rng.
func fuzzLine(rng *rand.Rand, v *fuzzVersion) []byte {
	in := map[string]any{}
	for _, decl := range v.p.Inputs {
		if !decl.Required && rng.IntN(4) == 0 {
			continue // its default
		}
		in[decl.Name] = v.value(rng, decl.Type)
	}
	for range rng.IntN(3) { // made wrong
		decl := v.p.Inputs[rng.IntN(len(v.p.Inputs))]
		switch rng.IntN(8) {
		case 0:
			delete(in, decl.Name)
		case 1:
			in["no_such_input"] = true
		case 2:
			in[decl.Name] = nil
		default:
			in[decl.Name] = v.odd(rng)
		}
	}
	line, err := json.Marshal(in)
	if err != nil {
		panic(err) // every value above is JSON
	}
	return line
}

// value is a value of type t, mostly one the rules name.
func (v *fuzzVersion) value(rng *rand.Rand, t *plan.Type) any {
	if t.Nullable && rng.IntN(6) == 0 {
		return nil
	}
	switch t.Kind {
	case plan.KindString:
		if len(v.strings) > 0 && rng.IntN(4) != 0 {
			return v.strings[rng.IntN(len(v.strings))]
		}
		return fuzzOddStrings[rng.IntN(len(fuzzOddStrings))]
	case plan.KindInt, plan.KindUint:
		if len(v.ints) > 0 && rng.IntN(4) != 0 {
			return v.ints[rng.IntN(len(v.ints))]
		}
		return []int64{0, 1, -1, 1 << 62, -1 << 63}[rng.IntN(5)]
	case plan.KindDouble:
		return []float64{0.5, -1, 1e300, 2, 1e-7}[rng.IntN(5)]
	case plan.KindBool:
		return rng.IntN(2) == 0
	case plan.KindList:
		out := make([]any, rng.IntN(4))
		for i := range out {
			out[i] = v.value(rng, t.Elem)
		}
		return out
	case plan.KindMap:
		out := map[string]any{}
		for range rng.IntN(3) {
			out[v.value(rng, &plan.Type{Kind: plan.KindString}).(string)] = v.value(rng, t.Elem)
		}
		return out
	}
	return v.odd(rng)
}

// odd is a value of any type.
func (v *fuzzVersion) odd(rng *rand.Rand) any {
	switch rng.IntN(7) {
	case 0:
		return fuzzOddStrings[rng.IntN(len(fuzzOddStrings))]
	case 1:
		return rng.Int64() >> rng.IntN(64)
	case 2:
		return rng.NormFloat64() * 1e3
	case 3:
		return rng.IntN(2) == 0
	case 4:
		return []any{"cuda", 1, nil}
	case 5:
		return map[string]any{"a": []any{}}
	}
	return strconv.Itoa(rng.IntN(100))
}

// sameAsEngine decides line with the module and the engine, and reports
// where their bytes or statuses differ; explain too, where explain is set.
func sameAsEngine(t testing.TB, d *Decider, rs *engine.RuleSet, line []byte, explain bool) {
	t.Helper()
	ctx := context.Background()
	want, werr := rs.ResolveJSON(ctx, line)
	wantStatus := contract.StatusOK
	if werr != nil {
		want, wantStatus = contract.ErrorJSON(werr), contract.Classify(werr)
	}
	got, status, err := d.Decide(ctx, line)
	if err != nil {
		t.Fatalf("%s: Decide(%s) = %v", rs.Ref(), line, err)
	}
	if status != wantStatus || !bytes.Equal(got, want) {
		t.Errorf("%s: Decide(%s)\n got %s %s\nwant %s %s", rs.Ref(), line, status, got, wantStatus, want)
	}
	if !explain {
		return
	}
	wantX, werr := rs.ExplainJSON(ctx, line)
	gotX, gerr := d.ExplainJSON(ctx, line)
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil || !bytes.Equal(contract.ErrorJSON(werr), contract.ErrorJSON(gerr)) {
			t.Errorf("%s: ExplainJSON(%s) = %v; want the error %v", rs.Ref(), line, gerr, werr)
		}
		return
	}
	if !bytes.Equal(gotX, wantX) {
		t.Errorf("%s: ExplainJSON(%s)\n got %.400s\nwant %.400s", rs.Ref(), line, gotX, wantX)
	}
}

// fuzzDeciders is one decider per embedded version, shared by every
// fuzz input of the process.
var fuzzDeciders = sync.OnceValues(func() ([]*Decider, error) {
	wasm, err := decisionWasm()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	m, err := CompileDecision(ctx, DecisionConfig{Module: wasm, Cache: decisionCache})
	if err != nil {
		return nil, err
	}
	vs, err := fuzzVersions()
	if err != nil {
		return nil, err
	}
	out := make([]*Decider, len(vs))
	for i, v := range vs {
		if out[i], err = m.NewDecider(ctx, rules.Plans, v.rs.Ref()); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// fuzzSetup is the embedded versions and a decider for each.
func fuzzSetup(t *testing.T) ([]fuzzVersion, []*Decider) {
	t.Helper()
	vs, err := fuzzVersions()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := fuzzDeciders()
	if err != nil {
		t.Fatal(err)
	}
	return vs, ds
}

// TestDecisionMatchesEngineOnGenerated: CI's share of the fuzzer, a
// fixed count of generated inputs per embedded version (their
// explanations too, every fourth), each answered by the module with
// cel-go's bytes. FuzzDecisionAgainstEngine runs the same for longer.
func TestDecisionMatchesEngineOnGenerated(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	vs, ds := fuzzSetup(t)
	for i := range vs {
		rng := rand.New(rand.NewPCG(uint64(i), 37))
		for k := range 150 {
			sameAsEngine(t, ds[i], vs[i].rs, fuzzLine(rng, &vs[i]), k%4 == 0)
		}
		if t.Failed() {
			return // the first version that differs says enough
		}
	}
}

// FuzzDecisionAgainstEngine compares the module with cel-go on inputs
// generated from each embedded version's declared inputs and constants,
// and on raw lines (noise that starts with '{'):
//
//	go test ./wasmhost -run '^$' -fuzz FuzzDecisionAgainstEngine -fuzztime 1000000x
func FuzzDecisionAgainstEngine(f *testing.F) {
	f.Add(uint16(0), uint64(1), []byte{})
	f.Add(uint16(3), uint64(2), []byte(`{"platform":"gpu","platform_version":"cuda"}`))
	f.Fuzz(func(t *testing.T, version uint16, seed uint64, noise []byte) {
		vs, ds := fuzzSetup(t)
		i := int(version) % len(vs)
		line := noise
		if len(noise) == 0 || noise[0] != '{' {
			line = fuzzLine(rand.New(rand.NewPCG(seed, uint64(len(noise)))), &vs[i])
		}
		sameAsEngine(t, ds[i], vs[i].rs, line, seed%4 == 0)
	})
}
