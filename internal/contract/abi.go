package contract

// The binary contract between the dlroute WebAssembly module and its
// hosts, and the C library and its callers: the ABI versions and the
// statuses; codec.go and engine.go hold the layout of inputs and
// decisions on the hot path, archive.go the archive a host hands rules
// over in. wasm/ABI.md describes the same for hosts in other languages.

//go:generate go run ../build/codegen

// Version is the ABI version the module exports as dlroute_abi_version.
// A host refuses a module of another version.
const Version = 1

// LibraryVersion is the C ABI's version, DLROUTE_ABI_VERSION in
// libdlroute/dlroute.h. It changes when a function, a status or an
// output's form changes meaning.
const LibraryVersion = 1

// Status is what an export of the module, or an entry of the C library
// (libdlroute/dlroute.h), returns: for the module in the high 32 bits of
// its i64 result (the low 32 bits are a length or a handle) or, negated,
// from dlroute_ruleset. The module and the C library share one table:
// dlroute.h's DLROUTE_* statuses, the Python package's (python/dlroute/
// _codes.py) and the Node client's STATUS are generated from Statuses
// (go generate ./internal/contract), and a test fails when one is stale.
type Status uint32

const (
	StatusOK          Status = 0  // done; the output holds the result
	StatusInputError  Status = 1  // the input is not valid for the rule set; output: an error object (JSON)
	StatusEvalError   Status = 2  // the rules could not decide the input; output: an error object (JSON)
	StatusLoadError   Status = 3  // the rules did not load; output: a JSON array of error objects
	StatusNoRuleSet   Status = 4  // no rule set of that name or version; output: an error object
	StatusBadHandle   Status = 5  // a rule-set handle that was not given, or was closed
	StatusBadArgument Status = 6  // a pointer or length outside memory, a NULL out-parameter, or a malformed binary input
	StatusTooSmall    Status = 7  // the output buffer is too small; the length it must be is returned
	StatusNotLoaded   Status = 8  // the module only: dlroute_load has not succeeded yet
	StatusHostError   Status = 9  // the host could not carry out what the rules decided: a host function failed, or no copier makes the copy; output: an error object
	StatusForked      Status = 10 // the C library only: called in a child of the process that loaded the library
	StatusInternal    Status = 11 // the C library only: a fault inside the library (a bug), reported instead of crashing the caller
	StatusTooManyOpen Status = 12 // the C library only: DLROUTE_MAX_OPEN rules are open; close some first
)

// StatusInfo is one row of Statuses.
type StatusInfo struct {
	Status Status
	Name   string // String's: "ok", "input_error", ...
	Doc    string // what it means, one line
	Module bool   // the WebAssembly module returns it
	C      bool   // the C library returns it
}

// Statuses is every status, in order, with where it is returned: the
// table the C, Python and Node tables are generated from.
func Statuses() []StatusInfo { return append([]StatusInfo(nil), statuses[:]...) }

var statuses = [...]StatusInfo{
	{StatusOK, "ok", "done; the output holds the result", true, true},
	{StatusInputError, "input_error", "the input is not valid for the rule set", true, true},
	{StatusEvalError, "eval_error", "the rules could not decide the input", true, true},
	{StatusLoadError, "load_error", "the rules did not load", true, true},
	{StatusNoRuleSet, "no_ruleset", "no rule set of that name or version", true, true},
	{StatusBadHandle, "bad_handle", "a handle that was not given, or was closed", true, true},
	{StatusBadArgument, "bad_argument", "a NULL pointer with a length, a NULL out-parameter, a malformed binary input", true, true},
	{StatusTooSmall, "too_small", "out is too small; the length needed is returned", true, true},
	{StatusNotLoaded, "not_loaded", "dlroute_load has not succeeded yet", true, false},
	{StatusHostError, "host_error", "the host could not carry out the decision (no_copier, copy_failed)", true, true},
	{StatusForked, "forked", "called in a child of the process that loaded the library", false, true},
	{StatusInternal, "internal", "a fault inside the library (a bug): reported, not crashed on", false, true},
	{StatusTooManyOpen, "too_many_open", "DLROUTE_MAX_OPEN rules are open (open): close some first", false, true},
}

func (s Status) String() string {
	if int(s) < len(statuses) {
		return statuses[s].Name
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
