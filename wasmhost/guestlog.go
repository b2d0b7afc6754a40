package wasmhost

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dlroute/dlroute/engine"
)

// CodeOutOfMemory is the code of an *engine.Error for a call that the
// module could not finish in RunnerConfig.MemoryLimitPages: the guest's
// Go runtime ran out of memory, and its instance was replaced.
const CodeOutOfMemory engine.Code = "out_of_memory"

// maxGuestStderr bounds what an instance's stderr keeps: a Go runtime's
// fatal error and its goroutines' stacks run to a few hundred lines.
const maxGuestStderr = 64 << 10

// guestStderr is an instance's stderr, kept rather than printed: the
// guest writes there only when its Go runtime dies, and a host's log is
// for the host's own lines. A trap says what the guest wrote (trapped).
type guestStderr struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (g *guestStderr) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.buf.Write(p[:min(len(p), max(0, maxGuestStderr-g.buf.Len()))])
	return len(p), nil
}

func (g *guestStderr) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

// guestMemoryTarget is the guest Go runtime's soft memory limit
// (GOMEMLIMIT) in an instance of limitPages: three quarters of it, so
// that its collector works harder before memory runs out, not after,
// and a load that fits in the live heap fits in the instance (engine/RATIONALE.md,
// "Why a budget of expression nodes per load, and why this one?").
func guestMemoryTarget(limitPages uint32) uint64 {
	return uint64(limitPages) << 16 / 4 * 3
}

// outOfMemory is what the guest's Go runtime says, in its fatal error,
// when the instance's memory cannot grow: "out of memory" where a heap
// span or a stack is refused, "runtime: cannot allocate memory" where its
// own bookkeeping is (persistentalloc, the span table), which is where a
// load in 24 MiB dies.
var outOfMemory = []string{"out of memory", "cannot allocate memory"}

// trapped is the error of a call that failed in wazero. When the guest's
// runtime ran out of memory it is a CodeOutOfMemory error naming the
// limit (the instance is still closed and replaced: it is a trapError
// too); otherwise the guest's own account goes to the process's stderr
// as it always did, for whoever debugs the module.
func (inst *instance) trapped(err error) error {
	said := inst.stderr.String()
	if !slices.ContainsFunc(outOfMemory, func(s string) bool { return strings.Contains(said, s) }) {
		if said != "" {
			os.Stderr.WriteString(said)
		}
		return &trapError{err}
	}
	pages := inst.r.cfg.MemoryLimitPages
	return &trapError{&engine.Error{Code: CodeOutOfMemory,
		Message: fmt.Sprintf("the module ran out of memory: an instance has at most %d MiB (RunnerConfig.MemoryLimitPages %d)", pages/16, pages),
		Hint:    "rules that engine.Load accepts fit in the default limit (engine.MaxLoadNodes); a host that sets a smaller RunnerConfig.MemoryLimitPages, or loads rules unchecked, may need more"}}
}
