// Package playground serves the dlroute playground: a static page that
// runs the dlroute WebAssembly module (the one every host runs) in the
// browser, so a person can edit rules and inputs and see decisions, their
// trace and the tests, with no server doing the work.
//
// # What is served
//
//   - the page: index.html, style.css, favicon.svg and the JavaScript
//     modules beside this file, embedded with go:embed, and the modules
//     it shares with the Node.js package (wasm/node's Shared: the ABI
//     client, the rules-archive encoder and their errors), under their
//     own names beside the page's;
//   - rules.json: {"source": ..., "revision": ..., "live": ..., "files":
//     {"jax/v3/rules.yaml": "...", ...}, "first": {...}}, the rules
//     directory the page starts from, and the decision of its first
//     screen (first.go);
//   - interop.json: the interop matrix of those rules, every producer's
//     arrays into every consumer with the steps that decided each cell
//     (interop.go), which the page draws as a grid;
//   - events: with Options.Live, a stream of server-sent events that
//     tells the page when Publish replaced rules.json, or when rules were
//     refused (live.go);
//   - dlroute.wasm: the compiler module, as application/wasm,
//     gzip-compressed once (Options.ModuleGzip, or by New);
//   - decision.wasm and plans.bin, with Options.Decision: the decision
//     module (wasm/decision) and the plans of the rules served, which the
//     page decides with until it needs the compiler module (plans.go).
//     rules.json's "plans" names the plans.bin of its rules, and
//     "described" lists every version's declared inputs; first.json,
//     {"ref": ..., "input": ..., "plans": ...}, is the page's first case
//     and the plans.bin it is decided with, which the page decides
//     before it has read rules.json.
//
// Every response carries ContentSecurityPolicy and an ETag; a client that
// accepts gzip gets every resource compressed.
//
// # Without this server
//
// WriteSite writes the same files into a directory, which any static
// server can serve (`dlroute playground --static DIR`), with the module
// precompressed beside it (dlroute.wasm.gz).
package playground

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	shipped "github.com/dlroute/dlroute/rules"
	"github.com/dlroute/dlroute/wasm/node"
)

// The page's assets. The module is not among them: it is built from the
// checkout by internal/build/wasmbuild and handed to New.
//
//go:embed index.html style.css favicon.svg *.js
var assets embed.FS

// ContentSecurityPolicy is sent with every response. Scripts, styles and
// fetches come from the page's own origin only; 'wasm-unsafe-eval' lets
// it compile WebAssembly without allowing JavaScript's eval; nothing may
// frame the page, and it submits no forms.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
	"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Options configure New.
type Options struct {
	// Rules is the rules directory the page starts from, holding
	// <name>/<version>/<file>; other files are left out.
	Rules fs.FS
	// Source says in the page where the rules come from, such as
	// "embedded" or the --rules directory.
	Source string
	// Revision names the rules, as a bundle's revision does; "" for none.
	Revision string
	// Live says the rules follow their source: the page listens to
	// /events and loads what Publish makes the rules. WriteSite's static
	// site never has it.
	Live bool
	// Module is the dlroute WebAssembly module, built from the source in
	// package github.com/dlroute/dlroute (ModuleSource), as `dlroute
	// playground` builds it.
	Module []byte
	// ModuleGzip, when set, is Module gzip-compressed (a caller that
	// keeps the compressed module saves New the work); New compresses
	// Module itself otherwise.
	ModuleGzip []byte
	// Decision is the decision module (wasm/decision.Module, ABI version
	// 2), which the page decides
	// with from its first decision, loading Module only when it needs
	// what plans lack. Without it the page runs Module alone.
	Decision []byte
	// InteropTimeout bounds the deciding of interop.json; 0 means
	// InteropTimeout.
	InteropTimeout time.Duration
}

// Handler serves the playground. It is safe for concurrent use: only
// rules.json and interop.json change after New, by Publish.
type Handler struct {
	files    map[string]*resource      // by URL path without the leading '/'; not rules.json, plans.bin, first.json nor interop.json
	live     *hub                      // rules.json, and the pages to tell when it changes
	interop  *interopSite              // interop.json of the rules rules.json holds
	decision bool                      // Options.Decision was given: rules.json names plans
	plans    atomic.Pointer[planFiles] // plans.bin and first.json of the rules rules.json holds; nil without plans
}

// resource is one file, as it is sent: its bytes, compressed once.
type resource struct {
	body, gz    []byte
	contentType string
	etag        string
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
	".wasm": "application/wasm",
	".bin":  "application/octet-stream",
}

