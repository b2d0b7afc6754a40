// Package corpus runs the corpus (internal/testkit/corpus) on the hosts that
// need what the core's `go test ./...` does not (TestCorpus): Node.js
// (the Node package, wasm/node) and the Python package (python/) over the
// C library, each compared with the native answers of `dlroute resolve
// --json`, the binary of this checkout. The core's cmd/dlroute runs the
// same corpus on wazero and the C library's example; e2e/playground runs
// it in the browser. They are the e2e tier's (e2e/RATIONALE.md: "Why is the
// e2e tier its own module?"): each host skips where its runtime is not
// installed, and fails under CI (internal/testkit/testenv).
package corpus
