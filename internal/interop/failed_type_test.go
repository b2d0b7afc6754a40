package interop

import (
	"context"
	"slices"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// TestConsumerAskedAfterAnyException: a consumer whose request declares
// failed_type is asked again after any exception of the producer's
// __dlpack__, not only a TypeError, and answers by its type. MLX tries
// again after a read-only numpy array's BufferError (its unversioned
// export) and crosses; without failed_type the BufferError would be the
// cell.
func TestConsumerAskedAfterAnyException(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	p, c := libraryPair(t, cat, "numpy@v2", "mlx@v1")
	readOnly := Array{Platform: "read-only", Memory: "-", Input: engine.Input{"origin_device": []any{int64(1), int64(0)}, "writeable": false}}
	cell, err := Decide(ctx, p, readOnly, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cell.Outcome != ConsumerCopy {
		t.Fatalf("numpy's read-only array into mlx: %s %v, want mlx's copy after its second request; steps:\n%v", cell.Outcome, cell.Error, steps(cell))
	}
	want := []string{"request@1 mlx@v1 ask", "__dlpack__@1 numpy@v2 readonly-unversioned", "request@2 mlx@v1 ask-again",
		"__dlpack__@2 numpy@v2 export-versioned", "from_dlpack@2 mlx@v1 import"}
	if got := steps(cell); !slices.Equal(got, want) {
		t.Errorf("steps:\n%v\nwant:\n%v", got, want)
	}
}

// TestConsumerRaisesItsOwnAfterAnotherException: mlx answers a producer's
// exception other than a TypeError or BufferError (torch 2.7's
// RuntimeError for a tensor that requires grad; a BufferError from 2.9) with
// its own TypeError, which is what the user sees.
func TestConsumerRaisesItsOwnAfterAnotherException(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	p, c := libraryPair(t, cat, "torch@v1.0.7", "mlx@v1")
	a := arrayOf(t, p, "cpu", "-")
	a.Input = engine.Input{"device_type": "cpu", "requires_grad": true}
	cell, err := Decide(ctx, p, a, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cell.Error == nil || cell.Error.Type != "TypeError" {
		t.Fatalf("torch's tensor that requires grad into mlx: %s %v, want mlx's TypeError; steps:\n%v", cell.Outcome, cell.Error, steps(cell))
	}
	if got := steps(cell); got[len(got)-1] != "request@2 mlx@v1 no-third-try" {
		t.Errorf("the cell ends with %q, want mlx's own error at its second request; steps:\n%v", got[len(got)-1], got)
	}
}
