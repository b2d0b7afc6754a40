package playground_test

import (
	"github.com/dlroute/dlroute/internal/testkit/testenv"

	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/playground"
	"github.com/dlroute/dlroute/rules"
)

// fakeModule stands in for the 27 MB module: the handler never looks
// inside it.
var fakeModule = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("dlroute "), 4096)...)

// embedded are the options of the handler of the embedded rules.
var embedded = playground.Options{Rules: rules.FS, Source: "embedded", Module: fakeModule}

// servedHandler is the handler of the embedded rules, made once per test
// binary for the tests that only ask it for what it serves: New reads and
// compresses every file and starts deciding interop.json, seconds under
// -race.
func servedHandler(t *testing.T) *playground.Handler {
	t.Helper()
	servedOnce.Do(func() { served, servedErr = playground.New(withTestDeadline(t, embedded)) }) // the binary's deadline, t's as any test's
	if servedErr != nil {
		t.Fatal(servedErr)
	}
	return served
}

var (
	servedOnce sync.Once
	served     *playground.Handler
	servedErr  error
)

// withTestDeadline is opts with the test's own deadline for deciding
// interop.json, in place of InteropTimeout: under -race on a busy machine
// the shipped rules' matrix ran past those 30 s, and a test of what the
// matrix holds must not fail on the machine's speed. The tests of the
// deadline itself set theirs (interop_deadline_test.go).
func withTestDeadline(t *testing.T, opts playground.Options) playground.Options {
	opts.InteropTimeout = testenv.Patience(t)
	return opts
}

