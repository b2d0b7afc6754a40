package guest

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
)

// copyStatusError is the error of a copy_to_host status other than ok.
func copyStatusError(status uint32) *engine.Error {
	switch status {
	case contract.HostUnavailable:
		return contract.NoCopier()
	case contract.HostFailed:
		return contract.CopyFailed("the host's copier failed (copy_to_host status 4)")
	case contract.HostFault:
		return contract.CopyFailed("the host could not write the copy's handle (copy_to_host status 3)")
	}
	return contract.CopyFailed(fmt.Sprintf("copy_to_host returned status %d", status))
}

// maxCopyErrorLen is the length of the longest error object a copy can
// end in.
var maxCopyErrorLen = func() int {
	n := 0
	for _, s := range []uint32{contract.HostUnavailable, contract.HostFault, contract.HostFailed, math.MaxUint32} {
		n = max(n, len(contract.ErrorJSON(copyStatusError(s))))
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
// no import makes (a copy on a GPU), is contract.StatusHostError with an error
// object (contract.CodeCopyFailed, contract.CodeNoCopier). The output goes into out; n is
// its length, or with contract.StatusTooSmall the size out needs. The host is
// asked for a copy only once the answer, or the error, is sure to fit, so
// that calling again with a larger out makes no second copy.
func (g *Guest) Exchange(ctx context.Context, h, src uint32, line, out []byte) (n uint32, status contract.Status) {
	hd, ok := g.handle(h)
	if !ok {
		return 0, contract.StatusBadHandle
	}
	var need int
	data, status := func() ([]byte, contract.Status) {
		d, _, err := g.decideLine(ctx, hd, line)
		if err != nil {
			return contract.ErrorJSON(err), statusOf(err)
		}
		step, err := contract.StepOf(d)
		if err != nil {
			return contract.ErrorJSON(err), contract.StatusHostError
		}
		decision, _ := d.MarshalJSON()
		answer := func(buffer string) []byte {
			return fmt.Appendf(nil, `{"decision":%s,"buffer":%s}`, decision, buffer)
		}
		switch step {
		case contract.StepRaise:
			return answer("null"), contract.StatusOK
		case contract.StepInPlace:
			return answer(strconv.FormatUint(uint64(src), 10)), contract.StatusOK
		}
		need = max(len(answer(strconv.FormatUint(math.MaxUint32, 10))), maxCopyErrorLen)
		if need > len(out) {
			return nil, contract.StatusTooSmall
		}
		if g.host.CopyToHost == nil {
			return contract.ErrorJSON(contract.NoCopier()), contract.StatusHostError
		}
		copied, hs := g.host.CopyToHost(src)
		if hs != contract.HostOK {
			return contract.ErrorJSON(copyStatusError(hs)), contract.StatusHostError
		}
		return answer(strconv.FormatUint(uint64(copied), 10)), contract.StatusOK
	}()
	if status == contract.StatusTooSmall {
		return uint32(need), status
	}
	if len(data) > len(out) {
		return uint32(len(data)), contract.StatusTooSmall
	}
	return uint32(copy(out, data)), status
}
