package contract

import (
	"fmt"

	"github.com/dlroute/dlroute/engine"
)

// What carrying out an exchange decision takes (the exchange rule sets
// decide x.__dlpack__(stream, max_version, dl_device, copy)): nothing, an
// export in place, or a copy into host memory; and the errors of one that
// cannot be carried out. The module's guest, the wazero host and the C
// library carry decisions out alike by it.

// Codes of an exchange that was decided and could not be carried out.
// Like the engine's codes they are stable; wasmhost exports them too.
const (
	CodeCopyFailed engine.Code = "copy_failed" // the host's copier tried and failed
	CodeNoCopier   engine.Code = "no_copier"   // the host has no copier that makes the copy decided
)

// Step is what carrying out a decision takes: DLROUTE_STEP_* in dlroute.h
// and the Python package's STEPS, generated from Steps.
type Step int

const (
	StepRaise      Step = iota // the decision is an exception: raise it; nothing is exported
	StepInPlace                // the source buffer is exported as it is
	StepCopyToHost             // the source is copied into host memory (kDLCPU, 0), and the copy exported
)

// StepInfo is one row of Steps.
type StepInfo struct {
	Step Step
	Name string // String's: "raise", "in_place", "copy_to_host"
	Doc  string // what a host does, one line
}

// Steps is every step, in order: the table dlroute.h's and the Python
// package's are generated from (go generate ./internal/contract).
func Steps() []StepInfo { return append([]StepInfo(nil), steps[:]...) }

var steps = [...]StepInfo{
	{StepRaise, "raise", "the decision is an exception: raise it"},
	{StepInPlace, "in_place", "export the producer's buffer as it is"},
	{StepCopyToHost, "copy_to_host", "copy into host memory (kDLCPU, 0); export the copy"},
}

func (s Step) String() string {
	if s >= 0 && int(s) < len(steps) {
		return steps[s].Name
	}
	return fmt.Sprintf("step_%d", int(s))
}

// deviceCPU is DLPack's kDLCPU, the one device a host copies into.
const deviceCPU = 1

// StepOf says how a decision is carried out. A copy anywhere but host
// memory (copy=True on a GPU) is an error with CodeNoCopier: a host copies
// only into host memory, and a copy not made is not reported as made.
func StepOf(d engine.Decision) (Step, error) {
	switch {
	case d.Error != nil:
		return StepRaise, nil
	case !d.Copy:
		return StepInPlace, nil
	case d.DeviceTypeCode == deviceCPU && d.DeviceID == 0:
		return StepCopyToHost, nil
	}
	return 0, &engine.Error{Code: CodeNoCopier,
		Message: fmt.Sprintf("rule %s copies the array on (%s, %d), and this host copies only into host memory (kDLCPU, 0)", d.Rule, d.DeviceType, d.DeviceID),
		Hint:    "there is no device copier here: without copy=True the array is exported in place, and with dl_device (kDLCPU, 0) it is copied into host memory"}
}

// NoCopier is the error of a copy into host memory made by a host that
// has no copier.
func NoCopier() *engine.Error {
	return &engine.Error{Code: CodeNoCopier, Message: "the decision copies the array into host memory, and the host has no copier",
		Hint: "give the host a copier (wasmhost.RunnerConfig.Host.Copier)"}
}

// CopyFailed is the error of a copy into host memory the host tried and
// could not make; cause says why.
func CopyFailed(cause string) *engine.Error {
	return &engine.Error{Code: CodeCopyFailed, Message: "copying the array into host memory failed: " + cause,
		Hint: "nothing was exported, and the array is as it was"}
}
