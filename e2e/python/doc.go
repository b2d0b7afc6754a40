// Package python holds the Python package's tests on its pinned stacks
// (TestPython): pytest and the conformance runner (`python -m dlroute
// check`) over libdlroute built from this checkout, each stack a virtual
// environment made once and cached by a hash of its pins. They are the
// e2e tier's (e2e/RATIONALE.md: "Why is the e2e tier its own module?"): the
// core's `go test ./...` needs no Python.
package python
