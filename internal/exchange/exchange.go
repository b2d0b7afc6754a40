// Package exchange says what carrying out an exchange decision takes
// (the exchange rule sets decide x.__dlpack__(stream, max_version,
// dl_device, copy)): nothing, an export in place, or a copy into host
// memory; and the errors of one that cannot be carried out. The module's
// guest, the wazero host and the C library carry decisions out alike by
// it.
package exchange

import (
	"fmt"

	"github.com/dlroute/dlroute/engine"
)

// Codes of an exchange that was decided and could not be carried out.
// Like the engine's codes they are stable; hostfuncs exports them too.
const (
	CodeCopyFailed engine.Code = "copy_failed" // the host's copier tried and failed
	CodeNoCopier   engine.Code = "no_copier"   // the host has no copier that makes the copy decided
)

// Step is what carrying out a decision takes.
type Step int

const (
	StepNothing    Step = iota // an exception: nothing is exported
	StepInPlace                // the source buffer is exported as it is
	StepCopyToHost             // the source is copied into host memory, and the copy exported
)

// deviceCPU is DLPack's kDLCPU, the one device a host copies into.
const deviceCPU = 1

// StepOf says how a decision is carried out. A copy anywhere but host
// memory (copy=True on a GPU) is an error with CodeNoCopier: a host copies
// only into host memory, and a copy not made is not reported as made.
func StepOf(d engine.Decision) (Step, error) {
	switch {
	case d.Error != nil:
		return StepNothing, nil
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
		Hint: "give the host a copier (hostfuncs.RunnerConfig.Host.Copier)"}
}

// CopyFailed is the error of a copy into host memory the host tried and
// could not make; cause says why.
func CopyFailed(cause string) *engine.Error {
	return &engine.Error{Code: CodeCopyFailed, Message: "copying the array into host memory failed: " + cause,
		Hint: "nothing was exported, and the array is as it was"}
}
