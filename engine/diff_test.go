package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// everyChange is Diff's report with every changed input as an example.
var everyChange = engine.DiffOptions{Examples: engine.DefaultMaxInputs}

// groupsOf writes a report's groups as "from -> to: count" lines.
func groupsOf(rep *engine.DiffReport) string {
	var b strings.Builder
	for _, g := range rep.Groups {
		fmt.Fprintf(&b, "%s -> %s: %d %v\n", g.From, g.To, g.Count, g.Differs)
	}
	return b.String()
}

// The versions of jax differ where their manifests say: v1 -> v2 is pinned
// host memory (CUDA, ROCm, TPU) and the last message's wording, v2 -> v3
// the oneapi marker.
func TestDiffJAXVersions(t *testing.T) {
	tests := []struct {
		from, to       string
		changed        int
		groups         string
		everyChangeHas string // a field every changed input has
	}{
		{"jax@v1", "jax@v2", 50, `gpu (kDLCUDA) -> gpu (kDLCUDAHost): 1 [device_type]
gpu (kDLROCM) -> gpu (kDLROCMHost): 1 [device_type]
unsupported-platform (BufferError) -> tpu-not-pinned-host (BufferError): 18 [rule error.message]
unsupported-platform (BufferError) -> tpu-no-hardware-id (BufferError): 3 [rule error.message]
unsupported-platform (BufferError) -> tpu-pinned-host (kDLTPUHost): 3 [rule device_type device_id error.type error.message]
unsupported-platform (BufferError) -> unsupported-platform (BufferError): 24 [error.message]
`, ""},
		{"jax@v2", "jax@v3", 8, `gpu-unknown-platform (BufferError) -> gpu-no-hardware-id (BufferError): 4 [rule error.message]
gpu-unknown-platform (BufferError) -> gpu (kDLOneAPI): 4 [rule device_type device_id error.type error.message]
`, `"platform_version":"oneapi"`},
		{"jax@v3", "jax@v3", 0, "", ""},
	}
	for _, tt := range tests {
		rep, err := engine.Diff(t.Context(), loadRuleSet(t, tt.from), loadRuleSet(t, tt.to), everyChange)
		if err != nil {
			t.Fatalf("Diff(%s, %s): %v", tt.from, tt.to, err)
		}
		if rep.Tried != rep.Domain.Size() || rep.Changed != tt.changed || groupsOf(rep) != tt.groups {
			t.Errorf("Diff(%s, %s) tried %d of %d, changed %d, groups:\n%swant changed %d, groups:\n%s",
				tt.from, tt.to, rep.Tried, rep.Domain.Size(), rep.Changed, groupsOf(rep), tt.changed, tt.groups)
		}
		for _, g := range rep.Groups {
			if len(g.Examples) != g.Count {
				t.Errorf("Diff(%s, %s) group %s -> %s: %d examples of %d", tt.from, tt.to, g.From, g.To, len(g.Examples), g.Count)
			}
			for _, x := range g.Examples {
				if x.From.Equal(x.To) || x.From.Outcome() != g.From || x.To.Outcome() != g.To || !strings.Contains(x.InputJSON(), tt.everyChangeHas) {
					t.Errorf("Diff(%s, %s) group %s -> %s has %s: %s -> %s", tt.from, tt.to, g.From, g.To, x.InputJSON(), x.From.Decision, x.To.Decision)
				}
			}
		}
	}
}

