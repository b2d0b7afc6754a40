// Package contract is what every host of dlroute is written against, in
// one place: the WebAssembly module's guest (wasm/internal/guest) and its
// wazero host (wasmhost), the C library (libdlroute/internal/capi), serve
// and `dlroute resolve --json`. It holds
//
//   - the JSON line (answer.go): Answerer, with the line limit
//     (MaxLineLen), the memo of answers by the input's bytes, the
//     classification of an error as the input's (input_error) or the
//     rules' (eval_error, Classify) and the error line Line, so that every
//     host gives the same bytes and the same status for the same line;
//   - the binary layout (abi.go, codec.go, engine.go, archive.go): the ABI
//     versions (Version, LibraryVersion), the statuses (Statuses), the
//     binary inputs and decisions of the hot path, and the archive a host
//     hands rules over in; wasm/ABI.md describes the same for hosts in
//     other languages;
//   - the steps of an exchange (exchange.go): what carrying out an
//     exchange decision takes (Steps, StepOf) and the errors of one that
//     cannot be carried out.
//
// Statuses and Steps are the generators' source: `go generate
// ./internal/contract` writes the C, Python and Node tables from them,
// and a test fails when one is stale.
package contract
