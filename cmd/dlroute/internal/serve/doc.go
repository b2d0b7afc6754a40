// Package serve is `dlroute serve`: an HTTP API that answers decisions
// from rules kept live by package live, for hosts that cannot embed the
// engine or the module (a Python process, a shell script).
//
// NewHandler is the API (POST /v1/resolve, GET /v1/rules, /v1/status,
// /healthz, /metrics); Run wires a source, the gate (NativePrepare's
// memo, or the engine the command gives: cmd/dlroute/internal/serve/wasmserve's module
// runner per snapshot), the kept bundle, logs and metrics together, and
// serves with cmd/dlroute/internal/httpserve's timeouts and graceful shutdown, as the
// command does: the API on Options.Addr, and /healthz, /v1/status and
// /metrics alone on Options.DiagnosticAddr, with a server of its own.
// The API works on one request fewer than the processors at once
// (FreeProcessors); a request waiting on its client holds no turn. serve imports no WebAssembly engine. Every request acquires one
// snapshot and is answered by it whole; the revision that answered is in
// the Dlroute-Revision header and in every decision.
package serve
