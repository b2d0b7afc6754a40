package wasmhost

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/machine"
)

// Host is what the host functions do for a guest: read the machine and
// copy buffers. A nil field makes its function answer "unavailable".
type Host struct {
	// PlatformVersion reads the platform_version of a device of this
	// machine, for inputs that leave it out.
	PlatformVersion func(ctx context.Context, device int) (string, error)
	// buffers holds the buffers guests name by handle. NewRunner makes
	// one when it is nil; the tests share one between runners.
	buffers *bufferTable
	// Copier copies a buffer to host memory for copy_to_host.
	Copier machine.Copier
}

// instantiate instantiates the host functions into r, as the module
// contract.HostModule the guest imports them from.
func instantiate(ctx context.Context, r wazero.Runtime, h Host) (api.Closer, error) {
	b := r.NewHostModuleBuilder(contract.HostModule)
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(h.platformVersion), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("device", "buf", "buf_cap", "len_out").WithResultNames("status").
		Export("platform_version")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(h.copyToHost), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buffer", "handle_out").WithResultNames("status").
		Export("copy_to_host")
	return b.Instantiate(ctx)
}

var i32 = api.ValueTypeI32

// platformVersion is platform_version(device, buf, buf_cap, len_out) ->
// status: it writes the version's length at len_out and, when it fits,
// the bytes at buf. HostUnavailable: this host reads no machine;
// HostFailed: it could not read this device. Every memory access is checked: a guest pointer out of
// bounds is HostFault, never a panic.
func (h Host) platformVersion(ctx context.Context, m api.Module, stack []uint64) {
	device, buf, bufCap, lenOut := int32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = uint64(h.writePlatformVersion(ctx, m.Memory(), int(device), buf, bufCap, lenOut))
}

func (h Host) writePlatformVersion(ctx context.Context, mem api.Memory, device int, buf, bufCap, lenOut uint32) uint32 {
	if h.PlatformVersion == nil {
		return contract.HostUnavailable
	}
	if device < 0 {
		return contract.HostFailed
	}
	v, err := withDeadline(ctx, func(ctx context.Context) (string, error) { return h.PlatformVersion(ctx, device) })
	if err != nil {
		return contract.HostFailed
	}
	if !mem.WriteUint32Le(lenOut, uint32(len(v))) {
		return contract.HostFault
	}
	if uint32(len(v)) > bufCap {
		return contract.HostTooSmall
	}
	if !mem.WriteString(buf, v) {
		return contract.HostFault
	}
	return contract.HostOK
}

// copyToHost is copy_to_host(buffer, handle_out) -> status: it copies the
// buffer to host memory with the Host's Copier and writes the new buffer's handle
// at handle_out. HostUnavailable: no copier, or no such buffer;
// HostFailed: the copier failed (the error is noted for the caller that
// registered the buffer).
func (h Host) copyToHost(ctx context.Context, m api.Module, stack []uint64) {
	buffer, out := uint32(stack[0]), uint32(stack[1])
	stack[0] = uint64(h.copy(ctx, m.Memory(), buffer, out))
}

func (h Host) copy(ctx context.Context, mem api.Memory, buffer, out uint32) uint32 {
	if h.buffers == nil || h.Copier == nil {
		return contract.HostUnavailable
	}
	if _, ok := mem.Read(out, 4); !ok {
		return contract.HostFault // checked first: a copy nobody can receive is not made
	}
	src, ok := h.buffers.get(buffer)
	if !ok {
		return contract.HostUnavailable
	}
	dst, err := withDeadline(ctx, func(ctx context.Context) (machine.Buffer, error) { return h.Copier.CopyToHost(ctx, src) })
	if err != nil {
		h.buffers.note(buffer, 0, err) // the guest sees a status; RuleSet.Exchange reports the error
		return contract.HostFailed
	}
	var handle [4]byte
	dstHandle := h.buffers.add(dst)
	h.buffers.note(buffer, dstHandle, nil)
	binary.LittleEndian.PutUint32(handle[:], dstHandle)
	mem.Write(out, handle[:])
	return contract.HostOK
}

// withDeadline runs f, the host's own code, and gives up when ctx ends:
// at the deadline of the call into the module that it is part of
// (Runner.bounded), or when the caller gives up. A probe that hangs (a
// driver stuck in its init) makes the call fail with a status instead of
// holding the guest forever. f goes on in the background until it
// returns. A panic in f is an error, not the end of the process.
func withDeadline[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("host function panicked: %v", p)}
			}
		}()
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}
