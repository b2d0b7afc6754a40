// Package abi is the binary contract between the dlroute WebAssembly module
// and its hosts: the ABI version, the status codes, the layout of inputs and
// decisions on the hot path, and the archive a host hands rules over in.
// wasm/ABI.md describes the same for hosts in other languages; both sides
// of the Go implementation use this package, so they cannot drift apart.
package abi

// Version is the ABI version the module exports as dlroute_abi_version.
// A host refuses a module of another version.
const Version = 1

// Status is what an export returns, in the high 32 bits of its i64 result
// (the low 32 bits are a length or a handle) or, negated, from
// dlroute_ruleset.
type Status uint32

const (
	StatusOK          Status = 0 // done; the output buffer holds the result
	StatusInputError  Status = 1 // the input is not valid; output: an error object (JSON)
	StatusEvalError   Status = 2 // the rules could not decide; output: an error object (JSON)
	StatusLoadError   Status = 3 // the rules did not load; output: a JSON array of error objects
	StatusNoRuleSet   Status = 4 // no rule set of that name or version; output: an error object
	StatusBadHandle   Status = 5 // a rule-set handle the module did not give
	StatusBadArgument Status = 6 // a pointer or length outside memory, or a malformed binary input
	StatusTooSmall    Status = 7 // the output buffer is too small; the low 32 bits say how large it must be
	StatusNotLoaded   Status = 8 // dlroute_load has not succeeded yet
	StatusHostError   Status = 9 // a host function failed; output: an error object
)

var statusNames = [...]string{"ok", "input_error", "eval_error", "load_error", "no_ruleset", "bad_handle", "bad_argument", "too_small", "not_loaded", "host_error"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status_" + itoa(uint32(s))
}

func itoa(n uint32) string {
	if n == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Pack and Unpack join a status and a 32-bit value into an export's result.
func Pack(s Status, v uint32) uint64 { return uint64(s)<<32 | uint64(v) }

// Unpack splits an export's result.
func Unpack(r uint64) (Status, uint32) { return Status(r >> 32), uint32(r) }

// HostModule is the name of the module the guest imports host functions
// from.
const HostModule = "dlroute_host"

// Statuses of the host functions (what dlroute_host functions return).
const (
	HostOK          uint32 = 0 // done
	HostTooSmall    uint32 = 1 // the buffer is too small; the needed length was written
	HostUnavailable uint32 = 2 // nothing to answer with: no probe answered, no such buffer
	HostFault       uint32 = 3 // a pointer or length outside the guest's memory
	HostFailed      uint32 = 4 // the host tried and failed (a copy that failed)
)
