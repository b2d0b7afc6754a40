//go:build wasip1

// Command decision is the dlroute decision module: package plan, the
// evaluator of compiled decisions, as one WebAssembly module with no CEL
// compiler inside. The host hands it plans: one plan's bytes
// (engine.RuleSet.Plan, `dlroute plan`), or a set of them and a name
// (rules/plans.bin holds the embedded rules'). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w' -buildmode=c-shared -o decision.wasm ./wasm/decision
//
// ABI.md beside this file documents every export and status: ABI
// version 2. The module imports only package plan (TestDecisionDeps in
// package wasmhost checks that), so it holds no cel-go, protobuf, YAML,
// encoding/json or fmt.
package main

import (
	"unsafe"

	"github.com/dlroute/dlroute/plan"
)

func main() {}

// abiVersion is this module's ABI version. Version 1 is the compiler
// module's (wasm/ABI.md): a host of that one refuses this one.
const abiVersion = 2

// maxLineLen is the longest input line decided, the other hosts'
// (internal/contract.MaxLineLen), with their message.
const maxLineLen = 4 << 20

// The statuses, the compiler module's numbers (internal/contract.Status).
const (
	statusOK         = 0
	statusInputError = 1
	statusEvalError  = 2
	statusLoadError  = 3
	statusNoRuleSet  = 4
	statusBadHandle  = 5
	statusTooSmall   = 7
)

var (
	// plans are the handles' plans: handle h is plans[h-1], nil once
	// released. Handles are never reused.
	plans []*plan.Plan
	// scratch is the answers' buffer, reused: an allocation is among the
	// costliest steps of a decision in WebAssembly.
	scratch = make([]byte, 0, 512)
	// pinned keeps the host's buffers alive: Go's collector does not move
	// memory, but it frees what nothing refers to. A host holds a few
	// (an input and an output buffer), so a slice searched in order
	// serves, and keeps a map's code out of the module.
	pinned [][]byte
)

//go:wasmexport dlroute_abi_version
func version() uint32 { return abiVersion }

//go:wasmexport dlroute_alloc
func alloc(size uint32) unsafe.Pointer {
	if size == 0 {
		size = 1
	}
	buf := make([]byte, size)
	pinned = append(pinned, buf)
	return unsafe.Pointer(&buf[0])
}

//go:wasmexport dlroute_free
func free(p unsafe.Pointer) {
	for i, buf := range pinned {
		if unsafe.Pointer(&buf[0]) == p {
			last := len(pinned) - 1
			pinned[i], pinned[last] = pinned[last], nil
			pinned = pinned[:last]
			return
		}
	}
}

//go:wasmexport dlroute_load_set
func loadFromSet(set unsafe.Pointer, setLen uint32, ref unsafe.Pointer, refLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	entries, err := plan.DecodeSet(bytesAt(set, setLen))
	if err != nil {
		return write(out, outCap, errorList(err.(*plan.Error)), statusLoadError)
	}
	name := string(bytesAt(ref, refLen))
	refs := ""
	for i, e := range entries {
		if e.Ref == name {
			return loadPlan(e.Plan, out, outCap)
		}
		if i > 0 {
			refs += ", "
		}
		refs += e.Ref
	}
	e := &plan.Error{Code: "no_ruleset", Message: "no plan of " + quote(name) + " in the set", Hint: "the set has plans of: " + refs}
	return write(out, outCap, e.AppendJSON(nil), statusNoRuleSet)
}

//go:wasmexport dlroute_load_plan
func load(in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	// Decode keeps no reference to its input's bytes, which the host
	// may reuse.
	return loadPlan(bytesAt(in, inLen), out, outCap)
}

//go:wasmexport dlroute_decide
func decide(h uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	return answerLine(h, in, inLen, out, outCap, (*plan.Plan).AppendDecide)
}

//go:wasmexport dlroute_explain
func explain(h uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32) uint64 {
	return answerLine(h, in, inLen, out, outCap, (*plan.Plan).AppendExplain)
}

// answerLine answers one line with the plan of handle h: the JSON that
// appendAnswer appends, or its error object with the status it calls for.
func answerLine(h uint32, in unsafe.Pointer, inLen uint32, out unsafe.Pointer, outCap uint32, appendAnswer func(p *plan.Plan, dst, line []byte) ([]byte, error)) uint64 {
	p := handle(h)
	if p == nil {
		return pack(statusBadHandle, 0)
	}
	line := bytesAt(in, inLen)
	if len(line) > maxLineLen {
		err := &plan.Error{Code: plan.CodeTooLong, Message: "line is longer than 4194304 bytes"}
		return write(out, outCap, err.AppendJSON(nil), statusInputError)
	}
	answer, err := appendAnswer(p, scratch[:0], line)
	if err != nil {
		e := err.(*plan.Error) // Decide's and Explain's only error type
		status := uint32(statusEvalError)
		if e.Code.Input() {
			status = statusInputError
		}
		answer = e.AppendJSON(answer[:0])
		scratch = answer[:0]
		return write(out, outCap, answer, status)
	}
	scratch = answer[:0]
	return write(out, outCap, answer, statusOK)
}

//go:wasmexport dlroute_release
func release(h uint32) {
	if handle(h) != nil {
		plans[h-1] = nil
	}
}

func loadPlan(data []byte, out unsafe.Pointer, outCap uint32) uint64 {
	p, err := plan.Decode(data)
	if err != nil {
		return write(out, outCap, errorList(err.(*plan.Error)), statusLoadError)
	}
	plans = append(plans, p)
	return pack(statusOK, uint32(len(plans)))
}

// errorList is a load_error's output: a JSON array of error objects.
func errorList(e *plan.Error) []byte {
	return append(e.AppendJSON([]byte{'['}), ']')
}

func handle(h uint32) *plan.Plan {
	if h == 0 || uint64(h) > uint64(len(plans)) {
		return nil
	}
	return plans[h-1]
}

// quote quotes s for a message, as %q would for the printable ASCII a
// reference holds, and escapes anything else byte by byte.
func quote(s string) string {
	const hex = "0123456789abcdef"
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c >= 0x7f:
			b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

func pack(status, v uint32) uint64 { return uint64(status)<<32 | uint64(v) }

func bytesAt(p unsafe.Pointer, n uint32) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// write copies data to the host's output buffer and packs the status with
// its length, or says how large the buffer must be.
func write(out unsafe.Pointer, outCap uint32, data []byte, status uint32) uint64 {
	if uint32(len(data)) > outCap {
		return pack(statusTooSmall, uint32(len(data)))
	}
	copy(bytesAt(out, outCap), data)
	return pack(status, uint32(len(data)))
}
