package playground

import (
	"context"
	"testing"

	shipped "github.com/dlroute/dlroute/rules"
)

// BenchmarkInteropJSON is interop.json of the shipped rules: their load
// (from the package's cache after the first) and every matrix the page
// shows (BENCHMARKS.md, "Where the CPU goes, package by package"). Run it
// with -benchtime 1x for the first, cold, decision.
func BenchmarkInteropJSON(b *testing.B) {
	for b.Loop() {
		doc := interopDoc{}
		if err := decideInterop(context.Background(), shipped.FS, &doc); err != nil {
			b.Fatal(err)
		}
		if len(doc.Rows) == 0 {
			b.Fatal("no rows")
		}
	}
}
