package wasmhost

import (
	"bytes"
	"context"
	"testing"
)

// TestConformance: every case of every shipped rule set decides the same
// natively, through the module's binary entry (Decision.Equal, and the
// same JSON), and through its JSON entry (the same bytes). The exchange's
// copy, capsule and flags cross the binary entry as an export decision.
// The core's wasmhost.TestConformance compares the jax and exchange sets.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	cat, r := shippedEngines(t)
	n, exports := 0, 0
	for _, native := range cat.RuleSets() {
		wasm, err := r.RuleSet(ctx, native.Ref())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range native.Cases() {
			n++
			want, err := native.Resolve(ctx, c.Input)
			if err != nil {
				t.Fatalf("%s: native: %v", c.Name, err)
			}
			if want.Copy || want.Capsule != "" || want.Flags != 0 {
				exports++
			}
			wantJSON := encode(t, want)
			got, err := wasm.Resolve(ctx, c.Input)
			if gotJSON := encode(t, got); err != nil || !got.Equal(want) || !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s %s: binary entry got %s (%v), native %s", native.Ref(), c.Name, gotJSON, err, wantJSON)
			}
			line := encode(t, c.Input)
			gotLine, err := wasm.ResolveJSON(ctx, line)
			if err != nil || !bytes.Equal(gotLine, wantJSON) {
				t.Errorf("%s %s: JSON entry got %s (%v), native %s", native.Ref(), c.Name, gotLine, err, wantJSON)
			}
		}
	}
	if n < 100 || exports < 40 {
		t.Errorf("only %d cases compared, %d of them export decisions", n, exports)
	}
}
