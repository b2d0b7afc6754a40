package plan_test

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// jaxPlan builds jax@v3's plan from the embedded rules.
func jaxPlan(t testing.TB) []byte {
	t.Helper()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet("jax@v3")
	if err != nil {
		t.Fatal(err)
	}
	data, err := rs.Plan()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPlanIsDeterministic: two loads of the same rules give the same
// plan bytes, starting with the magic and the format version.
func TestPlanIsDeterministic(t *testing.T) {
	a, b := jaxPlan(t), jaxPlan(t)
	if !bytes.Equal(a, b) {
		t.Errorf("two builds of jax@v3's plan differ: %d and %d bytes", len(a), len(b))
	}
	if !bytes.HasPrefix(a, []byte(plan.Magic+"\x02")) {
		t.Errorf("plan starts %q; want %q and format version 2", a[:min(8, len(a))], plan.Magic)
	}
}

// TestDecideAnswersAsResolveJSON: a decision, an exception and an input
// error, as the command line's lines give them.
func TestDecideAnswersAsResolveJSON(t *testing.T) {
	p, err := plan.Decode(jaxPlan(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, want, code string }{
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":1}`,
			`{"device_type":"kDLCUDA","device_type_code":2,"device_id":1,"rule":"gpu","ruleset":"jax@v3"}`, ""},
		{`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":1}`,
			`{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3"}`, ""},
		{`{"platform":"gpu"}`, "", "missing_field"},
		{`{"platform":"gpu","platform_version":"x","shards":"2"}`, "", "wrong_type"},
		{`[1]`, "", "json_syntax"},
	}
	for _, tt := range tests {
		got, err := p.Decide([]byte(tt.line))
		var e *plan.Error
		switch {
		case tt.code != "" && (!errors.As(err, &e) || string(e.Code) != tt.code || !e.Code.Input()):
			t.Errorf("Decide(%s) = %s, %v; want an input error %s", tt.line, got, err, tt.code)
		case tt.code == "" && (err != nil || string(got) != tt.want):
			t.Errorf("Decide(%s)\n got %s, %v\nwant %s", tt.line, got, err, tt.want)
		}
	}
}

// TestDecodeRefusesBadBytes: a plan cut short anywhere, another format
// version, or bytes that are not a plan are CodeBadPlan, never a panic.
func TestDecodeRefusesBadBytes(t *testing.T) {
	data := jaxPlan(t)
	bad := [][]byte{nil, []byte("{}"), []byte(plan.Magic), []byte(plan.Magic + "\x01"), []byte(plan.Magic + "\x03"), append(bytes.Clone(data), 0)}
	for n := len(plan.Magic); n < len(data); n += 1 + n/50 {
		bad = append(bad, data[:n])
	}
	for _, b := range bad {
		_, err := plan.Decode(b)
		var e *plan.Error
		if !errors.As(err, &e) || e.Code != plan.CodeBadPlan {
			t.Errorf("Decode(%d bytes %.12q...) = %v; want a %s error", len(b), b, err, plan.CodeBadPlan)
		}
	}
	if _, err := plan.Decode([]byte(plan.Magic + "\x01")); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("Decode(format version 1) = %v; want it to name the version", err)
	}
}

// TestDecodeRefusesCircularValues: a forged plan whose values read each
// other in a circle is refused when it is read, by the value's name;
// evaluating it would recurse until the stack ran out, which in Go ends
// the process.
func TestDecodeRefusesCircularValues(t *testing.T) {
	for _, c := range []struct {
		name  string
		reads [][]int // the values each value's expression reads
		want  string
	}{
		{"itself", [][]int{{0}}, "value v0 reads itself"},
		{"through another", [][]int{{1}, {2}, {0}}, "value v0 reads itself"},
		{"a line, not a circle", [][]int{{1, 2}, {2}, {}}, ""},
	} {
		p := &plan.Plan{Ref: "forged@v1", StepLimit: 100}
		for i, reads := range c.reads {
			root := len(p.Nodes)
			p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpConst, Const: true})
			for _, r := range reads {
				p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpSlot, Slot: r})
				p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpAnd, Args: []int{root, len(p.Nodes) - 1}})
				root = len(p.Nodes) - 1
			}
			p.Exprs = append(p.Exprs, plan.Expr{Root: root})
			p.Values = append(p.Values, plan.Value{Name: "v" + string(rune('0'+i)), Expr: i, Import: -1})
		}
		p.Exprs = append(p.Exprs, plan.Expr{Root: len(p.Nodes)})
		p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpSlot, Slot: 0})
		p.Rules = []plan.Rule{{ID: "r", When: len(p.Exprs) - 1, Raise: "E", Message: len(p.Exprs) - 1, Type: -1, DeviceID: -1, Copy: -1, Capsule: -1, Flags: -1}}
		data, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		_, err = plan.Decode(data)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: Decode = %v; want the plan", c.name, err)
			}
			continue
		}
		var e *plan.Error
		if !errors.As(err, &e) || e.Code != plan.CodeBadPlan || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: Decode = %v; want a %s error saying %q", c.name, err, plan.CodeBadPlan, c.want)
		}
	}
}

