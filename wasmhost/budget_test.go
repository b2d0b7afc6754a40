package wasmhost

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// TestOutOfMemoryNamesTheLimit: a guest that runs out of memory is
// answered with out_of_memory, naming the limit, not with its runtime's
// stack, wherever its Go runtime meets the limit: loading every shipped
// version (about 69 MiB) in 16, 20 and 24 MiB, its runtime says "out of
// memory" in the first two and "cannot allocate memory" in the third.
func TestOutOfMemoryNamesTheLimit(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	for _, mib := range []uint32{16, 20, 24} {
		r, err := NewRunner(ctx, RunnerConfig{Module: module, Instances: 1, MemoryLimitPages: mib * 16})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Load(ctx, rules.FS)
		r.Close(ctx)
		errs := engine.Errors(err)
		if len(errs) != 1 || errs[0].Code != CodeOutOfMemory {
			t.Fatalf("Load in %d MiB: got %v, want %s", mib, err, CodeOutOfMemory)
		}
		if e := errs[0]; !strings.Contains(e.Message, fmt.Sprintf(" %d MiB", mib)) || e.Hint == "" || strings.Contains(e.Message, "goroutine") {
			t.Errorf("got %q (hint %q); want the limit named, a hint, and no guest stack", e.Message, e.Hint)
		}
	}
}
