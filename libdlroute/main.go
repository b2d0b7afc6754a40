// Command libdlroute is the dlroute engine as a C shared library:
//
//	go build -trimpath -buildmode=c-shared -o libdlroute.so ./libdlroute
//
// dlroute.h is its contract. The C half (dlroute.c) checks what it can
// without Go and refuses calls from a forked child; this file converts C
// pointers to slices and calls libdlroute/internal/capi, which does the work and is
// tested as plain Go. Nothing here may panic into the caller: every
// export recovers and reports DLROUTE_INTERNAL.
package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/dlroute/dlroute/libdlroute/internal/capi"
)

func main() {}

// bytesOf is the caller's buffer as a slice, read during the call only;
// the C half has refused a NULL pointer with a length, and the export a
// length over capi.MaxInputLen (overLimit), before the slice is made.
func bytesOf(p *C.char, n C.size_t) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}

// deliver writes data to the caller's output, or says how large it must
// be.
func deliver(data []byte, status capi.Status, out *C.char, outCap C.size_t, outLen *C.size_t) C.int {
	*outLen = C.size_t(len(data))
	if len(data) > int(outCap) {
		return C.int(capi.StatusTooSmall)
	}
	copy(bytesOf(out, outCap), data)
	return C.int(status)
}

// overLimit reports whether any of lengths is over capi.MaxInputLen and,
// if so, writes the entry's answer to an input that long (capi.TooLong of
// form f): nothing of the caller's buffers is read, since a length that
// lies (2^40 for 76 bytes) is all that says how far they go.
func overLimit(status *C.int, f capi.Form, out *C.char, outCap C.size_t, outLen *C.size_t, lengths ...C.size_t) bool {
	for _, n := range lengths {
		if n > capi.MaxInputLen {
			data, st := capi.TooLong(f)
			*status = deliver(data, st, out, outCap, outLen)
			return true
		}
	}
	return false
}

// recovered turns a panic into DLROUTE_INTERNAL with the panic as the
// message, so that a bug in the library does not take the caller down.
func recovered(status *C.int, out *C.char, outCap C.size_t, outLen *C.size_t) {
	if r := recover(); r != nil {
		msg := fmt.Appendf(nil, `{"code":"internal","message":%q}`, fmt.Sprint(r))
		*status = deliver(msg, capi.StatusInternal, out, outCap, outLen)
	}
}

//export dlroute_go_open
func dlroute_go_open(path *C.char, pathLen C.size_t, key *C.char, keyLen C.size_t, rules *C.uint64_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormArgument, out, outCap, outLen, pathLen, keyLen) {
		return status
	}
	h, data, st := capi.Open(string(bytesOf(path, pathLen)), string(bytesOf(key, keyLen)))
	*rules = C.uint64_t(h)
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_close
func dlroute_go_close(rules C.uint64_t) (status C.int) {
	defer func() {
		if recover() != nil {
			status = C.int(capi.StatusInternal)
		}
	}()
	return C.int(capi.Close(uint64(rules)))
}

//export dlroute_go_rulesets
func dlroute_go_rulesets(rules C.uint64_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	data, st := capi.RuleSets(uint64(rules))
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_ruleset
func dlroute_go_ruleset(rules C.uint64_t, ref *C.char, refLen C.size_t, ruleset *C.uint64_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormArgument, out, outCap, outLen, refLen) {
		return status
	}
	h, data, st := capi.RuleSet(uint64(rules), string(bytesOf(ref, refLen)))
	*ruleset = C.uint64_t(h)
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_describe
func dlroute_go_describe(ruleset C.uint64_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	data, st := capi.Describe(uint64(ruleset))
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_resolve_json
func dlroute_go_resolve_json(ruleset C.uint64_t, line *C.char, lineLen C.size_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormLine, out, outCap, outLen, lineLen) {
		return status
	}
	data, st := capi.ResolveJSON(context.Background(), uint64(ruleset), bytesOf(line, lineLen))
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_explain_json
func dlroute_go_explain_json(ruleset C.uint64_t, line *C.char, lineLen C.size_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormLine, out, outCap, outLen, lineLen) {
		return status
	}
	data, st := capi.ExplainJSON(context.Background(), uint64(ruleset), bytesOf(line, lineLen))
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_resolve
func dlroute_go_resolve(ruleset C.uint64_t, in *C.char, inLen C.size_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormBinary, out, outCap, outLen, inLen) {
		return status
	}
	data, st := capi.Resolve(context.Background(), uint64(ruleset), bytesOf(in, inLen))
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_exchange_json
func dlroute_go_exchange_json(ruleset C.uint64_t, line *C.char, lineLen C.size_t, step *C.int32_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormLine, out, outCap, outLen, lineLen) {
		return status
	}
	data, s, st := capi.ExchangeJSON(context.Background(), uint64(ruleset), bytesOf(line, lineLen))
	*step = C.int32_t(s)
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_interop_json
func dlroute_go_interop_json(rules C.uint64_t, request *C.char, requestLen C.size_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormRequest, out, outCap, outLen, requestLen) {
		return status
	}
	data, st := capi.InteropJSON(context.Background(), uint64(rules), bytesOf(request, requestLen))
	return deliver(data, st, out, outCap, outLen)
}

//export dlroute_go_interop_matrix_json
func dlroute_go_interop_matrix_json(rules C.uint64_t, request *C.char, requestLen C.size_t, out *C.char, outCap C.size_t, outLen *C.size_t) (status C.int) {
	defer recovered(&status, out, outCap, outLen)
	if overLimit(&status, capi.FormRequest, out, outCap, outLen, requestLen) {
		return status
	}
	data, st := capi.InteropMatrixJSON(context.Background(), uint64(rules), bytesOf(request, requestLen))
	return deliver(data, st, out, outCap, outLen)
}
