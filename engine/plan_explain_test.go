package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/plan"
)

// samePlanExplanation explains one JSON line with the engine and the
// plan and says how the answers differ, or "".
func samePlanExplanation(rs *RuleSet, p *plan.Plan, line []byte) string {
	want, werr := rs.ExplainJSON(context.Background(), line)
	got, gerr := p.ExplainJSON(line)
	switch {
	case werr == nil && gerr == nil:
		if string(want) != string(got) {
			return fmt.Sprintf("ExplainJSON(%s) differs:\n%s", line, explanationDiff(got, want))
		}
	case werr != nil && gerr != nil:
		var we *Error
		var ge *plan.Error
		if !errors.As(gerr, &ge) {
			return fmt.Sprintf("ExplainJSON(%s): an error of type %T: %v", line, gerr, gerr)
		}
		if !errors.As(werr, &we) {
			// encoding/json's, for a value it cannot write: the plan's
			// is an eval_error with its message.
			if ge.Code != plan.CodeEval || ge.Message != werr.Error() {
				return fmt.Sprintf("ExplainJSON(%s)\n got error %v\nwant error %v", line, gerr, werr)
			}
			return ""
		}
		w, _ := json.Marshal(we)
		g, _ := json.Marshal(ge)
		if string(w) != string(g) {
			return fmt.Sprintf("ExplainJSON(%s)\n got error %s\nwant error %s", line, g, w)
		}
	default:
		return fmt.Sprintf("ExplainJSON(%s)\n got %s, %v\nwant %s, %v", line, got, gerr, want, werr)
	}
	return ""
}

// TestPlanExplainMatchesEngine: the plan explains every case of every
// shipped version's tests.yaml with the engine's bytes: the decision,
// the rules tried and every value, imports' explanations within.
func TestPlanExplainMatchesEngine(t *testing.T) {
	for _, pl := range loadPlans(t) {
		t.Run(pl.rs.Ref(), func(t *testing.T) {
			for _, c := range pl.rs.Cases() {
				line, err := json.Marshal(c.Input)
				if err != nil {
					t.Fatal(err)
				}
				if diff := samePlanExplanation(pl.rs, pl.p, line); diff != "" {
					t.Errorf("case %s: %s", c.Name, diff)
				}
			}
		})
	}
}

// explanationDiff says step by step how two explanations' JSON differ:
// the decision, each rule tried, each value (an import's within), or
// the first byte where they part.
func explanationDiff(got, want []byte) string {
	type step = map[string]json.RawMessage
	type explained struct {
		Decision json.RawMessage
		Trace    struct{ Rules, Values []step }
	}
	var g, w explained
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		return fmt.Sprintf("at byte %d:\n got %.200s\nwant %.200s", i, got[i:], want[i:])
	}
	var out []string
	if string(g.Decision) != string(w.Decision) {
		out = append(out, fmt.Sprintf("decision %s, want %s", g.Decision, w.Decision))
	}
	for _, list := range []struct {
		what string
		g, w []step
	}{{"rule", g.Trace.Rules, w.Trace.Rules}, {"value", g.Trace.Values, w.Trace.Values}} {
		if len(list.g) != len(list.w) {
			out = append(out, fmt.Sprintf("%d %ss, want %d", len(list.g), list.what, len(list.w)))
		}
		for i := range min(len(list.g), len(list.w)) {
			gs, _ := json.Marshal(list.g[i])
			ws, _ := json.Marshal(list.w[i])
			if string(gs) == string(ws) {
				continue
			}
			if list.what == "value" && list.g[i]["import"] != nil && string(list.g[i]["import"]) != string(list.w[i]["import"]) {
				out = append(out, fmt.Sprintf("import %s: %s", list.g[i]["name"], explanationDiff(list.g[i]["import"], list.w[i]["import"])))
				continue
			}
			delete(list.g[i], "import")
			delete(list.w[i], "import")
			gs, _ = json.Marshal(list.g[i])
			ws, _ = json.Marshal(list.w[i])
			out = append(out, fmt.Sprintf("%s %d\n got %s\nwant %s", list.what, i, gs, ws))
		}
	}
	return strings.Join(out, "\n")
}

