package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// The decision module's explanations against cel-go's on rule sets
// written for them: what the shipped versions' tests.yaml cases never
// reach (every call on every type, a failed import, a double JSON cannot
// write). engine/plan_explain_test.go holds package plan to the same.

// explainDecider compiles files (path: text, under "<name>/v1/",
// manifests and device types added) and returns the engine's version ref
// and a Decider of its plan.
func explainDecider(t *testing.T, ref string, files map[string]string) (*engine.RuleSet, *Decider) {
	t.Helper()
	fsys := fstest.MapFS{}
	for path, text := range files {
		fsys[path] = &fstest.MapFile{Data: []byte(text)}
		dir, _, _ := strings.Cut(path, "/")
		fsys[dir+"/v1/manifest.yaml"] = &fstest.MapFile{Data: []byte("name: " + dir + "\nversion: v1\ndescription: a test\nmirrors: {project: none}\n")}
		fsys[dir+"/v1/device_types.yaml"] = &fstest.MapFile{Data: []byte("device_types: {kDLCPU: 1}\n")}
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	data, err := rs.Plan()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := compileDecision(t).NewDecider(ctx, data, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(ctx) })
	return rs, d
}

// explainSweep is every function and operator a plan covers, on dyn
// inputs (a, b) and on nullable typed ones (engine/plan_explain_test.go's
// callSweep): an explanation shows each value, its result or cel-go's
// message.
var explainSweep = []string{
	"!a", "!t",
	"size(a)", "a.size()", "size(l)", "l.size()", "size(s)", "s.size()", "size(m)", "m.size()",
	"a + b", "l + l", "s + s", "i + i", "u + u", "d + d", "a + 1", "s + a", "l + a",
	"a * b", "i * i", "d * d", "u * u", "a * 2",
	"a < b", "a <= b", "a > b", "a >= b", "i < i", "s < s", "dyn(i) < d", "a < 1", "s < a", "t < t", "dyn(u) < i",
	"a in b", "a in l", "i in l", "s in m", "a in m", "1 in a",
	"int(a)", "int(s)", "int(d)", "int(u)", "string(a)", "string(i)", "string(d)", "string(t)", "string(u)", "dyn(a)",
	"a.contains(b)", "s.contains(s)", "a.startsWith(b)", "s.startsWith(a)", "a.endsWith(b)", "s.endsWith(s)",
	"a.indexOf(b)", "s.indexOf(s)", "a.split(b)", "s.split(s)",
	"a[b]", "l[i]", "m[s]", "a[0]", "a['k']", "a.k", "l[a]", "m[a]",
	"a == b", "a != b", "l == a", "dyn(i) == d",
	"a ? 1 : 2", "a && b", "a || b", "t && a", "a || t",
	"a.all(x, x == 1)", "a.exists(x, x)", "a.map(x, x)", "a.filter(x, x)", "a.exists_one(x, x)", "l.all(x, x > 0)", "m.exists(k, k == 'k')",
	"[a, b]", "{'a': a, 'b': b}", "{a: 1}",
}

