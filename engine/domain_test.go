package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// loadRuleSet loads the embedded rule set ref.
func loadRuleSet(t testing.TB, ref string) *engine.RuleSet {
	t.Helper()
	return ruleSet(t, loadEmbedded(t, engine.Options{}), ref)
}

// ruleSetOf compiles one version, test/v1, from the text of its rules.yaml
// and the input of its one case (which is checked, not run).
func ruleSetOf(t *testing.T, rulesYAML, caseInput string) *engine.RuleSet {
	t.Helper()
	fsys := fstest.MapFS{
		"test/v1/manifest.yaml":     {Data: []byte("name: test\nversion: v1\ndescription: a test\nmirrors: {project: none}\n")},
		"test/v1/device_types.yaml": {Data: []byte("device_types: {kDLCPU: 1, kDLCUDA: 2, kDLCUDAHost: 3}\n")},
		"test/v1/rules.yaml":        {Data: []byte(rulesYAML)},
		"test/v1/tests.yaml":        {Data: []byte("cases:\n  - {name: one, input: " + caseInput + ", want: {device_type: kDLCPU}}\n")},
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatalf("%v\nin:\n%s", err, rulesYAML)
	}
	rs, _ := cat.RuleSet("test")
	return rs
}

// valuesOf writes a domain as "name: values" lines, values as JSON.
func valuesOf(d *engine.Domain) string {
	var b strings.Builder
	for _, in := range d.Inputs {
		vals, _ := json.Marshal(in.Values)
		fmt.Fprintf(&b, "%s: %s\n", in.Name, vals)
	}
	return b.String()
}

// The domain of the shipped rules is every value JAX's table turns on: the
// platforms, each marker of gpu_markers, pinned_host, a null id and the
// sharding boundary, each with a value the rules do not name.
func TestDeriveDomainJAX(t *testing.T) {
	d := engine.DeriveDomain(loadRuleSet(t, "jax@v3"))
	want := `platform: ["cpu","gpu","tpu","\u003cunknown\u003e"]
platform_version: ["cuda","rocm","oneapi","\u003cunknown\u003e"]
memory_kind: ["device","pinned_host","\u003cunknown\u003e",null]
local_hardware_id: [null,0]
shards: [1,0]
`
	if got := valuesOf(d); got != want {
		t.Errorf("DeriveDomain(jax@v3) got\n%swant\n%s", got, want)
	}
	if got := d.Size(); got != 4*4*4*2*2 {
		t.Errorf("Size() = %d, want %d", got, 4*4*4*2*2)
	}
	for i, typ := range []string{"string", "string", "string?", "int?", "int"} {
		if d.Inputs[i].Type != typ {
			t.Errorf("input %s has type %q, want %q", d.Inputs[i].Name, d.Inputs[i].Type, typ)
		}
	}
	// v2 has no oneapi marker and the same inputs: the union is v3's domain.
	if got, want := valuesOf(engine.DeriveDomain(loadRuleSet(t, "jax@v2"), loadRuleSet(t, "jax@v3"))), valuesOf(d); got != want {
		t.Errorf("DeriveDomain(jax@v2, jax@v3) got\n%swant\n%s", got, want)
	}
	if got := valuesOf(engine.DeriveDomain(loadRuleSet(t, "jax@v2"))); !strings.Contains(got, `platform_version: ["cuda","rocm","\u003cunknown\u003e"]`) {
		t.Errorf("DeriveDomain(jax@v2) has no oneapi, got\n%s", got)
	}
}

// Each way a rule can test an input gives the input the values it names.
func TestDeriveDomainReads(t *testing.T) {
	tests := []struct {
		name, inputs, extra, when, caseInput string
		want                                 string
	}{
		{
			name:   "a string compared either way round, and in a list",
			inputs: "p: string", when: "'gpu' == p || p != 'cpu' || p in ['tpu', 'gpu']", caseInput: "{p: x}",
			want: `p: ["gpu","cpu","tpu","\u003cunknown\u003e"]`,
		},
		{
			name:   "string tests, and an unknown value that contains none of them",
			inputs: "v: string", when: "v.startsWith('<unknown') || v.endsWith('x') || v.contains('')", caseInput: "{v: x}",
			want: `v: ["\u003cunknown","x","","?"]`,
		},
		{
			name:   "a table column through a comprehension variable, and a device-type column",
			inputs: "v: string\n  code: int",
			extra:  "tables:\n  markers:\n    columns: {marker: string, device: device_type}\n    rows:\n      - {marker: cuda, device: kDLCUDA}\n      - {marker: nv, device: kDLCUDAHost}\n",
			when:   "markers.exists(m, v.contains(m.marker)) && markers.all(m, m['device'] != code)", caseInput: "{v: x, code: 1}",
			want: "v: [\"cuda\",\"nv\",\"\\u003cunknown\\u003e\"]\ncode: [2,3,0]",
		},
		{
			name:   "numbers with their neighbours under an ordering, defaults first",
			inputs: "n: {type: int, default: 7}\n  x: double", when: "n >= 5 && n != 9 && x < 0.5", caseInput: "{x: 1.0}",
			want: "n: [7,4,5,9,0]\nx: [-0.5,0.5,0]",
		},
		{
			name:   "a value that aliases an input, and a device-type constant",
			inputs: "kind: string\n  dev: int?", extra: "values:\n  k: kind\n  k2: k\n", when: "k2 == 'pinned' && dev == kDLCUDA", caseInput: "{kind: x, dev: null}",
			want: "kind: [\"pinned\",\"\\u003cunknown\\u003e\"]\ndev: [2,0,null]",
		},
		{
			name:   "a test not followed gives the input every tested literal of its type",
			inputs: "p: string\n  n: int", when: "p.lowerAscii() == 'gpu' && n == 3 && size(p) > 1", caseInput: "{p: x, n: 0}",
			want: "p: [\"gpu\",\"\\u003cunknown\\u003e\"]\nn: [3,0]",
		},
		{
			name:   "a computed value is not looked through",
			inputs: "p: string", extra: "values:\n  found: '[p].filter(x, x == ''a'')'\n", when: "found.size() == 0", caseInput: "{p: x}",
			want: `p: ["\u003cunknown\u003e"]`,
		},
		{
			name:   "bools",
			inputs: "copy: bool?", when: "copy == true", caseInput: "{copy: null}",
			want: "copy: [false,true,null]",
		},
		{
			name:   "lists by element, with [] where the size is tested, and null",
			inputs: "dl_device: list(int)?\n  max_version: list(int)?",
			when:   "dl_device != null && dl_device[0] == kDLCPU && dl_device[1] != null && max_version[0] >= 1 && size(max_version) == 2", caseInput: "{dl_device: null, max_version: null}",
			want: "dl_device: [[1,0],[0,0],null]\nmax_version: [[0],[1],[2],[],null]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := "inputs:\n  " + tt.inputs + "\n" + tt.extra + "rules:\n  - id: r\n    when: " + quoteYAML(tt.when) + "\n    device: {type: kDLCPU, id: 0}\n"
			got := strings.TrimSpace(valuesOf(engine.DeriveDomain(ruleSetOf(t, yaml, tt.caseInput))))
			if got != tt.want {
				t.Errorf("DeriveDomain of when: %s\ngot\n%s\nwant\n%s", tt.when, got, tt.want)
			}
		})
	}
}

func quoteYAML(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
