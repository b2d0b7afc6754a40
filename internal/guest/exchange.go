package guest

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/abi"
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

// copyStatusError is the error of a copy_to_host status other than ok.
func copyStatusError(status uint32) *engine.Error {
	switch status {
	case abi.HostUnavailable:
		return NoCopier()
	case abi.HostFailed:
		return CopyFailed("the host's copier failed (copy_to_host status 4)")
	case abi.HostFault:
		return CopyFailed("the host could not write the copy's handle (copy_to_host status 3)")
	}
	return CopyFailed(fmt.Sprintf("copy_to_host returned status %d", status))
}

// maxCopyErrorLen is the length of the longest error object a copy can
// end in.
var maxCopyErrorLen = func() int {
	n := 0
	for _, s := range []uint32{abi.HostUnavailable, abi.HostFault, abi.HostFailed, math.MaxUint32} {
		n = max(n, len(ErrorJSON(copyStatusError(s))))
	}
	return n
}()

// Exchange decides one JSON input, as ResolveJSON does, and carries the
// decision out for the host's buffer src, a handle the host registered:
//
//	an exception:               {"decision":{...},"buffer":null}
//	an export in place:         {"decision":{...},"buffer":src}
//	a copy into host memory:    {"decision":{...},"buffer":<the copy's handle>}
//
// A copy is asked of the host (copy_to_host). A copy that fails, or that
// no import makes (a copy on a GPU), is abi.StatusHostError with an error
// object (CodeCopyFailed, CodeNoCopier). The output goes into out; n is
// its length, or with abi.StatusTooSmall the size out needs. The host is
// asked for a copy only once the answer, or the error, is sure to fit, so
// that calling again with a larger out makes no second copy.
func (g *Guest) Exchange(ctx context.Context, h, src uint32, line, out []byte) (n uint32, status abi.Status) {
	var need int
	data, status := g.answerJSON(ctx, h, line, func(hd *handle, in engine.Input) ([]byte, abi.Status) {
		d, errOut, status := g.decide(ctx, hd, in)
		if status != abi.StatusOK {
			return errOut, status
		}
		step, err := StepOf(d)
		if err != nil {
			return ErrorJSON(err), abi.StatusHostError
		}
		decision, _ := d.MarshalJSON()
		answer := func(buffer string) []byte {
			return fmt.Appendf(nil, `{"decision":%s,"buffer":%s}`, decision, buffer)
		}
		switch step {
		case StepNothing:
			return answer("null"), abi.StatusOK
		case StepInPlace:
			return answer(strconv.FormatUint(uint64(src), 10)), abi.StatusOK
		}
		need = max(len(answer(strconv.FormatUint(math.MaxUint32, 10))), maxCopyErrorLen)
		if need > len(out) {
			return nil, abi.StatusTooSmall
		}
		if g.host.CopyToHost == nil {
			return ErrorJSON(NoCopier()), abi.StatusHostError
		}
		copied, hs := g.host.CopyToHost(src)
		if hs != abi.HostOK {
			return ErrorJSON(copyStatusError(hs)), abi.StatusHostError
		}
		return answer(strconv.FormatUint(uint64(copied), 10)), abi.StatusOK
	})
	if status == abi.StatusTooSmall {
		return uint32(need), status
	}
	if len(data) > len(out) {
		return uint32(len(data)), abi.StatusTooSmall
	}
	return uint32(copy(out, data)), status
}