// TestPlanExplainMatchesEngineOnDomain: the plan explains as the engine
// does on each version's domain and on those inputs made wrong, as
// TestPlanMatchesEngineOnDomain decides them.
func TestPlanExplainMatchesEngineOnDomain(t *testing.T) {
	perVersion := 300
	if testing.Short() {
		perVersion = 50
	}
	for _, pl := range loadPlans(t) {
		t.Run(pl.rs.Ref(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(len(pl.rs.Ref()))))
			dom := deriveDomain(pl.rs)
			n := min(dom.Size(), perVersion)
			diffs := 0
			for i := range 2 * n {
				in := domainInput(dom, rng.IntN(dom.Size()))
				if i%2 == 1 {
					mutateInput(rng, pl.rs, in)
				}
				line, err := json.Marshal(in)
				if err != nil {
					t.Fatal(err)
				}
				if diff := samePlanExplanation(pl.rs, pl.p, line); diff != "" {
					if diffs++; diffs <= 5 {
						t.Error(diff)
					}
				}
			}
			if diffs > 0 {
				t.Errorf("%d of %d inputs differ", diffs, 2*n)
			}
		})
	}
}

// callSweep are expressions of every function and operator a plan
// covers, on dyn inputs (a, b) and on nullable typed ones, whose
// failures an explanation shows value by value: cel-go's messages
// depend on the overloads the checker resolved.
var callSweep = []string{
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

// callSweepRules is a rule set whose values are callSweep.
func callSweepRules(t *testing.T) (*RuleSet, *plan.Plan) {
	t.Helper()
	var b strings.Builder
	b.WriteString("inputs:\n")
	for _, in := range []string{"a dyn", "b dyn", "l list(int)?", "s string?", "m map(string, int)?", "i int?", "u uint?", "d double?", "t bool?"} {
		name, typ, _ := strings.Cut(in, " ")
		fmt.Fprintf(&b, "  %s: {type: %q, default: null}\n", name, typ)
	}
	b.WriteString("values:\n")
	for i, e := range callSweep {
		fmt.Fprintf(&b, "  v%d: %q\n", i, e)
	}
	b.WriteString("rules:\n  - id: all\n    when: true\n    device: {type: kDLCPU, id: 0}\n")
	fsys := fstest.MapFS{
		"sweep/v1/manifest.yaml":     {Data: []byte("name: sweep\nversion: v1\ndescription: a test\nmirrors: {project: none}\n")},
		"sweep/v1/device_types.yaml": {Data: []byte("device_types: {kDLCPU: 1}\n")},
		"sweep/v1/rules.yaml":        {Data: []byte(b.String())},
		"sweep/v1/tests.yaml":        {Data: []byte("cases:\n  - {name: one, input: {}, want: {device_type: kDLCPU}}\n")},
	}
	cat, err := Load(fsys, Options{})
	if err != nil {
		t.Fatalf("%v\nin:\n%s", err, b.String())
	}
	rs, _ := cat.RuleSet("sweep")
	data, err := rs.Plan()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return rs, p
}

// TestPlanExplainsEveryCallAsCEL: every function and operator a plan
// covers, on arguments of every type and on nulls, typed and dyn, fails
// or succeeds as cel-go's does, with its message: an explanation shows
// every value, read or not.
func TestPlanExplainsEveryCallAsCEL(t *testing.T) {
	rs, p := callSweepRules(t)
	values := []string{`null`, `true`, `0`, `1`, `-1`, `1.5`, `"a"`, `""`, `[1]`, `[]`, `{"k":1}`, `{}`, `["a","b"]`, `"k"`}
	typed := []string{``, `,"l":[1,2],"s":"ab","m":{"k":1},"i":2,"u":3,"d":2.5,"t":true`, `,"l":[],"s":"","m":{},"i":0,"u":0,"d":0,"t":false`}
	diffs := 0
	for _, a := range values {
		for _, b := range values {
			for _, rest := range typed {
				line := []byte(`{"a":` + a + `,"b":` + b + rest + `}`)
				if diff := samePlanExplanation(rs, p, line); diff != "" {
					if diffs++; diffs <= 10 {
						t.Error(diff)
					}
				}
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d inputs differ", diffs, len(values)*len(values)*len(typed))
	}
}

// explainFixture compiles the versions of files (path: text, under
// "<name>/v1/", manifests and device types added) and returns the
// engine's and the plan's version ref.
func explainFixture(t *testing.T, ref string, files map[string]string) (*RuleSet, *plan.Plan) {
	t.Helper()
	fsys := fstest.MapFS{}
	for path, text := range files {
		fsys[path] = &fstest.MapFile{Data: []byte(text)}
		dir, _, _ := strings.Cut(path, "/")
		fsys[dir+"/v1/manifest.yaml"] = &fstest.MapFile{Data: []byte("name: " + dir + "\nversion: v1\ndescription: a test\nmirrors: {project: none}\n")}
		fsys[dir+"/v1/device_types.yaml"] = &fstest.MapFile{Data: []byte("device_types: {kDLCPU: 1}\n")}
	}
	cat, err := Load(fsys, Options{})
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
	p, err := plan.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return rs, p
}

// TestPlanExplainsAFailedImport: an import the decision does not read,
// whose own decision fails, is explained with the engine's empty
// decision, its rules tried, and the failure on the value that imports
// it.
func TestPlanExplainsAFailedImport(t *testing.T) {
	rs, p := explainFixture(t, "outer@v1", map[string]string{
		"inner/v1/rules.yaml": "inputs:\n  x: {type: int}\nvalues:\n  twice: x * 2\nrules:\n  - id: one\n    when: twice == 2\n    device: {type: kDLCPU, id: 0}\n",
		"inner/v1/tests.yaml": "cases:\n  - {name: one, input: {x: 1}, want: {device_type: kDLCPU, rule: one}}\n",
		"outer/v1/rules.yaml": "imports:\n  inner: inner@v1\nvalues:\n  inner_rule: inner.rule\nrules:\n  - id: always\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n",
		"outer/v1/tests.yaml": "cases:\n  - {name: one, input: {x: 1}, want: {device_type: kDLCPU, rule: always}}\n",
	})
	for _, line := range []string{`{"x":1}`, `{"x":2}`} {
		if diff := samePlanExplanation(rs, p, []byte(line)); diff != "" {
			t.Error(diff)
		}
	}
	out, err := p.ExplainJSON([]byte(`{"x":2}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"import":{"decision":{"device_type_code":0,"device_id":0,"rule":"","ruleset":""}`, `"error":"import inner (inner@v1): no rule of inner@v1 matched"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ExplainJSON(x=2) = %s\nwant it to hold %s", out, want)
		}
	}
}

// TestPlanExplainRefusesWhatJSONCannotWrite: a double that overflows to
// infinity fails the explanation, as encoding/json fails the engine's,
// with its message; the decision, which does not show it, stands.
func TestPlanExplainRefusesWhatJSONCannotWrite(t *testing.T) {
	rs, p := explainFixture(t, "inf@v1", map[string]string{
		"inf/v1/rules.yaml": "inputs:\n  d: {type: double}\nvalues:\n  square: d * d\nrules:\n  - id: always\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n",
		"inf/v1/tests.yaml": "cases:\n  - {name: one, input: {d: 1.5}, want: {device_type: kDLCPU, rule: always}}\n",
	})
	for _, line := range []string{`{"d":1.5}`, `{"d":1e200}`, `{"d":1e-200}`, `{"d":1e10}`} {
		if diff := samePlanExplanation(rs, p, []byte(line)); diff != "" {
			t.Error(diff)
		}
	}
	_, err := p.ExplainJSON([]byte(`{"d":1e200}`))
	var e *plan.Error
	if !errors.As(err, &e) || e.Code != plan.CodeEval || e.Message != "json: unsupported value: +Inf" {
		t.Errorf("ExplainJSON(d=1e200) = %v; want an eval_error saying json: unsupported value: +Inf", err)
	}
	if _, err := p.Decide([]byte(`{"d":1e200}`)); err != nil {
		t.Errorf("Decide(d=1e200) = %v; want the decision", err)
	}
}
