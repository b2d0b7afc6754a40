// Package serve is `dlroute serve`: an HTTP API that answers decisions
// from rules kept live by package live, for hosts that cannot embed the
// engine or the module (a Python process, a shell script).
//
// NewHandler is the API (POST /v1/resolve, GET /v1/rules, /v1/status,
// /healthz, /metrics); Serve runs it with timeouts and a graceful
// shutdown; Run wires a source, the gate (NativePrepare's memo, or
// WasmPrepare's module runner per snapshot), the kept bundle, logs and
// metrics together, as the command does. Every request acquires one
// snapshot and is answered by it whole; the revision that answered is in
// the Dlroute-Revision header and in every decision.
package serve
