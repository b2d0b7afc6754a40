package serve

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

const (
	cudaInput    = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`
	unknownInput = `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}`
	badInput     = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":"0"}`
)

// TestResolve is the API's contract: each decision is `dlroute resolve
// --json`'s line with the revision added.
func TestResolve(t *testing.T) {
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{MaxBody: 4096, MaxBatch: 3})
	rev := ts.rules.Current().Revision()
	tests := []struct {
		name, query, body string
		status            int
		want              string
	}{
		{"one input", "", cudaInput, 200,
			`{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"REV"}`},
		{"an exception is an answer", "", unknownInput, 200,
			`{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3","revision":"REV"}`},
		{"an older version", "?ruleset=jax@v1", `{"platform":"gpu","platform_version":"oneapi 2026.0","local_hardware_id":0}`, 200,
			`{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: oneapi 2026.0"},"rule":"gpu-unknown-platform","ruleset":"jax@v1","revision":"REV"}`},
		{"the version for a release", "?ruleset=jax==0.10.2", `{"platform":"gpu","platform_version":"cuda 12030","memory_kind":"pinned_host","local_hardware_id":0}`, 200,
			`{"device_type":"kDLCUDAHost","device_type_code":3,"device_id":0,"rule":"gpu","ruleset":"jax@v1.1","revision":"REV"}`},
		{"a release no version covers", "?ruleset=jax==0.4.14", cudaInput, 404,
			`{"error":{"code":"no_ruleset","message":"rule set jax has no version for release 0.4.14","hint":"it is older than every version: the oldest, jax@v0 covers 0.4.15 to 0.4.25"}}`},
		{"the exchange", "?ruleset=exchange", `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`, 200,
			`{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"copy":true,"capsule":"dltensor_versioned","flags":["DLPACK_FLAG_BITMASK_IS_COPIED"],"rule":"unknown-platform-host-copy","ruleset":"exchange@v2","revision":"REV"}`},
		{"an input error", "", badInput, 400,
			`{"input_error":{"code":"wrong_type","message":"input local_hardware_id is a string; want int or null"}}`},
		{"not JSON", "", `platform=gpu`, 400,
			`{"input_error":{"code":"json_syntax","message":"invalid character 'p' looking for beginning of value (at byte 1)"}}`},
		{"a batch", "", "[" + cudaInput + "," + badInput + ",\n " + unknownInput + "]", 200,
			`[{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"REV"},` +
				`{"input_error":{"index":1,"code":"wrong_type","message":"input local_hardware_id is a string; want int or null"}},` +
				`{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3","revision":"REV"}]`},
		{"a batch with a non-object", "", `[1]`, 200,
			`[{"input_error":{"index":0,"code":"json_syntax","message":"input is an int; want a JSON object"}}]`},
		{"an empty batch", "", `[]`, 200, `[]`},
		{"a broken batch", "", `[` + cudaInput, 400,
			`{"error":{"code":"json_syntax","message":"the body is neither a JSON object nor an array of them: unexpected end of JSON input"}}`},
		{"a batch over MaxBatch", "", "[{},{},{},{}]", 413,
			`{"error":{"code":"too_long","message":"the batch has 4 inputs; the limit is 3","hint":"send fewer inputs per request"}}`},
		{"a body over MaxBody", "", "[" + strings.Repeat(" ", 5000) + "]", 413,
			`{"error":{"code":"too_long","message":"the body is larger than 4096 bytes","hint":"send fewer inputs per request"}}`},
		{"an unknown rule set", "?ruleset=tensorflow", cudaInput, 404,
			`{"error":{"code":"no_ruleset","message":"no rule set \"tensorflow\"","hint":"loaded: ` + strings.Join(ruleSetNames(t), ", ") + `"}}`},
		{"an unknown version", "?ruleset=jax@v9", cudaInput, 404,
			`{"error":{"code":"no_ruleset","message":"rule set jax has no version \"v9\"","hint":"versions: v0, v1, v1.1, v1.2, v2, v3"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.post(t, tt.query, tt.body) // a second answer comes from the memo
			status, header, body := ts.post(t, tt.query, tt.body)
			want := strings.ReplaceAll(tt.want, "REV", rev) + "\n"
			if status != tt.status || body != want {
				t.Errorf("POST /v1/resolve%s %s:\ngot  %d %s\nwant %d %s", tt.query, tt.body, status, body, tt.status, want)
			}
			if got := header.Get(RevisionHeader); status < 404 && got != rev {
				t.Errorf("%s: %s = %q, want %q", tt.name, RevisionHeader, got, rev)
			}
		})
	}
	if status, body := ts.get(t, "/v1/resolve"); status != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/resolve = %d %s, want 405", status, body)
	}
}

func TestRulesStatusHealth(t *testing.T) {
	ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{})
	rev := ts.rules.Current().Revision()

	_, body := ts.get(t, "/v1/rules")
	var rules struct {
		Revision string
		RuleSets []struct {
			Ref     string
			Default bool
		}
	}
	json.Unmarshal([]byte(body), &rules)
	var refs []string
	for _, rs := range rules.RuleSets {
		if rs.Default {
			refs = append(refs, rs.Ref)
		}
	}
	want, err := engine.Load(ruletest.Rules(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var defaults []string
	for _, name := range ruleSetNames(t) {
		newest, _ := want.RuleSet(name)
		defaults = append(defaults, newest.Ref())
	}
	if n := len(want.RuleSets()); rules.Revision != rev || len(rules.RuleSets) != n || !slices.Equal(refs, defaults) {
		t.Errorf("/v1/rules = revision %s, %d versions, defaults %v; want %s, %d, %v", rules.Revision, len(rules.RuleSets), refs, rev, n, defaults)
	}

	st := ts.status(t)
	if st.Active == nil || st.Active.Revision != rev || st.Source != "rules" || st.Activations != 1 || st.LastCheck.Outcome != live.Activated {
		t.Errorf("/v1/status = %+v; want revision %s from rules, one activation", st, rev)
	}
	if status, body := ts.get(t, "/healthz"); status != 200 || body != `{"revision":"`+rev+`","status":"ok"}`+"\n" {
		t.Errorf("/healthz = %d %s", status, body)
	}

	ts.post(t, "", cudaInput)
	ts.post(t, "", badInput)
	_, metrics := ts.get(t, "/metrics")
	for _, want := range []string{
		`dlroute_decisions_total{outcome="device",ruleset="jax@v3"} 1`,
		`dlroute_decisions_total{outcome="input_error",ruleset="jax@v3"} 1`,
		`dlroute_rules_active_info{revision="` + rev + `"} 1`,
		`dlroute_rules_checks_total{outcome="activated"} 1`,
		`dlroute_http_requests_total{code="200",handler="resolve"} 1`,
		`dlroute_http_requests_total{code="400",handler="resolve"} 1`,
		`dlroute_resolve_duration_seconds_count{kind="single"} 2`,
		`go_goroutines`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// ruleSetNames is the names in ruletest.Rules(), sorted.
func ruleSetNames(t *testing.T) []string {
	t.Helper()
	cat, err := engine.Load(ruletest.Rules(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rs := range cat.RuleSets() {
		if !slices.Contains(names, rs.Name()) {
			names = append(names, rs.Name())
		}
	}
	slices.Sort(names)
	return names
}

// TestResolveReleaseWarning: a ?ruleset=NAME==RELEASE that no version was
// checked against is answered by the version that stands in for it, with
// the engine's warning in the Dlroute-Release-Warning header, and in one
// input's decision after the revision (a batch's decisions are as without
// a warning); a strict server refuses it as it refuses a release no
// version covers.
func TestResolveReleaseWarning(t *testing.T) {
	for _, strict := range []bool{false, true} {
		ts := newTestServer(t, live.Static("rules", ruletest.Rules()), HandlerConfig{StrictRelease: strict})
		rev := ts.rules.Current().Revision()
		_, w, err := ts.rules.Current().Catalog().Lookup("jax==9.0")
		if err != nil || w == nil {
			t.Fatalf("Lookup(jax==9.0) = %v, %v; want a warning", w, err)
		}
		warning, _ := json.Marshal(w)
		decided := `{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"` + rev + `","release_warning":` + string(warning) + `}`
		plain := `{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"` + rev + `"}`
		want, wantStatus, wantHeader := decided+"\n", 200, string(warning)
		wantBatch := "[" + plain + "," + plain + "]\n"
		if strict {
			refused, _ := json.Marshal(map[string]any{"error": struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Hint    string `json:"hint"`
			}{"unchecked_release", w.Refusal().Message, w.Refusal().Hint}})
			want, wantStatus, wantBatch, wantHeader = string(refused)+"\n", 404, string(refused)+"\n", ""
		}
		for _, c := range []struct{ body, want string }{{cudaInput, want}, {"[" + cudaInput + "," + cudaInput + "]", wantBatch}} {
			status, header, body := ts.post(t, "?ruleset=jax==9.0", c.body)
			if body != c.want || (c.body == cudaInput || strict) && status != wantStatus {
				t.Errorf("strict %v: POST ?ruleset=jax==9.0 %s:\ngot  %d %s\nwant %d %s", strict, c.body, status, body, wantStatus, c.want)
			}
			if got := header.Get(ReleaseWarningHeader); got != wantHeader {
				t.Errorf("strict %v: POST ?ruleset=jax==9.0 %s: %s is %q; want %q", strict, c.body, ReleaseWarningHeader, got, wantHeader)
			}
		}
		// A release a version covers carries no warning.
		if _, _, body := ts.post(t, "?ruleset=jax==0.11.0", cudaInput); strings.Contains(body, "release_warning") {
			t.Errorf("strict %v: jax==0.11.0 answered %s, want no warning", strict, body)
		}
	}
}
