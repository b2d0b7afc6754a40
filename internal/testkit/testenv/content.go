package testenv

import "testing"

// ContentOnly skips t under the race detector: t checks what a call
// answers or a file holds, in one goroutine, and the test command's run
// without -race checks that. Under -race such a test compiled and
// decided the shipped rules again several times slower and raced
// nothing; the tests of what goroutines share (concurrent calls, a
// deadline, a watch, a publish) run under it (RATIONALE.md, "Why does
// the test command run -race on some packages, not all?").
func ContentOnly(t testing.TB) {
	t.Helper()
	if RaceDetector {
		t.Skip("content, in one goroutine: the test command's run without -race checks it")
	}
}
