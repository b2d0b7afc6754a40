package playground_test

import (
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// contentOnly skips t under the race detector: t checks what a file or
// document the playground makes holds, in one goroutine, and the test
// command's run without -race checks that; under -race each such test
// loaded and decided the shipped rules again, several times slower,
// and raced nothing. The tests of what goroutines share (publishes,
// interop.json's deciding and its deadline, the event streams, the
// plans a publish replaces) run under it (playground/RATIONALE.md, "Why
// do the playground's tests of content skip under -race?").
func contentOnly(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("content, in one goroutine: the test command's run without -race checks it")
	}
}