// A marker added to an edited copy of the rules changes exactly the gpu
// inputs whose platform version is that marker.
func TestDiffEditedMarker(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, rules.FS); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "jax", "v3", engine.RulesFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	oneapi := "- {marker: oneapi, device: kDLOneAPI}\n"
	edited := strings.Replace(string(data), oneapi, oneapi+"      - {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}\n", 1)
	if edited == string(data) {
		t.Fatalf("%s has no line %q", file, oneapi)
	}
	if err := os.WriteFile(file, []byte(edited), 0o666); err != nil {
		t.Fatal(err)
	}
	cat, err := engine.Load(os.DirFS(dir), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fork, _ := cat.RuleSet("jax@v3")

	rep, err := engine.Diff(t.Context(), loadRuleSet(t, "jax@v3"), fork, everyChange)
	if err != nil {
		t.Fatal(err)
	}
	want := `gpu-unknown-platform (BufferError) -> gpu-no-hardware-id (BufferError): 4 [rule error.message]
gpu-unknown-platform (BufferError) -> gpu (kDLCUDA): 3 [rule device_type device_id error.type error.message]
gpu-unknown-platform (BufferError) -> gpu (kDLCUDAHost): 1 [rule device_type device_id error.type error.message]
`
	if got := groupsOf(rep); got != want {
		t.Errorf("Diff(jax@v3, jax@v3 with nvfork) groups:\n%swant:\n%s", got, want)
	}
	// Every gpu input with the new marker changes, unless it is sharded.
	changed := 0
	for i := range rep.Domain.Size() {
		in := domainInput(rep.Domain, i)
		if in["platform"] == "gpu" && in["platform_version"] == "nvfork" && in["shards"].(int64) == 1 {
			changed++
		}
	}
	if rep.Changed != changed {
		t.Errorf("Diff(jax@v3, jax@v3 with nvfork) changed %d inputs, want the %d unsharded gpu inputs with nvfork", rep.Changed, changed)
	}
	for _, g := range rep.Groups {
		for _, x := range g.Examples {
			if x.Input["platform_version"] != "nvfork" || x.Input["platform"] != "gpu" {
				t.Errorf("Diff(jax@v3, jax@v3 with nvfork) changed %s", x.InputJSON())
			}
		}
	}
}

// domainInput is input i of d, the last input varying fastest.
func domainInput(d *engine.Domain, i int) engine.Input {
	in := engine.Input{}
	for k := len(d.Inputs) - 1; k >= 0; k-- {
		vals := d.Inputs[k].Values
		in[d.Inputs[k].Name] = vals[i%len(vals)]
		i /= len(vals)
	}
	return in
}

// A rule that fails at run time is an answer: eval_error, with the
// position of the expression, in its own group.
func TestDiffEvalError(t *testing.T) {
	const head = "inputs:\n  n: {type: int, default: 1}\nrules:\n"
	const ok = "  - {id: ok, when: 'true', device: {type: kDLCPU, id: 0}}\n"
	before := ruleSetOf(t, head+ok, "{}")
	after := ruleSetOf(t, head+"  - {id: boom, when: '1 / (n - 1) > 0', device: {type: kDLCUDA, id: 0}}\n"+ok, "{}")

	rep, err := engine.Diff(t.Context(), before, after, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "ok (kDLCPU) -> eval_error: 1 [failure]\nok (kDLCPU) -> boom (kDLCUDA): 1 [rule device_type]\n"
	if got := groupsOf(rep); got != want {
		t.Fatalf("Diff with a division by zero: groups\n%swant\n%s", got, want)
	}
	var got strings.Builder
	enc := json.NewEncoder(&got)
	enc.SetEscapeHTML(false)
	enc.Encode(rep.Groups[0].Examples[0])
	wantJSON := `{"input":{"n":1},"from":{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"rule":"ok","ruleset":"test@v1"},` +
		`"to":{"eval_error":{"code":"eval_error","message":"division by zero","position":{"file":"rules/test/v1/rules.yaml","line":4,"column":23},"source":"  - {id: boom, when: '1 / (n - 1) > 0', device: {type: kDLCUDA, id: 0}}"}}}` + "\n"
	if got.String() != wantJSON {
		t.Errorf("the example's JSON:\ngot  %swant %s", got.String(), wantJSON)
	}
}

// An input one rule set does not declare is left out of its input; an
// input it refuses is an answer too.
func TestDiffInputsDeclaredByOne(t *testing.T) {
	before := ruleSetOf(t, "inputs:\n  p: string\nrules:\n  - {id: cpu, when: p == 'cpu', device: {type: kDLCPU, id: 0}}\n  - {id: other, when: 'true', device: {type: kDLCUDA, id: 0}}\n", "{p: cpu}")
	after := ruleSetOf(t, "inputs:\n  p: string\n  host: bool?\nrules:\n  - {id: host, when: host == true, device: {type: kDLCUDAHost, id: 0}}\n  - {id: cpu, when: p == 'cpu', device: {type: kDLCPU, id: 0}}\n  - {id: other, when: 'true', device: {type: kDLCUDA, id: 0}}\n", "{p: cpu, host: null}")
	rep, err := engine.Diff(t.Context(), before, after, everyChange)
	if err != nil {
		t.Fatal(err)
	}
	want := "cpu (kDLCPU) -> host (kDLCUDAHost): 1 [rule device_type]\nother (kDLCUDA) -> host (kDLCUDAHost): 1 [rule device_type]\n"
	if got := groupsOf(rep); got != want || rep.Tried != 2*3 {
		t.Errorf("Diff(p, p and host) tried %d, groups:\n%swant 6, groups:\n%s", rep.Tried, got, want)
	}
}

func TestDiffMaxInputs(t *testing.T) {
	_, err := engine.Diff(t.Context(), loadRuleSet(t, "jax@v2"), loadRuleSet(t, "jax@v3"), engine.DiffOptions{MaxInputs: 255})
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeDomainTooLarge || e.Hint == "" ||
		!strings.Contains(e.Message, "256 inputs") || !strings.Contains(e.Message, "platform 4 × platform_version 4") {
		t.Errorf("Diff with MaxInputs 255 got %#v, want %s saying 256 inputs and why, with a hint", err, engine.CodeDomainTooLarge)
	}
	if _, err := engine.Diff(t.Context(), loadRuleSet(t, "jax@v2"), loadRuleSet(t, "jax@v3"), engine.DiffOptions{MaxInputs: 256}); err != nil {
		t.Errorf("Diff with MaxInputs 256: %v", err)
	}
}

// cancelAfter is a context whose Err turns to Canceled after n calls, so
// that Diff is stopped in the middle of its run.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestDiffCanceled(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	midway := &cancelAfter{Context: t.Context()}
	midway.n.Store(500)
	for name, ctx := range map[string]context.Context{"before": canceled, "midway": midway} {
		rep, err := engine.Diff(ctx, loadRuleSet(t, "jax@v2"), loadRuleSet(t, "jax@v3"), engine.DiffOptions{})
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.CodeCanceled || !errors.Is(err, context.Canceled) || rep != nil {
			t.Errorf("Diff canceled %s got %v, %v; want %s wrapping context.Canceled", name, rep, err, engine.CodeCanceled)
		}
	}
}

