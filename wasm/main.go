//go:build wasip1

// Command wasm is the dlroute engine as one WebAssembly module, a WASI
// reactor that every host runs: wazero in Go (package wasmhost), Node.js
// and the browser. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o dlroute.wasm ./wasm
//
// This file only turns the exports' pointers into slices and calls package
// wasm/internal/guest, which does the work. ABI.md documents every export,
// import and status.
package main

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/wasm/internal/guest"
)

func main() {}

var (
	g = guest.New(guest.Host{PlatformVersion: askHost, CopyToHost: copyHost})
	// pinned keeps the host's buffers alive: Go's collector does not move
	// memory, but it frees what nothing refers to.
	pinned = map[unsafe.Pointer][]byte{}
)

//go:wasmexport dlroute_abi_version
func abiVersion() uint32 { return contract.Version }

//go:wasmexport dlroute_alloc
func alloc(size uint32) unsafe.Pointer {
	if size == 0 {
		size = 1
	}
	buf := make([]byte, size)
	p := unsafe.Pointer(&buf[0])
	pinned[p] = buf
	return p
}

//go:wasmexport dlroute_free
func free(p unsafe.Pointer) { delete(pinned, p) }

//go:wasmexport dlroute_load
func load(in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.Load(bytesAt(in, inLen))
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_load_lazy
func loadLazy(in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.LoadLazy(bytesAt(in, inLen))
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_ruleset
func ruleset(ref unsafe.Pointer, refLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	h, data, status := g.RuleSet(string(bytesAt(ref, refLen)))
	if status == contract.StatusOK {
		return contract.Pack(contract.StatusOK, h)
	}
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_describe
func describe(h uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.Describe(h)
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_resolve
func resolve(h uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.Resolve(context.Background(), h, bytesAt(in, inLen))
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_resolve_json
func resolveJSON(h uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.ResolveJSON(context.Background(), h, bytesAt(in, inLen))
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_explain_json
func explainJSON(h uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	data, status := g.ExplainJSON(context.Background(), h, bytesAt(in, inLen))
	return write(out, outCap, data, status)
}

//go:wasmexport dlroute_exchange
func exchange(h, buffer uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	n, status := g.Exchange(context.Background(), h, buffer, bytesAt(in, inLen), bytesAt(out, outCap))
	return contract.Pack(status, n)
}

//go:wasmexport dlroute_copy_to_host
func copyToHost(buffer uint32) uint64 {
	handle, s := copyHost(buffer)
	if s != contract.HostOK {
		return contract.Pack(contract.StatusHostError, s)
	}
	return contract.Pack(contract.StatusOK, handle)
}

//go:wasmimport dlroute_host platform_version
func hostPlatformVersion(device int32, buf unsafe.Pointer, bufCap uint32, lenOut unsafe.Pointer) uint32

//go:wasmimport dlroute_host copy_to_host
func hostCopyToHost(buffer uint32, handleOut unsafe.Pointer) uint32

// copyHost calls copy_to_host.
func copyHost(buffer uint32) (handle, status uint32) {
	status = hostCopyToHost(buffer, unsafe.Pointer(&handle))
	return handle, status
}

// askHost calls platform_version, growing the buffer once if the host says
// it is too small.
func askHost(device int) (string, error) {
	buf := make([]byte, 256)
	for range 2 {
		var n uint32
		switch s := hostPlatformVersion(int32(device), unsafe.Pointer(&buf[0]), uint32(len(buf)), unsafe.Pointer(&n)); s {
		case contract.HostOK:
			return string(buf[:n]), nil
		case contract.HostTooSmall:
			buf = make([]byte, n)
		case contract.HostUnavailable:
			return "", guest.ErrNoAnswer
		case contract.HostFailed:
			return "", errors.New("the host could not read it")
		default:
			return "", fmt.Errorf("platform_version returned status %d", s)
		}
	}
	return "", errors.New("platform_version kept growing")
}

func bytesAt(p unsafe.Pointer, n uint32) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// write copies data to the host's output buffer and packs the status with
// its length, or says how large the buffer must be.
func write(out unsafe.Pointer, outCap uint32, data []byte, status contract.Status) uint64 {
	if uint32(len(data)) > outCap {
		return contract.Pack(contract.StatusTooSmall, uint32(len(data)))
	}
	copy(bytesAt(out, outCap), data)
	return contract.Pack(status, uint32(len(data)))
}
