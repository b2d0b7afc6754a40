package playground_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/playground"
	"github.com/dlroute/dlroute/rules"
)

// interopDoc is what the page reads of interop.json.
type interopDoc struct {
	Source, Revision, Call, Error string
	Consumers                     []string
	Rows                          []struct {
		Producer, Platform, Memory string
		Older                      bool
		Cells                      []interopCell
	}
	Copies []struct {
		Copy  bool
		Call  string
		Cells [][]interopCell
	}
}

type interopCell struct {
	Outcome, Short string
	Error          *struct{ Type, Message string }
	Steps          []struct {
		Ref, Call string
		Input     map[string]any
		Decision  struct{ Rule, RuleSet string }
	}
	Checked struct {
		Run                bool
		Producer, Consumer []struct {
			RuleSet string
			Checked map[string]string
		}
	}
	Lane      string
	OtherLane string `json:"other_lane"`
	Remedy    *interop.Remedy
}

// sameWays says whether a cell of interop.json has the native cell's lane,
// other lane and remedy, the fields the opened cell shows.
func sameWays(got interopCell, want interop.Cell) bool {
	return got.Lane == string(want.Lane) && got.OtherLane == string(want.OtherLane) &&
		(got.Remedy == nil) == (want.Remedy == nil) && (got.Remedy == nil || *got.Remedy == *want.Remedy)
}

func getInterop(t *testing.T, h http.Handler, header ...string) (interopDoc, *http.Response) {
	t.Helper()
	resp := get(h, "GET", "/interop.json", header...)
	var doc interopDoc
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatalf("interop.json: %v", err)
		}
	}
	return doc, resp
}

// cellOf is the cell of producer's array on platform into consumer, and
// whether the document has it.
func cellOf(doc interopDoc, producer, platform, consumer string) (interopCell, bool) {
	col := -1
	for i, ref := range doc.Consumers {
		if ref == consumer {
			col = i
		}
	}
	for _, r := range doc.Rows {
		if r.Producer == producer && r.Platform == platform && col >= 0 && col < len(r.Cells) {
			return r.Cells[col], true
		}
	}
	return interopCell{}, false
}

