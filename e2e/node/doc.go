// Package node holds the tests that run dlroute's JavaScript in Node.js:
// the Node.js package (wasm/node) against the module built from this
// checkout, its declarations checked by tsc, and the decision module's
// Node.js client (wasm/decision/decision.mjs). They are the e2e tier's
// (e2e/RATIONALE.md: "Why is the e2e tier its own module?"): the core's `go
// test ./...` needs no Node.js. Each test skips where node is not
// installed, and fails under CI (internal/testkit/testenv), where .ci/run
// installs it.
package node
