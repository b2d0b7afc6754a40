//go:build wasip1

package main

import (
	"context"
	"unsafe"
)

// The exports the browser playground uses besides the decisions
// (ABI.md, "Exports for editors").

//go:wasmexport dlroute_test
func test(h uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.Test(context.Background(), h)
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_diff
func diff(a, b uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.Diff(context.Background(), a, b)
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_release
func release(h uint32) { g.Release(h) }
