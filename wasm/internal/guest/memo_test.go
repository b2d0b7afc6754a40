package guest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
)

// binaryInput encodes in for the handle's declared inputs.
func binaryInput(t *testing.T, g *Guest, h uint32, in engine.Input) []byte {
	t.Helper()
	var desc contract.Description
	out, _ := g.Describe(h)
	if err := json.Unmarshal(out, &desc); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, d := range desc.Inputs {
		v, present := in[d.Name]
		b, _ = contract.AppendField(b, v, present)
	}
	return b
}

// TestGuestRemembersByBytes: a repeated input, binary or JSON, gets the
// first answer's bytes again, and the answers interleaved with others
// stay each input's own: Resolve reuses its input map and output buffer.
func TestGuestRemembersByBytes(t *testing.T) {
	ctx := context.Background()
	g, h := loaded(t, nil)
	inputs := []engine.Input{
		{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0},
		{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0},
		{"platform": "tpu", "platform_version": "PJRT C API\nTFRT TPU v2", "memory_kind": "pinned_host", "local_hardware_id": 0},
		{"platform": "gpu", "platform_version": "rocm 60200", "local_hardware_id": 2},
	}
	first := map[int][]byte{}
	firstJSON := map[int][]byte{}
	for round := range 3 {
		for i, in := range inputs {
			out, status := g.Resolve(ctx, h, binaryInput(t, g, h, in))
			if status != contract.StatusOK {
				t.Fatalf("Resolve(%v): %s %s", in, status, out)
			}
			line, _ := json.Marshal(in)
			js, status := g.ResolveJSON(ctx, h, line)
			if status != contract.StatusOK {
				t.Fatalf("ResolveJSON(%s): %s %s", line, status, js)
			}
			if round == 0 {
				first[i], firstJSON[i] = bytes.Clone(out), bytes.Clone(js)
				native, err := g.handles[h-1].rs.ResolveJSON(ctx, line)
				if err != nil || !bytes.Equal(native, js) {
					t.Fatalf("ResolveJSON(%s) got %s, want the engine's %s (%v)", line, js, native, err)
				}
				continue
			}
			if !bytes.Equal(out, first[i]) || !bytes.Equal(js, firstJSON[i]) {
				t.Errorf("round %d, Resolve(%v) got %x and %s, want the first answers %x and %s", round, in, out, js, first[i], firstJSON[i])
			}
		}
	}
}

// TestGuestAsksTheHostEveryTime: an input that leaves platform_version to
// the host is decided again on every call, through both entries, since
// the answer depends on the machine and not on the bytes.
func TestGuestAsksTheHostEveryTime(t *testing.T) {
	ctx := context.Background()
	versions := []string{"cuda 12030", "rocm 60200", "cuda 12030", "rocm 60200"}
	asked := 0
	g, h := loaded(t, func(int) (string, error) { asked++; return versions[(asked-1)%len(versions)], nil })
	in := binaryInput(t, g, h, engine.Input{"platform": "gpu", "local_hardware_id": 0})
	want := []int64{2, 10, 2, 10} // kDLCUDA, kDLROCM
	for i, code := range want {
		out, status := g.Resolve(ctx, h, in)
		d, err := contract.DecodeDecision(out)
		if status != contract.StatusOK || err != nil || d.Code != code {
			t.Errorf("binary call %d: %s %+v %v, want device type %d", i, status, d, err, code)
		}
	}
	for i, dev := range []string{"kDLCUDA", "kDLROCM", "kDLCUDA", "kDLROCM"} {
		out, status := g.ResolveJSON(ctx, h, []byte(`{"platform":"gpu","local_hardware_id":0}`))
		if status != contract.StatusOK || !bytes.Contains(out, []byte(`"device_type":"`+dev+`"`)) {
			t.Errorf("JSON call %d: %s %s, want %s", i, status, out, dev)
		}
	}
	if asked != 8 {
		t.Errorf("the host was asked %d times, want 8", asked)
	}
}