// The report is the same whatever the number of goroutines.
func TestDiffDeterministic(t *testing.T) {
	var reports []string
	for _, procs := range []int{1, 2, 7} {
		prev := runtime.GOMAXPROCS(procs)
		rep, err := engine.Diff(t.Context(), loadRuleSet(t, "jax@v1"), loadRuleSet(t, "jax@v3"), engine.DiffOptions{Examples: 5})
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(rep)
		reports = append(reports, string(out))
	}
	if reports[0] != reports[1] || reports[0] != reports[2] {
		t.Errorf("Diff's reports differ with GOMAXPROCS 1, 2 and 7:\n%s\n%s\n%s", reports[0], reports[1], reports[2])
	}
}

func TestAnswerEqual(t *testing.T) {
	cuda := engine.Decision{DeviceType: "kDLCUDA", DeviceTypeCode: 2, Rule: "gpu", RuleSet: "jax@v2"}
	other := cuda
	other.RuleSet = "jax@v3"
	id1 := other
	id1.DeviceID = 1
	raise := func(msg string) engine.Decision {
		return engine.Decision{Error: &engine.Exception{Type: "BufferError", Message: msg}, Rule: "r", RuleSet: "jax@v3"}
	}
	fail := func(code engine.Code, msg string) engine.Answer {
		return engine.Answer{Err: &engine.Error{Code: code, Message: msg}}
	}
	tests := []struct {
		a, b engine.Answer
		want bool
	}{
		{engine.Answer{Decision: cuda}, engine.Answer{Decision: other}, true}, // the rule set aside
		{engine.Answer{Decision: cuda}, engine.Answer{Decision: id1}, false},
		{engine.Answer{Decision: raise("a")}, engine.Answer{Decision: raise("a")}, true},
		{engine.Answer{Decision: raise("a")}, engine.Answer{Decision: raise("b")}, false},
		{engine.Answer{Decision: cuda}, fail(engine.CodeEval, "x"), false},
		{fail(engine.CodeEval, "x"), fail(engine.CodeEval, "x"), true},
		{fail(engine.CodeEval, "x"), fail(engine.CodeCostLimit, "x"), false},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			a, _ := tt.a.MarshalJSON()
			b, _ := tt.b.MarshalJSON()
			t.Errorf("%s.Equal(%s) = %v, want %v", a, b, got, tt.want)
		}
	}
}

// BenchmarkDiff is `dlroute diff jax@v2 jax@v3`: the domain derived, and
// 256 inputs decided by both versions without their memos.
func BenchmarkDiff(b *testing.B) {
	v2, v3 := loadRuleSet(b, "jax@v2"), loadRuleSet(b, "jax@v3")
	b.ReportAllocs()
	tried := 0
	for b.Loop() {
		rep, err := engine.Diff(b.Context(), v2, v3, engine.DiffOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tried += rep.Tried
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tried), "ns/input")
}

