package wasmserve

import (
	"context"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"testing"

	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/rules"
	"github.com/dlroute/dlroute/wasmhost"
)

// BenchmarkGateShippedWasm is the check of the shipped rules that serve
// --engine wasm runs at a swap: the gate (compile, plans, tests) and
// Prepare (an instance per version, every case through the decision
// module), beside live's BenchmarkGateShipped, the gate alone:
//
//	go test ./cmd/dlroute/internal/serve/wasmserve -run '^$' -bench GateShippedWasm -count 3
func BenchmarkGateShippedWasm(b *testing.B) {
	ctx := context.Background()
	data, err := decisionwasm.Bytes()
	if err != nil {
		b.Fatal(err)
	}
	m, err := wasmhost.CompileDecision(ctx, wasmhost.DecisionConfig{Module: data})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	gate := live.Gate{Prepare: Prepare(m)}
	for b.Loop() {
		s, err := gate.Admit(ctx, &live.Candidate{Origin: "rules", Dir: rules.FS})
		if err != nil {
			b.Fatal(err)
		}
		s.Attached().Close()
	}
}
