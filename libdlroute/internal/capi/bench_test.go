package capi

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkResolveJSON is what dlroute_resolve_json does in Go, without
// the cgo call: a repeated input (the memo) and a new input each time.
// BENCHMARKS.md sets it beside the same call from Python.
func BenchmarkResolveJSON(b *testing.B) {
	h, _, _ := Open("", "")
	defer Close(h)
	rh, _, _ := RuleSet(h, "jax")
	line := []byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`)
	b.Run("repeated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ResolveJSON(context.Background(), rh, line)
		}
	})
	b.Run("unique", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			ResolveJSON(context.Background(), rh, fmt.Appendf(nil, `{"platform":"gpu","platform_version":"cuda %d","local_hardware_id":0}`, n))
		}
	})
}
