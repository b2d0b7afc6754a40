package wasmhost

import (
	"context"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// TestOutOfMemoryNamesTheLimit: a guest that runs out of memory is
// answered with out_of_memory, naming the limit, not with its runtime's
// stack.
func TestOutOfMemoryNamesTheLimit(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Module: module, Instances: 1, MemoryLimitPages: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	err = r.Load(ctx, rules.FS) // every shipped version takes about 69 MiB
	errs := engine.Errors(err)
	if len(errs) != 1 || errs[0].Code != CodeOutOfMemory {
		t.Fatalf("Load in 32 MiB: got %v, want %s", err, CodeOutOfMemory)
	}
	if e := errs[0]; !strings.Contains(e.Message, "32 MiB") || e.Hint == "" || strings.Contains(e.Message, "goroutine") {
		t.Errorf("got %q (hint %q); want the limit named, a hint, and no guest stack", e.Message, e.Hint)
	}
}