// New prepares every resource: it reads the rules, and compresses them,
// the assets and the module (half a second for the module's 27 MB, unless
// Options.ModuleGzip has it done already).
func New(opts Options) (*Handler, error) {
	if len(opts.Module) == 0 {
		return nil, errors.New("playground: no WebAssembly module")
	}
	files, err := pageFiles(opts)
	if err != nil {
		return nil, err
	}
	h := &Handler{files: map[string]*resource{}, interop: &interopSite{timeout: opts.InteropTimeout}, decision: len(opts.Decision) > 0}
	for name, data := range files {
		gz := opts.ModuleGzip
		if name != "dlroute.wasm" || gz == nil {
			gz = nil
		}
		if h.files[name], err = newResource(name, data, gz); err != nil {
			return nil, err
		}
	}
	st := rulesState{source: opts.Source, revision: opts.Revision, live: opts.Live}
	h.live = newHub(st, h.files["rules.json"])
	if h.files["plans.bin"] != nil {
		h.plans.Store(&planFiles{set: h.files["plans.bin"], first: h.files["first.json"]})
	}
	delete(h.files, "rules.json")
	delete(h.files, "plans.bin")
	delete(h.files, "first.json")
	h.interop.publish(opts.Rules, st)
	return h, nil
}

// newResource prepares a file to send: its type, its ETag, and gz, or
// data compressed when gz is nil.
func newResource(name string, data, gz []byte) (*resource, error) {
	r := &resource{body: data, gz: gz, contentType: contentTypes[path.Ext(name)], etag: etagOf(data)}
	if r.gz == nil {
		var err error
		if r.gz, err = compress(data); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// loads keeps what the site's loads of the rules made (its first case,
// its plans, its interop matrix: three loads of the same files), and what
// the loads of the rules a person serves made before they changed, so a
// load compiles only what it has not met. What an engine.Cache gives back
// is what a fresh Load makes, errors included; it drops what recent loads
// did not use.
var loads = engine.NewCache()

// etagOf is a file's ETag: a hash of its bytes.
func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// Files returns the site's files by name: the assets, the modules shared
// with wasm/node, rules.json, interop.json and dlroute.wasm; with
// Options.Decision, decision.wasm and plans.bin (where the rules have
// plans).
func Files(opts Options) (map[string][]byte, error) {
	files, err := pageFiles(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(opts.InteropTimeout, InteropTimeout))
	defer cancel()
	files["interop.json"], err = interopJSON(ctx, opts.Rules, rulesState{source: opts.Source, revision: opts.Revision, live: opts.Live})
	return files, err
}

// pageFiles is Files without interop.json, which New decides when first
// asked for.
func pageFiles(opts Options) (map[string][]byte, error) {
	files := map[string][]byte{"dlroute.wasm": opts.Module}
	if len(opts.Decision) > 0 {
		files["decision.wasm"] = opts.Decision
	}
	for _, dir := range []fs.FS{assets, node.Shared} {
		if err := addFiles(files, dir); err != nil {
			return nil, err
		}
	}
	doc := rulesState{source: opts.Source, revision: opts.Revision, live: opts.Live}
	rf, err := rulesJSON(opts.Rules, doc, len(opts.Decision) > 0)
	if err != nil {
		return nil, err
	}
	files["rules.json"] = rf.rules
	if rf.plans != nil {
		files["plans.bin"] = rf.plans
	}
	if rf.first != nil {
		files["first.json"] = rf.first
	}
	return files, nil
}

// addFiles adds the files at the top of dir to files. A name the site has
// already is an error: the page's modules and the shared ones must not
// shadow each other.
func addFiles(files map[string][]byte, dir fs.FS) error {
	entries, err := fs.ReadDir(dir, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, dup := files[e.Name()]; dup {
			return fmt.Errorf("playground: two files named %s", e.Name())
		}
		data, err := fs.ReadFile(dir, e.Name())
		if err != nil {
			return err
		}
		files[e.Name()] = data
	}
	return nil
}

// rulesJSON reads the files of every <name>/<version>/ into rules.json,
// and, for the embedded rules, their engine.ParsedFile: the module takes
// the file the page hands it as the host's word, and a served directory's
// is no more trusted than anyone who can write to it
// (engine.Options.TrustParsed). withPlans adds the plans of those rules
// (plans.go): returned as plans.bin, named by rules.json's "plans", with
// every version's description in "described", and first.json; plans and
// first are nil where the rules have none.
func rulesJSON(rules fs.FS, doc rulesState, withPlans bool) (rf ruleFiles, err error) {
	if rules == nil {
		return rf, errors.New("playground: no rules")
	}
	out := struct {
		Source   string            `json:"source"`
		Revision string            `json:"revision,omitempty"`
		Live     bool              `json:"live,omitempty"`
		Files    map[string]string `json:"files"`
		// Parsed is the embedded rules' engine.ParsedFile, which the
		// page hands the module with every load (base64 in the JSON).
		Parsed []byte `json:"parsed,omitempty"`
		// First is the page's first decision, decided here (first.go).
		First *firstDecision `json:"first,omitempty"`
		// Plans names plans.bin and the versions it holds, and
		// Described is every version's dlroute_describe (plans.go).
		Plans     *plansDoc                       `json:"plans,omitempty"`
		Described map[string]contract.Description `json:"described,omitempty"`
	}{Source: doc.source, Revision: doc.revision, Live: doc.live, Files: map[string]string{}}
	err = fs.WalkDir(rules, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.Count(p, "/") == 2 {
			data, err := engine.ReadFile(rules, p) // regular, unblocking, within MaxRuleFileSize
			if err != nil {
				return err
			}
			out.Files[p] = string(data)
		}
		return nil
	})
	if err != nil {
		return rf, fmt.Errorf("playground: reading the rules: %w", err)
	}
	if _, err := fs.Stat(rules, engine.ParsedFile); err == nil && shipped.Embedded(rules) {
		if out.Parsed, err = engine.ReadFile(rules, engine.ParsedFile); err != nil {
			return rf, fmt.Errorf("playground: reading the rules: %w", err)
		}
	}
	if len(out.Files) == 0 {
		return rf, errors.New("playground: the rules directory holds no <name>/<version>/ files")
	}
	out.First = decideFirst(rules)
	if sp := plansIf(withPlans, rules); sp != nil {
		rf.plans = sp.set
		out.Plans = &plansDoc{ETag: etagOf(sp.set), Refs: sp.refs}
		out.Described = sp.described
		if rf.first, err = firstJSON(out.First, sp.set, out.Plans.ETag); err != nil {
			return rf, err
		}
	}
	rf.rules, err = json.Marshal(out)
	return rf, err
}

// ruleFiles are the files rulesJSON makes of a rules directory.
type ruleFiles struct {
	rules, plans, first []byte // rules.json, plans.bin, first.json
}

// compress is New's gzip of a module handed over uncompressed. A host
// that serves the module often hands New its cached compressed form
// instead (internal/build/wasmbuild.Gzipped), so this level is for the rare
// caller that does not: gzip's default.
func compress(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ServeHTTP serves GET and HEAD of the site's files; "/" is index.html.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(req.URL.Path, "/")
	switch name {
	case "":
		name = "index.html"
	case "events":
		h.live.serveEvents(w, req)
		return
	}
	r, ok := h.files[name]
	switch name {
	case "rules.json":
		r, ok = h.live.rules(), true
	case "plans.bin", "first.json":
		r, ok = h.plans.Load().get(name)
	case "interop.json":
		var err error
		if r, err = h.interop.get(); err != nil {
			http.Error(w, "deciding the interop matrix: "+err.Error(), http.StatusInternalServerError)
			return
		}
		ok = true
	}
	if !ok {
		http.NotFound(w, req)
		return
	}
	hdr.Set("Content-Type", r.contentType)
	hdr.Set("Cache-Control", "no-cache") // revalidate by ETag: a rebuilt module must not be stale
	hdr.Set("ETag", r.etag)
	hdr.Set("Vary", "Accept-Encoding")
	if inm := req.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, r.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := r.body
	if acceptsGzip(req.Header.Get("Accept-Encoding")) && len(r.gz) < len(r.body) {
		hdr.Set("Content-Encoding", "gzip")
		body = r.gz
	}
	hdr.Set("Content-Length", fmt.Sprint(len(body)))
	if req.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) listed, and
// not with q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// WriteSite writes the site's files into dir, creating it: what any
// static server needs to serve the playground, and dlroute.wasm.gz, the
// module gzip-compressed, for a server that sends a file's .gz to a
// client that accepts gzip. The server should send dlroute.wasm as
// application/wasm (the page copes without it, compiling after the
// download instead of during it).
func WriteSite(dir string, opts Options) error {
	opts.Live = false // no server to send events
	files, err := Files(opts)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	// The module precompressed beside itself, for a server that sends a
	// file's .gz to a client that accepts gzip (nginx's gzip_static,
	// Caddy's file_server precompressed): 23 MB sent as about 5.
	gz := opts.ModuleGzip
	if gz == nil {
		if gz, err = compress(opts.Module); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "dlroute.wasm.gz"), gz, 0o644)
}
