// Package readme runs the README's commands (TestREADMESnippetsRun):
// every ```sh block of the README and of the pages beside it
// (internal/testkit/readme), pasted into bash in a fresh clone with the dlroute
// binary of this checkout on $PATH. The blocks use Node.js, Python, a C
// compiler, git and curl, so they are the e2e tier's (e2e/RATIONALE.md: "Why
// is the e2e tier its own module?"); cmd/dlroute's tests check what the
// blocks say without running them.
package readme
