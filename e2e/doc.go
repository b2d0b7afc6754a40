// Package e2e is the root of the e2e tier, a Go module of its own
// (e2e/RATIONALE.md: "Why is the e2e tier its own module?"): the tests that
// need what the core's `go test ./...` does not, Chromium, Node.js, the
// Python stacks, curl. Its packages run the dlroute of this checkout:
// e2e/playground (the page in headless Chromium, its modules in
// Node.js), e2e/node (the Node.js package, its types, the decision
// module's client), e2e/corpus (the corpus on Python),
// e2e/python (the Python package on its pinned stacks), e2e/readme (the
// README's commands), e2e/jstools (tsc, ESLint and axe-core) and
// e2e/wasmhost (the compiler module over every shipped rule set). This
// package's own test, TestHostPartsInstalled, names first what the tier
// needs that no registry provides.
package e2e