func TestInteropJSON(t *testing.T) {
	h := servedHandler(t)
	doc, resp := getInterop(t, h)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Content-Security-Policy") != playground.ContentSecurityPolicy {
		t.Fatalf("GET /interop.json: %d %q, policy %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"))
	}
	if doc.Error != "" || doc.Source != "embedded" || doc.Call != "from_dlpack(x)" || len(doc.Rows) < 10 {
		t.Fatalf("interop.json: source %q, call %q, %d rows, error %q; want the embedded rules' matrix", doc.Source, doc.Call, len(doc.Rows), doc.Error)
	}
	// The seed's case: JAX's GPU array of unknown platform fails in torch
	// at jax's __dlpack_device__.
	seed, ok := cellOf(doc, "jax@v3", "gpu <unknown>", "torch@v3")
	if !ok || seed.Outcome != "error" || seed.Error == nil || seed.Error.Type != "BufferError" || !strings.HasPrefix(seed.Short, "BufferError: Unknown GPU plat") {
		t.Errorf("jax@v3 gpu <unknown> into torch@v3: %+v (found %v), want BufferError: Unknown GPU platform", seed, ok)
	} else if last := seed.Steps[len(seed.Steps)-1]; last.Ref != "jax@v3" || last.Call != "__dlpack_device__" || last.Decision.Rule != "gpu-unknown-platform" || last.Input["platform_version"] != "<unknown>" {
		t.Errorf("its last step: %+v, want jax@v3's __dlpack_device__ decided by gpu-unknown-platform on platform_version <unknown>", last)
	}
	if c, ok := cellOf(doc, "numpy@v2", "(kDLCPU, 0)", "torch@v3"); !ok || c.Outcome != "in_place" || c.Short != "in place" || c.Steps[len(c.Steps)-1].Ref != "torch@v3" {
		t.Errorf("numpy@v2 (kDLCPU, 0) into torch@v3: %+v (found %v), want in place, decided last by torch@v3", c, ok)
	}
	// Each cell says what both sides were checked against: cupy@v1 was
	// read from source only, so no cell into it was run here.
	if c, ok := cellOf(doc, "jax@v3", "gpu <unknown>", "cupy@v1"); !ok || c.Checked.Run ||
		len(c.Checked.Producer) != 2 || c.Checked.Producer[1].RuleSet != "jax-export@v2" || c.Checked.Consumer[0].Checked["14.2.0"] != "source" {
		t.Errorf("jax@v3 gpu <unknown> into cupy@v1: checked %+v, want jax@v3 and jax-export@v2 into cupy@v1, 14.2.0 from source", c.Checked)
	}
	for _, r := range doc.Rows {
		for i, c := range r.Cells {
			if len(c.Checked.Producer) == 0 || len(c.Checked.Consumer) != 1 || c.Checked.Consumer[0].RuleSet != doc.Consumers[i] {
				t.Errorf("%s %s into %s: checked %+v, want both sides", r.Producer, r.Platform, doc.Consumers[i], c.Checked)
			}
			for _, s := range c.Steps {
				if s.Ref == "" || s.Ref != s.Decision.RuleSet {
					t.Errorf("%s %s into %s: step %s has ref %q, decided by %q", r.Producer, r.Platform, doc.Consumers[i], s.Call, s.Ref, s.Decision.RuleSet)
				}
			}
		}
	}

	// The document against the native matrix: content, which the run
	// without -race checks (testenv.ContentOnly).
	if !testenv.RaceDetector {
		interopIsNative(t, doc)
	}

	// Revalidated by ETag, as rules.json is, and compressed.
	etag := resp.Header.Get("ETag")
	if _, resp := getInterop(t, h, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with its ETag: %d, want 304", resp.StatusCode)
	}
	if resp := get(h, "GET", "/interop.json", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("with gzip accepted: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}

// TestInteropPublish: Publish decides interop.json again, and a request
// with the ETag of the rules it replaced gets the new document. Rules
// with no other library are an empty grid, rules that do not load a
// document that says why.
func TestInteropPublish(t *testing.T) {
	h, err := playground.New(withTestDeadline(t, playground.Options{Rules: ruletest.Matrix(), Source: "rules", Revision: "r1", Live: true, Module: fakeModule}))
	if err != nil {
		t.Fatal(err)
	}
	doc, resp := getInterop(t, h)
	if _, ok := cellOf(doc, "jax@v3", "gpu <unknown>", "torch@v3"); resp.StatusCode != http.StatusOK || doc.Revision != "r1" || !ok {
		t.Fatalf("interop.json of jax and torch: %d, revision %q, %d rows, error %q; want r1's grid with jax@v3's unknown GPU into torch@v3", resp.StatusCode, doc.Revision, len(doc.Rows), doc.Error)
	}
	etag := resp.Header.Get("ETag")
	jaxOnly := fstest.MapFS{}
	for p, f := range ruletest.Matrix() {
		if strings.HasPrefix(p, "jax/") {
			jaxOnly[p] = f
		}
	}
	if err := h.Publish(jaxOnly, "r2"); err != nil {
		t.Fatal(err)
	}
	doc, resp = getInterop(t, h, "If-None-Match", etag)
	if resp.StatusCode != http.StatusOK || doc.Revision != "r2" || doc.Error != "" || len(doc.Rows) != 0 || len(doc.Consumers) != 0 {
		t.Errorf("after Publish of jax alone: %d, revision %q, %d rows, consumers %v, error %q; want r2's empty grid", resp.StatusCode, doc.Revision, len(doc.Rows), doc.Consumers, doc.Error)
	}
	if err := h.Publish(fstest.MapFS{"jax/v9/rules.yaml": {Data: []byte("rules: []\n")}}, "r3"); err != nil {
		t.Fatal(err)
	}
	if doc, _ = getInterop(t, h); doc.Revision != "r3" || doc.Error == "" || len(doc.Rows) != 0 {
		t.Errorf("after Publish of rules that do not load: revision %q, %d rows, error %q; want r3 with the load error", doc.Revision, len(doc.Rows), doc.Error)
	}
}

// interopIsNative checks doc, the embedded rules' interop.json, against
// the native matrix of the same rules: the copies' matrices, row for row,
// and the other versions' rows after the default versions'.
func interopIsNative(t *testing.T, doc interopDoc) {
	t.Helper()
	// The same matrix with copy=True and copy=False, row for row, as the
	// native matrix decides them: the question on the first screen asks
	// with copy as well.
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Copies) != 2 || !doc.Copies[0].Copy || doc.Copies[1].Copy || doc.Copies[0].Call != "from_dlpack(x, copy=True)" {
		t.Fatalf("interop.json's copies: %d, want copy=True then copy=False", len(doc.Copies))
	}
	for _, v := range doc.Copies {
		m, err := interop.Options{Args: engine.Input{"copy": v.Copy}}.Decide(context.Background(), cat)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Cells) != len(doc.Rows) {
			t.Fatalf("%s: %d rows, the document %d", v.Call, len(v.Cells), len(doc.Rows))
		}
		for i, r := range m.Rows {
			for j, c := range r.Cells {
				if got := v.Cells[i][j]; got.Outcome != string(c.Outcome) || len(got.Steps) != len(c.Steps) {
					t.Errorf("%s, %s %s into %s: %s in %d steps, natively %s in %d", v.Call, r.Producer, r.Array.Platform, m.Consumers[j], got.Outcome, len(got.Steps), c.Outcome, len(c.Steps))
				} else if !sameWays(got, c) {
					t.Errorf("%s, %s %s into %s: lane %q, other lane %q, remedy %+v; natively %q, %q, %+v", v.Call, r.Producer, r.Array.Platform, m.Consumers[j], got.Lane, got.OtherLane, got.Remedy, c.Lane, c.OtherLane, c.Remedy)
				}
			}
		}
	}

	// After the default versions' rows, the other versions' (the
	// question asks of every version; the grid shows the defaults):
	// jax@v1.1's unknown platform into torch@v3, as natively.
	older, err := interop.Options{Producers: []string{"jax@v1.1"}, Consumers: doc.Consumers}.Decide(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	defaults := 0
	for _, r := range doc.Rows {
		if !r.Older {
			defaults++
		}
	}
	native := interopRowsOf(t, cat)
	if want := len(native); defaults != want || doc.Rows[defaults-1].Older {
		t.Errorf("interop.json has %d rows of default versions, natively %d, want them first", defaults, want)
	}
	// Each cell's lane and remedy, which the page shows when it is opened.
	for i, r := range native[:min(len(native), defaults)] {
		for j, c := range r.Cells {
			if got := doc.Rows[i].Cells[j]; !sameWays(got, c) {
				t.Errorf("%s %s into %s: lane %q, other lane %q, remedy %+v; natively %q, %q, %+v", r.Producer, r.Array.Platform, doc.Consumers[j], got.Lane, got.OtherLane, got.Remedy, c.Lane, c.OtherLane, c.Remedy)
			}
		}
	}
	got, ok := cellOf(doc, "jax@v1.1", "gpu <unknown>", "torch@v3")
	var want interop.Cell
	for _, r := range older.Rows {
		if r.Array.Platform == "gpu <unknown>" {
			want = r.Cells[slices.Index(older.Consumers, "torch@v3")]
		}
	}
	if !ok || got.Outcome != string(want.Outcome) || want.Outcome == "" {
		t.Errorf("jax@v1.1 gpu <unknown> into torch@v3: %+v (found %v), natively %s", got, ok, want.Outcome)
	}
}

// interopRowsOf is the rows of the native matrix of cat's default versions.
func interopRowsOf(t *testing.T, cat *engine.Catalog) []interop.Row {
	t.Helper()
	m, err := interop.Options{}.Decide(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	return m.Rows
}

func TestWriteSiteWritesInterop(t *testing.T) {
	testenv.ContentOnly(t)
	dir := t.TempDir()
	if err := playground.WriteSite(dir, playground.Options{Rules: rules.FS, Source: "static", Module: fakeModule}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc interopDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	served, _ := getInterop(t, servedHandler(t))
	if _, ok := cellOf(doc, "jax@v3", "gpu <unknown>", "torch@v3"); !ok || len(doc.Rows) != len(served.Rows) || doc.Source != "static" {
		t.Errorf("the site's interop.json: %d rows from %q, want the %d the handler serves, from static", len(doc.Rows), doc.Source, len(served.Rows))
	}
}