func get(h http.Handler, method, path string, header ...string) *http.Response {
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func TestHandlerServesTheSite(t *testing.T) {
	h := servedHandler(t)
	for _, c := range []struct{ path, contentType string }{
		{"/", "text/html; charset=utf-8"},
		{"/index.html", "text/html; charset=utf-8"},
		{"/app.js", "text/javascript; charset=utf-8"},
		{"/wasi.js", "text/javascript; charset=utf-8"},
		{"/client.js", "text/javascript; charset=utf-8"}, // shared with wasm/node, as the next two
		{"/archive.js", "text/javascript; charset=utf-8"},
		{"/errors.js", "text/javascript; charset=utf-8"},
		{"/style.css", "text/css; charset=utf-8"},
		{"/favicon.svg", "image/svg+xml"},
		{"/rules.json", "application/json"},
		{"/dlroute.wasm", "application/wasm"},
	} {
		resp := get(h, "GET", c.path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != c.contentType {
			t.Errorf("GET %s: %d %q, want 200 %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.contentType)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); csp != playground.ContentSecurityPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", c.path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("ETag") == "" {
			t.Errorf("GET %s: headers %v, want nosniff and an ETag", c.path, resp.Header)
		}
	}
}

func TestContentSecurityPolicy(t *testing.T) {
	testenv.ContentOnly(t)
	csp := playground.ContentSecurityPolicy
	if strings.Contains(csp, "'unsafe-eval'") || strings.Contains(csp, "'unsafe-inline'") {
		t.Errorf("the policy allows eval or inline code: %s", csp)
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the policy lacks %q: %s", want, csp)
		}
	}
	// The page must need nothing the policy forbids: no inline script or
	// style, no style attribute, no other origin.
	index, _ := os.ReadFile("index.html")
	for _, bad := range []string{"<script>", "<style", " style=", "http://", "https://", "onclick="} {
		if bytes.Contains(index, []byte(bad)) {
			t.Errorf("index.html holds %q, which the policy blocks", bad)
		}
	}
	files, err := playground.Files(playground.Options{Rules: rules.FS, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	for s, data := range files {
		if !strings.HasSuffix(s, ".js") {
			continue
		}
		for _, bad := range []string{"eval(", "new Function", "innerHTML ="} {
			if bytes.Contains(data, []byte(bad)) && !(bad == "innerHTML =" && bytes.Contains(data, []byte(`innerHTML = ""`))) {
				t.Errorf("%s uses %s", s, bad)
			}
		}
	}
}

func TestHandlerCompressesTheModule(t *testing.T) {
	h := servedHandler(t)
	resp := get(h, "GET", "/dlroute.wasm", "Accept-Encoding", "br, gzip;q=0.8")
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("with gzip accepted: Content-Encoding %q, Vary %q", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	if !bytes.Equal(body, fakeModule) {
		t.Errorf("the module decompresses to %d bytes, want the %d given", len(body), len(fakeModule))
	}
	for _, ae := range []string{"", "identity", "gzip;q=0", "deflate"} {
		resp := get(h, "GET", "/dlroute.wasm", "Accept-Encoding", ae)
		body, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, fakeModule) {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes; want the module as it is", ae, resp.Header.Get("Content-Encoding"), len(body))
		}
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := servedHandler(t)
	etag := get(h, "GET", "/dlroute.wasm").Header.Get("ETag")
	if resp := get(h, "GET", "/dlroute.wasm", "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", resp.StatusCode)
	}
	if resp := get(h, "GET", "/dlroute.wasm", "If-None-Match", `"other"`); resp.StatusCode != http.StatusOK {
		t.Errorf("If-None-Match with another ETag: %d, want 200", resp.StatusCode)
	}
}

func TestHandlerRefuses(t *testing.T) {
	h := servedHandler(t)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/nope.js", http.StatusNotFound},
		{"GET", "/../go.mod", http.StatusNotFound},
		{"GET", "/playground.go", http.StatusNotFound},
		{"POST", "/", http.StatusMethodNotAllowed},
		{"PUT", "/rules.json", http.StatusMethodNotAllowed},
	} {
		resp := get(h, c.method, c.path)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s %s: %d, want %d with the policy", c.method, c.path, resp.StatusCode, c.status)
		}
	}
	if resp := get(h, "HEAD", "/app.js"); resp.StatusCode != http.StatusOK || resp.ContentLength <= 0 {
		t.Errorf("HEAD /app.js: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
}

func TestRulesJSON(t *testing.T) {
	testenv.ContentOnly(t)
	dir := fstest.MapFS{
		"jax/v9/rules.yaml": {Data: []byte("rules: []\n")},
		"README.md":         {Data: []byte("not a rules file")},
		"jax/v9/deep/x":     {Data: []byte("too deep")},
		engine.ParsedFile:   {Data: []byte("a served directory's: not the host's word")},
	}
	h, err := playground.New(playground.Options{Rules: dir, Source: "/tmp/mine", Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Source string            `json:"source"`
		Files  map[string]string `json:"files"`
		Parsed []byte            `json:"parsed"`
	}
	if err := json.NewDecoder(get(h, "GET", "/rules.json").Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Source != "/tmp/mine" || len(got.Files) != 1 || got.Files["jax/v9/rules.yaml"] != "rules: []\n" || got.Parsed != nil {
		t.Errorf("rules.json = %+v, want only jax/v9/rules.yaml from /tmp/mine, and no parsed (a served directory's parsed.bin stays behind)", got)
	}

	// The embedded rules' parsed.bin goes with them, for the page to hand
	// the module with each load.
	h, err = playground.New(playground.Options{Rules: rules.FS, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	got.Parsed = nil
	if err := json.NewDecoder(get(h, "GET", "/rules.json").Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want, _ := rules.FS.ReadFile(engine.ParsedFile)
	if !bytes.Equal(got.Parsed, want) || got.Files[engine.ParsedFile] != "" {
		t.Errorf("rules.json of the embedded rules: parsed is %d bytes, want %s's %d, and not among the files", len(got.Parsed), engine.ParsedFile, len(want))
	}
	if _, err := playground.New(playground.Options{Rules: fstest.MapFS{}, Module: fakeModule}); err == nil {
		t.Errorf("New with an empty rules directory: no error")
	}
	if _, err := playground.New(playground.Options{Rules: dir}); err == nil {
		t.Errorf("New without a module: no error")
	}
}

// rules.json's "first" is the decision of the page's first screen, the
// newest jax with the seed's input, as the native engine explains it; a
// jax that does not compile leaves it out, and the rules are served.
func TestRulesJSONFirstDecision(t *testing.T) {
	testenv.ContentOnly(t)
	type first struct {
		Ref, Input  string
		Explanation json.RawMessage
		Inputs      []engine.InputDecl
	}
	firstOf := func(fsys fs.FS) *first {
		t.Helper()
		h, err := playground.New(playground.Options{Rules: fsys, Module: fakeModule})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ First *first }
		if err := json.NewDecoder(get(h, "GET", "/rules.json").Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc.First
	}
	got := firstOf(rules.FS)
	if got == nil {
		t.Fatal("rules.json of the embedded rules has no first decision")
	}
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jax, err := cat.RuleSet("jax")
	if err != nil {
		t.Fatal(err)
	}
	in, err := jax.DecodeInput([]byte(got.Input))
	if err != nil {
		t.Fatalf("the first input %q: %v", got.Input, err)
	}
	x, err := jax.Explain(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := x.MarshalJSON()
	same := func(a, b []byte) bool { // as values: rules.json escapes < as \u003c
		var va, vb any
		return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
	}
	if got.Ref != jax.Ref() || !strings.Contains(got.Input, `"platform_version":"<unknown>"`) || !same(got.Explanation, want) {
		t.Errorf("first = %s %s %s; want %s's explanation of the seed's input, natively %s", got.Ref, got.Input, got.Explanation, jax.Ref(), want)
	}
	if len(got.Inputs) != len(jax.Inputs()) {
		t.Errorf("first's inputs are %d, want %s's %d declared inputs", len(got.Inputs), jax.Ref(), len(jax.Inputs()))
	}

	broken := fstest.MapFS{"jax/v9/rules.yaml": {Data: []byte("rules: [\n")}}
	if got := firstOf(broken); got != nil {
		t.Errorf("rules whose jax does not load: first = %+v, want none", got)
	}
}

func TestWriteSite(t *testing.T) {
	testenv.ContentOnly(t)
	dir := filepath.Join(t.TempDir(), "site")
	if err := playground.WriteSite(dir, playground.Options{Rules: rules.FS, Module: fakeModule}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.html", "app.js", "wasi.js", "engine.js", "client.js", "archive.js", "errors.js", "style.css", "rules.json", "dlroute.wasm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the site lacks %s: %v", name, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "dlroute.wasm")); !bytes.Equal(data, fakeModule) {
		t.Errorf("dlroute.wasm is not the module given")
	}
	// The module precompressed beside it, for a server that sends .gz files.
	f, err := os.Open(filepath.Join(dir, "dlroute.wasm.gz"))
	if err != nil {
		t.Fatalf("the site has no precompressed module: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := io.ReadAll(zr); !bytes.Equal(data, fakeModule) {
		t.Errorf("dlroute.wasm.gz decompresses to %d bytes, not the module given", len(data))
	}
}

// importRE finds the specifier of every static import and re-export.
var importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"|^\s*import\s+"([^"]+)"`)

// TestSiteImportsResolve checks that every module the site serves imports
// only files the site has, by a relative name: the page's own modules and
// the ones it shares with wasm/node (served from there) must meet.
func TestSiteImportsResolve(t *testing.T) {
	testenv.ContentOnly(t)
	files, err := playground.Files(playground.Options{Rules: rules.FS, Module: fakeModule})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client.js", "archive.js", "errors.js"} {
		if !bytes.Equal(files[want], mustRead(t, filepath.Join("..", "wasm", "node", want))) {
			t.Errorf("the site's %s is not wasm/node/%s", want, want)
		}
	}
	imported := 0
	for name, data := range files {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, m := range importRE.FindAllSubmatch(data, -1) {
			spec := string(m[1]) + string(m[2])
			imported++
			if dep, ok := strings.CutPrefix(spec, "./"); !ok || files[dep] == nil {
				t.Errorf("%s imports %q, which the site does not have", name, spec)
			}
		}
	}
	if imported == 0 {
		t.Error("no imports found: importRE is broken")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