// TestDecisionExplainsEveryCallAsCEL: on every pair of argument kinds,
// typed and dyn, the module explains each value of explainSweep with
// cel-go's result or message, byte for byte the engine's explanation.
func TestDecisionExplainsEveryCallAsCEL(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	var b strings.Builder
	b.WriteString("inputs:\n")
	for _, in := range []string{"a dyn", "b dyn", "l list(int)?", "s string?", "m map(string, int)?", "i int?", "u uint?", "d double?", "t bool?"} {
		name, typ, _ := strings.Cut(in, " ")
		fmt.Fprintf(&b, "  %s: {type: %q, default: null}\n", name, typ)
	}
	b.WriteString("values:\n")
	for i, e := range explainSweep {
		fmt.Fprintf(&b, "  v%d: %q\n", i, e)
	}
	b.WriteString("rules:\n  - id: all\n    when: true\n    device: {type: kDLCPU, id: 0}\n")
	rs, d := explainDecider(t, "sweep@v1", map[string]string{
		"sweep/v1/rules.yaml": b.String(),
		"sweep/v1/tests.yaml": "cases:\n  - {name: one, input: {}, want: {device_type: kDLCPU}}\n",
	})
	values := []string{`null`, `true`, `0`, `1`, `-1`, `1.5`, `1e-7`, `"a"`, `""`, `"<\u2028\u00e9>"`, `[1]`, `[]`, `{"k":1}`, `{}`, `["a","b"]`, `"k"`}
	typed := []string{``, `,"l":[1,2],"s":"ab","m":{"k":1},"i":2,"u":3,"d":2.5,"t":true`, `,"l":[],"s":"","m":{},"i":0,"u":0,"d":0,"t":false`}
	for _, a := range values {
		for _, b := range values {
			for _, rest := range typed {
				sameAsEngine(t, d, rs, []byte(`{"a":`+a+`,"b":`+b+rest+`}`), true)
				if t.Failed() {
					return // the first line that differs says enough
				}
			}
		}
	}
}

// TestDecisionExplainsAFailedImport: an import whose own decision fails
// is explained with the engine's empty decision and its rules tried, and
// the failure on the value that imports it.
func TestDecisionExplainsAFailedImport(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	rs, d := explainDecider(t, "outer@v1", map[string]string{
		"inner/v1/rules.yaml": "inputs:\n  x: {type: int}\nvalues:\n  twice: x * 2\nrules:\n  - id: one\n    when: twice == 2\n    device: {type: kDLCPU, id: 0}\n",
		"inner/v1/tests.yaml": "cases:\n  - {name: one, input: {x: 1}, want: {device_type: kDLCPU, rule: one}}\n",
		"outer/v1/rules.yaml": "imports:\n  inner: inner@v1\nvalues:\n  inner_rule: inner.rule\nrules:\n  - id: always\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n",
		"outer/v1/tests.yaml": "cases:\n  - {name: one, input: {x: 1}, want: {device_type: kDLCPU, rule: always}}\n",
	})
	for _, line := range []string{`{"x":1}`, `{"x":2}`} {
		sameAsEngine(t, d, rs, []byte(line), true)
	}
	out, err := d.ExplainJSON(context.Background(), []byte(`{"x":2}`))
	if want := `"import":{"decision":{"device_type_code":0,"device_id":0,"rule":"","ruleset":""}`; err != nil || !strings.Contains(string(out), want) {
		t.Errorf("ExplainJSON(x=2) = %s, %v\nwant it to hold %s", out, err, want)
	}
}

// TestDecisionExplainRefusesWhatJSONCannotWrite: a double that overflows
// to infinity fails the explanation with encoding/json's message, as the
// engine's fails; the decision, which does not show it, stands.
func TestDecisionExplainRefusesWhatJSONCannotWrite(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	rs, d := explainDecider(t, "inf@v1", map[string]string{
		"inf/v1/rules.yaml": "inputs:\n  d: {type: double}\nvalues:\n  square: d * d\nrules:\n  - id: always\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n",
		"inf/v1/tests.yaml": "cases:\n  - {name: one, input: {d: 1.5}, want: {device_type: kDLCPU, rule: always}}\n",
	})
	for _, line := range []string{`{"d":1.5}`, `{"d":1e200}`, `{"d":-1e200}`, `{"d":1e-200}`, `{"d":1e10}`, `{"d":1e11}`, `{"d":3e-4}`} {
		sameAsEngine(t, d, rs, []byte(line), true)
	}
	ctx := context.Background()
	var e *engine.Error
	if _, err := d.ExplainJSON(ctx, []byte(`{"d":1e200}`)); !errors.As(err, &e) || e.Code != engine.CodeEval || e.Message != "json: unsupported value: +Inf" {
		t.Errorf("ExplainJSON(d=1e200) = %v; want an eval_error saying json: unsupported value: +Inf", err)
	}
	if _, err := d.DecideJSON(ctx, []byte(`{"d":1e200}`)); err != nil {
		t.Errorf("DecideJSON(d=1e200) = %v; want the decision", err)
	}
}

