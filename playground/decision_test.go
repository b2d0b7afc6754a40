package playground_test

import (
	"github.com/dlroute/dlroute/internal/testkit/testenv"

	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/playground"
	"github.com/dlroute/dlroute/rules"
)

// fakeDecision stands in for the decision module: the handler never
// looks inside.
var fakeDecision = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("plans "), 1024)...)

// plansRules is what rules.json says of the plans.
type plansRules struct {
	Plans *struct {
		ETag string   `json:"etag"`
		Refs []string `json:"refs"`
	} `json:"plans"`
	Described map[string]struct {
		Ref    string             `json:"ref"`
		Inputs []engine.InputDecl `json:"inputs"`
	} `json:"described"`
}

func fetch(t *testing.T, h http.Handler, path string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func body(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	r := io.Reader(resp.Body)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func plansOf(t *testing.T, h http.Handler) plansRules {
	t.Helper()
	var doc plansRules
	if err := json.Unmarshal(body(t, fetch(t, h, "/rules.json")), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestHandlerServesTheDecisionModule: with Options.Decision the page gets
// decision.wasm, compressed as the compiler module is, and plans.bin,
// the embedded rules' plans as generated, which rules.json names by its
// ETag with every version it holds, and every version's inputs.
func TestHandlerServesTheDecisionModule(t *testing.T) {
	testenv.ContentOnly(t)
	h, err := playground.New(playground.Options{Rules: rules.FS, Source: "embedded", Module: fakeModule, Decision: fakeDecision})
	if err != nil {
		t.Fatal(err)
	}
	resp := fetch(t, h, "/decision.wasm")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/wasm" || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("ETag") == "" {
		t.Errorf("GET /decision.wasm: %d, %v; want 200, application/wasm, gzip, an ETag", resp.StatusCode, resp.Header)
	}
	if got := body(t, resp); !bytes.Equal(got, fakeDecision) {
		t.Errorf("decision.wasm is %d bytes, want the %d given", len(got), len(fakeDecision))
	}
	resp = fetch(t, h, "/plans.bin")
	if got := body(t, resp); resp.StatusCode != 200 || !bytes.Equal(got, rules.Plans) {
		t.Errorf("GET /plans.bin: %d, %d bytes; want rules/plans.bin's %d", resp.StatusCode, len(got), len(rules.Plans))
	}
	doc := plansOf(t, h)
	if doc.Plans == nil || doc.Plans.ETag != resp.Header.Get("ETag") {
		t.Fatalf("rules.json's plans = %+v; want the ETag of plans.bin, %s", doc.Plans, resp.Header.Get("ETag"))
	}
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(doc.Plans.Refs, e.Ref) {
			t.Errorf("rules.json's plans do not list %s, which plans.bin holds", e.Ref)
		}
		if d := doc.Described[e.Ref]; d.Ref != e.Ref || len(d.Inputs) == 0 {
			t.Errorf("rules.json describes %s as %+v; want its ref and inputs", e.Ref, d)
		}
	}
	if len(doc.Plans.Refs) != len(entries) {
		t.Errorf("rules.json lists %d versions with plans; plans.bin holds %d", len(doc.Plans.Refs), len(entries))
	}

	// Without the decision module: neither file, and no plans named.
	h, err = playground.New(playground.Options{Rules: rules.FS, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/decision.wasm", "/plans.bin"} {
		if resp := fetch(t, h, p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("without Options.Decision, GET %s = %d, want 404", p, resp.StatusCode)
		}
	}
	if doc := plansOf(t, h); doc.Plans != nil || doc.Described != nil {
		t.Errorf("without Options.Decision rules.json names plans: %+v", doc)
	}
}

// servedVersion is a rules directory of one version, the embedded
// numpy@v1, its rules.yaml led by n comment lines: the same decisions at
// other lines, so other plans.
func servedVersion(t *testing.T, n int) fstest.MapFS {
	t.Helper()
	dir := fstest.MapFS{}
	for _, name := range []string{"manifest.yaml", "device_types.yaml", "rules.yaml", "tests.yaml"} {
		data, err := rules.FS.ReadFile("numpy/v1/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "rules.yaml" {
			data = append(bytes.Repeat([]byte("# a line\n"), n), data...)
		}
		dir["numpy/v1/"+name] = &fstest.MapFile{Data: data}
	}
	return dir
}

// TestPublishReplacesThePlans: a served directory's plans are built
// from it, and a Publish of other rules serves their plans.bin, which
// the new rules.json names; rules that do not load have none, and the
// page decides them with the compiler module.
func TestPublishReplacesThePlans(t *testing.T) {
	h, err := playground.New(playground.Options{Rules: servedVersion(t, 0), Source: "/tmp/mine", Module: fakeModule, Decision: fakeDecision, Live: true})
	if err != nil {
		t.Fatal(err)
	}
	first := plansOf(t, h)
	if first.Plans == nil || !slices.Equal(first.Plans.Refs, []string{"numpy@v1"}) {
		t.Fatalf("rules.json's plans of a served directory = %+v, want numpy@v1's", first.Plans)
	}
	if err := h.Publish(servedVersion(t, 1), "r2"); err != nil {
		t.Fatal(err)
	}
	resp := fetch(t, h, "/plans.bin")
	next := plansOf(t, h)
	if next.Plans == nil || next.Plans.ETag == first.Plans.ETag || next.Plans.ETag != resp.Header.Get("ETag") {
		t.Errorf("after Publish rules.json names plans %+v and plans.bin has ETag %s; want new plans, the ones served", next.Plans, resp.Header.Get("ETag"))
	}
	if _, err := plan.DecodeSet(body(t, resp)); err != nil {
		t.Errorf("plans.bin after Publish: %v", err)
	}

	broken := servedVersion(t, 0)
	broken["numpy/v1/rules.yaml"] = &fstest.MapFile{Data: []byte("rules: [")}
	if err := h.Publish(broken, "r3"); err != nil {
		t.Fatal(err)
	}
	if resp := fetch(t, h, "/plans.bin"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("plans.bin of rules that do not load: %d, want 404", resp.StatusCode)
	}
	if doc := plansOf(t, h); doc.Plans != nil {
		t.Errorf("rules.json of rules that do not load names plans %+v", doc.Plans)
	}
}

// TestFirstJSONNamesTheFirstCaseAndItsPlans: with the decision module,
// first.json is rules.json's first case (its version and input) and the
// ETag of the plans.bin served with it, which the page decides before it
// reads rules.json; rules with no first case, or a site without the
// decision module, have none, and a Publish replaces it with plans.bin.
func TestFirstJSONNamesTheFirstCaseAndItsPlans(t *testing.T) {
	testenv.ContentOnly(t)
	h, err := playground.New(playground.Options{Rules: rules.FS, Source: "embedded", Module: fakeModule, Decision: fakeDecision, Live: true})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		First struct{ Ref, Input string } `json:"first"`
	}
	if err := json.Unmarshal(body(t, fetch(t, h, "/rules.json")), &doc); err != nil {
		t.Fatal(err)
	}
	resp := fetch(t, h, "/first.json")
	var first struct {
		Ref, Input, Plans string
		Set               []byte
	}
	if err := json.Unmarshal(body(t, resp), &first); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /first.json: %d %s, %v; want 200, JSON", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	plans := fetch(t, h, "/plans.bin").Header.Get("ETag")
	if doc.First.Ref == "" || first.Ref != doc.First.Ref || first.Input != doc.First.Input || first.Plans != plans {
		t.Errorf("first.json = %+v; want rules.json's first case %+v and plans.bin's ETag %s", first, doc.First, plans)
	}
	// Its set is that version's plan from plans.bin, alone.
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(entries, func(e plan.Entry) bool { return e.Ref == first.Ref })
	if got, err := plan.DecodeSet(first.Set); err != nil || len(got) != 1 || i < 0 || got[0].Ref != first.Ref || !bytes.Equal(got[0].Plan, entries[i].Plan) {
		t.Errorf("first.json's set holds %v (%v); want %s's plan from plans.bin alone", got, err, first.Ref)
	}

	// Rules with no jax have no first case: no first.json, and plans.bin
	// is still served.
	if err := h.Publish(servedVersion(t, 0), "r2"); err != nil {
		t.Fatal(err)
	}
	if resp := fetch(t, h, "/first.json"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("first.json of rules with no jax: %d, want 404", resp.StatusCode)
	}
	if resp := fetch(t, h, "/plans.bin"); resp.StatusCode != 200 {
		t.Errorf("plans.bin of rules with no jax: %d, want 200", resp.StatusCode)
	}

	h, err = playground.New(playground.Options{Rules: rules.FS, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	if resp := fetch(t, h, "/first.json"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("without Options.Decision, GET /first.json = %d, want 404", resp.StatusCode)
	}
}