// BenchmarkDeriveDomain is the part of BenchmarkDiff that reads the rules.
func BenchmarkDeriveDomain(b *testing.B) {
	v2, v3 := loadRuleSet(b, "jax@v2"), loadRuleSet(b, "jax@v3")
	b.ReportAllocs()
	for b.Loop() {
		engine.DeriveDomain(v2, v3)
	}
}

// The exchange imports jax@v3, so its derived domain tries JAX's markers
// and platforms too, and the dl_device values its rules compare with
// through target (a conditional whose branch is dl_device).
func TestDeriveDomainFollowsImports(t *testing.T) {
	dom := engine.DeriveDomain(loadRuleSet(t, "exchange@v2"))
	values := map[string]string{}
	for _, in := range dom.Inputs {
		b, _ := json.Marshal(in.Values)
		values[in.Name] = string(b)
	}
	for name, want := range map[string][]string{
		"platform":         {`"cpu"`, `"gpu"`, `"tpu"`},
		"platform_version": {`"cuda"`, `"rocm"`, `"oneapi"`, `unknown`},
		"memory_kind":      {`"pinned_host"`},
		"dl_device":        {`null`, `[1,0]`, `[2,0]`, `[10,0]`, `[1,-1]`, `[]`},
		"copy":             {`null`, `false`, `true`},
		"max_version":      {`null`, `[1,0]`, `[0,0]`, `[]`},
		"stream":           {`null`, `-2`, `0`, `1`, `2`},
	} {
		for _, w := range want {
			if !strings.Contains(values[name], w) {
				t.Errorf("%s: %s lacks %s", name, values[name], w)
			}
		}
	}
}

// exchange@v1 and v2 differ only where copy=False forbids a needed copy:
// ValueError (JAX) against BufferError (the __dlpack__ text). The full
// derived domain is over a million inputs, so this narrows it to the
// values that matter; `dlroute diff --max-inputs 2000000 exchange@v1
// exchange@v2` runs the whole of it.
func TestDiffExchangeVersions(t *testing.T) {
	v1, v2 := loadRuleSet(t, "exchange@v1"), loadRuleSet(t, "exchange@v2")
	narrow := map[string][]any{
		"platform":          {"cpu", "gpu"},
		"platform_version":  {"cuda 12030", "<unknown>"},
		"memory_kind":       {"device", "pinned_host"},
		"local_hardware_id": {int64(0)},
		"shards":            {int64(1)},
		"dl_device":         {nil, []any{int64(1), int64(0)}, []any{int64(2), int64(1)}},
		"copy":              {nil, false, true},
		"max_version":       {nil, []any{int64(1), int64(1)}},
		"stream":            {nil},
	}
	dom := engine.DeriveDomain(v1, v2)
	for i := range dom.Inputs {
		vals, ok := narrow[dom.Inputs[i].Name]
		if !ok {
			t.Fatalf("no narrowed values for %s", dom.Inputs[i].Name)
		}
		dom.Inputs[i].Values = vals
	}
	rep, err := engine.DiffOver(context.Background(), v1, v2, dom, engine.DiffOptions{Examples: -1})
	if err != nil {
		t.Fatal(err)
	}
	// 14: a cpu array to (kDLCUDA, 1) (8), cuda device memory to the host
	// or (kDLCUDA, 1) (4), pinned cuda memory to (kDLCUDA, 1) (2); 12: the
	// unknown platform with copy=False, whatever else was asked.
	want := "copy-false-needs-copy (ValueError) -> copy-false-needs-copy (BufferError): 14 [error.type]\n" +
		"copy-false-unknown-platform (ValueError) -> copy-false-unknown-platform (BufferError): 12 [error.type]\n"
	if got := groupsOf(rep); got != want {
		t.Errorf("exchange@v1 -> exchange@v2 over %d inputs:\n%s\nwant\n%s", dom.Size(), got, want)
	}
}

// An outcome names what an export does, so a change of capsule or copy is
// a group of its own.
func TestOutcomeOfAnExport(t *testing.T) {
	rs := loadRuleSet(t, "exchange@v2")
	d, err := rs.Resolve(context.Background(), engine.Input{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0, "max_version": []any{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	a := engine.Answer{Decision: d}
	if got, want := a.Outcome().String(), "unknown-platform-host-copy (kDLCPU, copy, dltensor_versioned, DLPACK_FLAG_BITMASK_IS_COPIED)"; got != want {
		t.Errorf("Outcome() = %s, want %s", got, want)
	}
}
