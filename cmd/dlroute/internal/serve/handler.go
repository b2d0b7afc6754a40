package serve

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/live"
)

// HandlerConfig configures NewHandler (Options configures Run). Only Rules is required.
type HandlerConfig struct {
	// Rules are the rules in force; each request acquires one snapshot,
	// once its body is read, and is answered by it whole.
	Rules *live.Rules
	// Engine names the engine that decides, "native" or "wasm", for
	// /v1/status; the snapshot's Attached says which one actually does.
	Engine string
	// RuleSet is the rule set a request that names none gets; "" means
	// "jax".
	RuleSet string
	// StrictRelease refuses (404, code unchecked_release) a
	// ?ruleset=NAME==RELEASE that no version was checked against, which
	// is otherwise answered with its warning in ReleaseWarningHeader (and
	// one input's decision's "release_warning").
	StrictRelease bool
	// MaxBody bounds a request body; 0 means DefaultMaxBody.
	MaxBody int64
	// MaxInFlight bounds the bytes that requests to /v1/resolve hold in
	// memory at once, all together: each body from its first byte read
	// until its request is answered, and each batch's answer as it is
	// built. A request that would pass it is refused with 503, code
	// CodeBusy, and Retry-After; nothing waits for room. 0 means
	// DefaultMaxInFlight. Below MaxBody plus MaxAnswer, the largest
	// requests are refused even alone.
	MaxInFlight int64
	// MaxAnswer bounds the answer to one batch, in bytes; a batch whose
	// answer would pass it is refused with 413, code too_long. 0 means
	// DefaultMaxAnswer.
	MaxAnswer int64
	// MaxWorking bounds the requests to /v1/resolve worked on at once;
	// the others wait, parked, for their turn (dlroute_resolve_waiting).
	// A request waiting on its client (for its body, to write its answer)
	// is not working. 0 means one fewer than the processors
	// (GOMAXPROCS - FreeProcessors), and at least one.
	MaxWorking int
	// MaxBatch bounds the inputs of one batch; 0 means DefaultMaxBatch.
	MaxBatch int
	// Timeout bounds the decisions of one request; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Metrics are counted into; nil means NewMetrics().
	Metrics *Metrics
	// Log gets one line per request that fails on the server's side;
	// nil discards.
	Log *slog.Logger
}

// Defaults of HandlerConfig.
const (
	DefaultMaxBody  = 4 << 20 // as `dlroute resolve --json`'s longest line
	DefaultMaxBatch = 10_000
	DefaultTimeout  = 10 * time.Second
	// DefaultMaxAnswer is 16 MiB: the shipped rules' decisions average
	// 145 bytes, so 10,000 (DefaultMaxBatch) with their revision take
	// about 2 MB; 10,000 of the longest any case gets (630 bytes, 773
	// with a revision of bundle.MaxRevisionLen) take 7.7 MB, which has
	// over twice that room (TestAnswerBudgetMargin measures and checks
	// it).
	DefaultMaxAnswer = 16 << 20
	// DefaultMaxInFlight is 32 MiB: room for the largest request (a
	// 4 MiB body and a 16 MiB answer) or thousands of ordinary ones at
	// once, while the heap they make stays a few hundred MB: decoding
	// takes up to three times a body's bytes, and the collector lets the
	// heap grow to twice what is live (BENCHMARKS.md, "`serve` under issue 35's attacks").
	DefaultMaxInFlight = 32 << 20
)

// CodeBusy is the code of a request refused, with 503 and Retry-After,
// because its body or answer would pass HandlerConfig.MaxInFlight.
const CodeBusy engine.Code = "busy"

// RevisionHeader names the bundle revision that answered, on every
// response that a snapshot answered.
const RevisionHeader = "Dlroute-Revision"

// ReleaseWarningHeader carries, as JSON on one line, the
// engine.ReleaseWarning of a ?ruleset=NAME==RELEASE that no version was
// checked against: once per response, for one input and for a batch.
const ReleaseWarningHeader = "Dlroute-Release-Warning"

// NewHandler returns serve's HTTP API:
//
//	POST /v1/resolve   one input object, or an array of them (?ruleset=NAME, NAME@VERSION or NAME==RELEASE);
//	                   bodies and answers bounded in all by MaxInFlight (503 and Retry-After past it),
//	                   MaxWorking of them worked on at once
//	GET  /v1/rules     the rule-set versions in force
//	GET  /v1/status    the revision in force, the last check, the last refusal
//	GET  /healthz      200 while rules are in force
//	GET  /metrics      Prometheus metrics
func NewHandler(cfg HandlerConfig) http.Handler {
	h := newHandler(cfg)
	h.m.watch(h.budget)
	return h.api
}

