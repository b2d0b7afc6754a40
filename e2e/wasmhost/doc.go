// Package wasmhost runs the compiler module (wasm/, run by the root's
// wasmhost.Runner) over every shipped rule set, through the public
// wasmhost API: the agreement tests that load every version of every
// rule set into a runner, which took most of the core's `go test ./...`
// (BENCHMARKS.md, "The test command"). The core's wasmhost keeps one
// test per behaviour on the jax and exchange rule sets (ruletest.Rules);
// the Go hosts decide with the decision module, so this slower, wider
// check of the compiler module is the e2e tier's.
package wasmhost