// TestDecisionExplainFailsOnTheFirstUnwritableValue: an infinite double
// followed by one JSON writes, in a list or a map, still fails the
// explanation, as encoding/json fails the engine's. (Package plan's
// jsonWriter.value lets the later double clear the failure and answers
// JSON with the infinity left out; the C module does not.)
func TestDecisionExplainFailsOnTheFirstUnwritableValue(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	rs, d := explainDecider(t, "inf@v1", map[string]string{
		"inf/v1/rules.yaml": "inputs:\n  d: {type: double}\nvalues:\n  pair: \"[d * d, 1.0]\"\n  table: \"{'a': d * d, 'b': 1.0}\"\nrules:\n  - id: always\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n",
		"inf/v1/tests.yaml": "cases:\n  - {name: one, input: {d: 1.5}, want: {device_type: kDLCPU, rule: always}}\n",
	})
	for _, line := range []string{`{"d":1.5}`, `{"d":1e200}`} {
		sameAsEngine(t, d, rs, []byte(line), true)
	}
}

// TestDecisionWritesNumbersAndStringsAsEngine: doubles of every
// magnitude and strings of every kind of rune (controls, HTML's
// characters, U+2028, runes strconv.Quote escapes) come back in an
// explanation as encoding/json writes them, in a map's keys as fmt does,
// and in an unknown field's message as strconv.Quote does: the engine's
// bytes.
func TestDecisionWritesNumbersAndStringsAsEngine(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	rs, d := explainDecider(t, "fmt@v1", map[string]string{
		"fmt/v1/rules.yaml": "inputs:\n  d: {type: double, default: 0.5}\n  s: {type: string, default: \"\"}\nvalues:\n  dv: d\n  sv: s\n  pair: \"[d, s]\"\n  table: \"{s: d, 'k': s}\"\n  dtable: \"{dyn(d): s}\"\nrules:\n  - id: always\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n",
		"fmt/v1/tests.yaml": "cases:\n  - {name: one, input: {}, want: {device_type: kDLCPU, rule: always}}\n",
	})
	rng := rand.New(rand.NewPCG(1, 37))
	runes := []rune{'a', '"', '\\', '<', '>', '&', '\x00', '\x1f', '\x7f', '\u00a0', '\u00ad', '\u2028', '\u2029', '\u200b', '\ufeff', '\ufffd', 'é', '\U0001F600', '\U000E0001', '\U0010FFFF', '\U0001000C'}
	for i := range 400 {
		var f float64
		switch i % 4 {
		case 0:
			f = math.Float64frombits(rng.Uint64())
		case 1:
			f = math.Ldexp(1, rng.IntN(2098)-1074)
		case 2:
			f = float64(rng.Int64N(1e9)) / math.Pow(10, float64(rng.IntN(30)))
		default:
			f = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			f = math.Copysign(0, -1)
		}
		var s strings.Builder
		for range rng.IntN(8) {
			if rng.IntN(3) == 0 {
				s.WriteRune(rune(rng.IntN(0x30000)))
			} else {
				s.WriteRune(runes[rng.IntN(len(runes))])
			}
		}
		line, err := json.Marshal(map[string]any{"d": f, "s": s.String()})
		if err != nil {
			t.Fatal(err)
		}
		sameAsEngine(t, d, rs, line, true)
		odd, _ := json.Marshal(map[string]any{s.String() + "x": 1})
		sameAsEngine(t, d, rs, odd, true)
		if t.Failed() {
			return // the first line that differs says enough
		}
	}
}