// newHandler makes the handler of NewHandler, and of Run's diagnostic
// address: GET /healthz, /v1/status and /metrics, answered as the API
// answers them, from the same rules and metrics, and nothing else.
func newHandler(cfg HandlerConfig) *handler {
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.RuleSet = cmp.Or(cfg.RuleSet, "jax")
	cfg.Engine = cmp.Or(cfg.Engine, "native")
	cfg.MaxBody = cmp.Or(cfg.MaxBody, DefaultMaxBody)
	cfg.MaxBatch = cmp.Or(cfg.MaxBatch, DefaultMaxBatch)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxAnswer = cmp.Or(cfg.MaxAnswer, DefaultMaxAnswer)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, DefaultMaxInFlight)
	h := &handler{cfg: cfg, m: cfg.Metrics, budget: &budget{max: cfg.MaxInFlight}, working: newWorking(cfg.MaxWorking, cfg.Metrics.waiting)}
	route := func(mux *http.ServeMux, pattern, name string, f http.HandlerFunc) {
		mux.Handle(pattern, promhttp.InstrumentHandlerCounter(h.m.requests.MustCurryWith(map[string]string{"handler": name}), f))
	}
	diagnose := func(mux *http.ServeMux) *http.ServeMux {
		route(mux, "GET /v1/status", "status", h.status)
		route(mux, "GET /healthz", "healthz", h.healthz)
		mux.Handle("GET /metrics", promhttp.HandlerFor(h.m.Registry, promhttp.HandlerOpts{Registry: h.m.Registry}))
		return mux
	}
	h.api, h.diagnostic = diagnose(http.NewServeMux()), diagnose(http.NewServeMux())
	route(h.api, "POST /v1/resolve", "resolve", promhttp.InstrumentHandlerInFlight(h.m.inFlight, http.HandlerFunc(h.resolve)).ServeHTTP)
	route(h.api, "GET /v1/rules", "rules", h.rules)
	return h
}

type handler struct {
	cfg     HandlerConfig
	m       *Metrics
	budget  *budget
	working *working
	// api is the API, NewHandler's; diagnostic what Run serves on
	// Options.DiagnosticAddr.
	api, diagnostic *http.ServeMux
}

// requestError is the body of a request that is answered with no
// decision: {"error":{"code":...,"message":...}}.
type requestError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func writeError(w http.ResponseWriter, status int, e requestError) {
	writeJSON(w, status, map[string]requestError{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// rulesetJSON is one version in /v1/rules, as `dlroute rules --json`
// prints it.
type rulesetJSON struct {
	Ref         string              `json:"ref"`
	Default     bool                `json:"default"`
	Manifest    engine.Manifest     `json:"manifest"`
	Inputs      []engine.InputDecl  `json:"inputs"`
	Rules       []string            `json:"rules"`
	DeviceTypes []engine.DeviceType `json:"device_types"`
}

func (h *handler) rules(w http.ResponseWriter, r *http.Request) {
	s := h.cfg.Rules.Current()
	if s == nil {
		writeError(w, http.StatusServiceUnavailable, noRules)
		return
	}
	cat := s.Catalog()
	out := struct {
		Revision string        `json:"revision"`
		RuleSets []rulesetJSON `json:"rulesets"`
	}{Revision: s.Revision()}
	for _, rs := range cat.RuleSets() {
		newest, _ := cat.RuleSet(rs.Name())
		out.RuleSets = append(out.RuleSets, rulesetJSON{rs.Ref(), newest == rs, rs.Manifest(), rs.Inputs(), rs.RuleIDs(), rs.DeviceTypes()})
	}
	w.Header().Set(RevisionHeader, s.Revision())
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Engine string `json:"engine"`
		live.Status
	}{h.cfg.Engine, h.cfg.Rules.Status()})
}

func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	s := h.cfg.Rules.Current()
	if s == nil {
		writeError(w, http.StatusServiceUnavailable, noRules)
		return
	}
	w.Header().Set(RevisionHeader, s.Revision())
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "revision": s.Revision()})
}

var noRules = requestError{Code: "no_rules", Message: "no rules are in force: the server is shutting down"}
