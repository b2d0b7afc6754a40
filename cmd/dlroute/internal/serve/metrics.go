package serve

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/dlroute/dlroute/live"
)

// Metrics are serve's Prometheus metrics, in a registry of their own with
// the Go runtime's and the process's. Every label takes values from a
// bounded set: rule-set refs that are loaded, outcome and stage names,
// codes, and the one revision in force.
type Metrics struct {
	Registry *prometheus.Registry

	decisions   *prometheus.CounterVec   // by ruleset, outcome
	latency     *prometheus.HistogramVec // by kind: single, batch
	inFlight    prometheus.Gauge
	waiting     prometheus.Gauge       // requests waiting for their turn to work
	requests    *prometheus.CounterVec // by handler, code
	checks      *prometheus.CounterVec // by outcome
	refusals    *prometheus.CounterVec // by stage, code
	keepErrors  prometheus.Counter     // activations not kept on disk
	activeInfo  *prometheus.GaugeVec   // by revision: 1 for the one in force
	activatedAt prometheus.Gauge
	busy        prometheus.Counter // requests refused past the budget of bytes in flight
	// budget is the budget of bytes in flight of the handler counted
	// into (the last one made), whose parts the gauges read.
	budget atomic.Pointer[budget]
}

// Outcomes of one decision, as dlroute_decisions_total counts them.
const (
	outcomeDevice     = "device"      // a DLPack device
	outcomeException  = "exception"   // an exception the array library raises: an answer too
	outcomeInputError = "input_error" // the input is not valid for the rule set
	outcomeEvalError  = "eval_error"  // the rules could not decide
)

// NewMetrics makes the metrics and registers them.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dlroute_decisions_total",
			Help: "Inputs decided, by rule-set version and outcome (device, exception, input_error, eval_error).",
		}, []string{"ruleset", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dlroute_resolve_duration_seconds",
			Help:    "Time to answer a POST /v1/resolve, body read to response written, by kind (single, batch).",
			Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1},
		}, []string{"kind"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dlroute_resolve_in_flight",
			Help: "POST /v1/resolve requests being answered.",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dlroute_resolve_waiting",
			Help: "POST /v1/resolve requests waiting for their turn: as many are worked on at once as HandlerConfig.MaxWorking (--max-working) says.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dlroute_http_requests_total",
			Help: "HTTP requests answered, by handler and status code.",
		}, []string{"handler", "code"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dlroute_rules_checks_total",
			Help: "Checks of the rules' source, by outcome (activated, unchanged, refused).",
		}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dlroute_rules_refusals_total",
			Help: "Candidate rules refused, by stage (fetch, verify, compile, test, prepare) and code.",
		}, []string{"stage", "code"}),
		keepErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dlroute_rules_keep_failures_total",
			Help: "Activated bundles that could not be kept on disk for the next start (the activation stands; /v1/status says why).",
		}),
		activeInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dlroute_rules_active_info",
			Help: "1 for the bundle revision in force.",
		}, []string{"revision"}),
		activatedAt: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dlroute_rules_activated_timestamp_seconds",
			Help: "When the rules in force were activated, in Unix seconds.",
		}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dlroute_resolve_busy_total",
			Help: "POST /v1/resolve requests refused with 503 (code busy): their body or answer would pass the budget of bytes in flight.",
		}),
	}
	held := func(part func(*budget) *atomic.Int64) func() float64 {
		return func() float64 {
			if b := m.budget.Load(); b != nil {
				return float64(part(b).Load())
			}
			return 0
		}
	}
	bodies := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "dlroute_request_body_bytes_in_flight",
		Help: "Bytes of POST /v1/resolve bodies held: read and not yet answered.",
	}, held(func(b *budget) *atomic.Int64 { return &b.body }))
	answers := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "dlroute_answer_bytes_in_flight",
		Help: "Bytes of batch answers being built or written.",
	}, held(func(b *budget) *atomic.Int64 { return &b.answer }))
	m.Registry.MustRegister(m.decisions, m.latency, m.inFlight, m.waiting, m.requests, m.checks, m.refusals, m.keepErrors, m.activeInfo, m.activatedAt,
		m.busy, bodies, answers, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watch makes the in-flight gauges read b.
func (m *Metrics) watch(b *budget) { m.budget.Store(b) }

// Observe counts a live.Event: give it to live.Config.Observe.
func (m *Metrics) Observe(e live.Event) {
	if e.Outcome != "" {
		m.checks.WithLabelValues(string(e.Outcome)).Inc()
	}
	switch e.Outcome {
	case live.Activated:
		m.activeInfo.Reset()
		m.activeInfo.WithLabelValues(e.Snapshot.Revision()).Set(1)
		m.activatedAt.Set(float64(e.Snapshot.ActivatedAt().UnixNano()) / 1e9)
	case live.Refused:
		m.refusals.WithLabelValues(string(e.Refusal.Stage), string(e.Refusal.Code)).Inc()
	}
	if e.KeepError != nil {
		m.keepErrors.Inc()
	}
}