// TestDecodeRefusesDeepExpressions: an expression tree nested past
// MaxExprDepth is refused when the plan is read, not when a deep
// evaluation has exhausted the stack.
func TestDecodeRefusesDeepExpressions(t *testing.T) {
	for _, depth := range []int{plan.MaxExprDepth, plan.MaxExprDepth + 1, 100 * plan.MaxExprDepth} {
		p := &plan.Plan{Ref: "forged@v1", StepLimit: 1 << 30}
		p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpConst, Const: true})
		for len(p.Nodes) < depth {
			p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpCall, Func: plan.FuncNot, Args: []int{len(p.Nodes) - 1}})
		}
		p.Exprs = []plan.Expr{{Root: len(p.Nodes) - 1}}
		p.Rules = []plan.Rule{{ID: "r", When: 0, Raise: "E", Message: 0, Type: -1, DeviceID: -1, Copy: -1, Capsule: -1, Flags: -1}}
		data, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		_, err = plan.Decode(data)
		var e *plan.Error
		switch {
		case depth <= plan.MaxExprDepth && err != nil:
			t.Errorf("depth %d: Decode = %v; want the plan", depth, err)
		case depth > plan.MaxExprDepth && (!errors.As(err, &e) || e.Code != plan.CodeBadPlan || !strings.Contains(e.Message, "nests deeper than 1000")):
			t.Errorf("depth %d: Decode = %v; want a %s error, nested too deep", depth, err, plan.CodeBadPlan)
		}
	}
}

// FuzzDecode: Decode never panics, and a plan it accepts decides any
// line without panicking, within its step budget.
func FuzzDecode(f *testing.F) {
	data := jaxPlan(f)
	f.Add(data, []byte(`{"platform":"gpu","platform_version":"cuda"}`))
	f.Fuzz(func(t *testing.T, b, line []byte) {
		p, err := plan.Decode(b)
		if err != nil {
			return
		}
		p.Decide(line)
	})
}

// TestPlanRefusesCELOutsideIt: an expression a plan does not cover is
// refused when the plan is built, at its place in the rule file, and the
// rule set still loads and decides with the engine.
func TestPlanRefusesCELOutsideIt(t *testing.T) {
	tests := []struct{ old, new, at, says string }{
		{"when: platform == 'cpu'", "when: platform.lowerAscii() == 'cpu'", "rules.yaml:59:", "function lowerAscii"},
		{"when: shards != 1", "when: shards != 1 && platform.matches('^g')", "rules.yaml:52:42", "function matches"},
		{"when: shards != 1", `when: "shards != 1 && has({'a': 1}.a)"`, "rules.yaml:52:", "has()"},
	}
	for _, tt := range tests {
		fsys := fstest.MapFS{}
		for _, name := range []string{engine.ManifestFile, engine.DeviceTypesFile, engine.RulesFile, engine.TestsFile} {
			data, err := fs.ReadFile(rules.FS, "jax/v3/"+name)
			if err != nil {
				t.Fatal(err)
			}
			fsys["jax/v3/"+name] = &fstest.MapFile{Data: data}
		}
		f := fsys["jax/v3/rules.yaml"]
		if !bytes.Contains(f.Data, []byte(tt.old)) {
			t.Fatalf("rules.yaml has no %q", tt.old)
		}
		f.Data = bytes.Replace(f.Data, []byte(tt.old), []byte(tt.new), 1)
		cat, err := engine.Load(fsys, engine.Options{})
		if err != nil {
			t.Fatalf("%s: Load = %v", tt.new, err)
		}
		rs, _ := cat.RuleSet("jax@v3")
		_, err = rs.Plan()
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.CodePlanUnsupported || e.Pos == nil || !strings.Contains(e.Pos.String(), tt.at) ||
			!strings.Contains(e.Message, tt.says) || e.Hint == "" {
			t.Errorf("%s: Plan() = %v; want %s at %s saying %q, with a hint", tt.new, err, engine.CodePlanUnsupported, tt.at, tt.says)
		}
	}
}

// TestDecideStopsAtItsStepLimit: a plan bounds its own work; past its
// step budget it answers cost_limit at the expression it was in.
func TestDecideStopsAtItsStepLimit(t *testing.T) {
	p, err := plan.Decode(jaxPlan(t))
	if err != nil {
		t.Fatal(err)
	}
	p.StepLimit = 3
	_, err = p.Decide([]byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`))
	var e *plan.Error
	if !errors.As(err, &e) || e.Code != plan.CodeCostLimit || e.Pos == nil || e.Code.Input() {
		t.Errorf("Decide with StepLimit 3 = %v; want a %s error at an expression", err, plan.CodeCostLimit)
	}
}

// TestImportSharesItsImportersStepLimit: an import's steps count toward
// the decision that reads it, against that decision's StepLimit (which
// includes the import's cost), not the import's own: an import read
// after costly rules still decides. The import's own limit is set to
// just what it needs alone, so that the importer's steps before it
// would put it over.
func TestImportSharesItsImportersStepLimit(t *testing.T) {
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet("exchange@v1")
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
	imp := p.Imports[0]
	const line = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":1}`
	want, err := p.Decide([]byte(line))
	if err != nil {
		t.Fatalf("Decide(%s) = %v", line, err)
	}
	// The fewest steps the import decides the line in alone.
	lo, hi := uint64(1), imp.StepLimit
	for lo < hi {
		imp.StepLimit = (lo + hi) / 2
		if _, err := imp.Decide([]byte(line)); err != nil {
			lo = imp.StepLimit + 1
		} else {
			hi = imp.StepLimit
		}
	}
	imp.StepLimit = lo
	if _, err := imp.Decide([]byte(line)); err != nil {
		t.Fatalf("%s alone with StepLimit %d: %v", imp.Ref, lo, err)
	}
	got, err := p.Decide([]byte(line))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s with its import's StepLimit at %d: Decide(%s) = %s, %v; want %s", p.Ref, lo, line, got, err, want)
	}
}
