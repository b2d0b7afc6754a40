package guest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/rules"
)

// fakeCopier is a host's copy_to_host: it answers status, with handle
// 100+n for the n-th copy, and counts the calls.
type fakeCopier struct {
	status uint32
	calls  []uint32 // the buffers asked for
}

func (f *fakeCopier) copy(buffer uint32) (uint32, uint32) {
	f.calls = append(f.calls, buffer)
	return 100 + uint32(len(f.calls)), f.status
}

// exchangeGuest is a guest with the embedded rules (LoadLazy, as in
// loaded), the handle of exchange, and the fake host's copier.
func exchangeGuest(t *testing.T, c *fakeCopier) (*Guest, uint32) {
	t.Helper()
	archive, err := contract.PackFS(rules.FS)
	if err != nil {
		t.Fatal(err)
	}
	host := Host{}
	if c != nil {
		host.CopyToHost = c.copy
	}
	g := New(host)
	if out, status := g.LoadLazy(archive); status != contract.StatusOK {
		t.Fatalf("LoadLazy: %s %s", status, out)
	}
	h, out, status := g.RuleSet("exchange")
	if status != contract.StatusOK {
		t.Fatalf("RuleSet: %s %s", status, out)
	}
	return g, h
}

const (
	seedLine    = `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`
	seedPrefix  = `{"decision":{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"copy":true,"capsule":"dltensor_versioned","flags":["DLPACK_FLAG_BITMASK_IS_COPIED"],"rule":"unknown-platform-host-copy","ruleset":"exchange@v2"},"buffer":`
	cudaLine    = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`
	onGPULine   = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0,"copy":true}`
	refusedLine = `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"copy":false}`
)

func TestGuestExchange(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		line       string
		copier     *fakeCopier
		status     contract.Status
		want       string // the output, or (an error) its code
		copiesMade int
	}{
		{"the seed's unknown platform is copied by the host", seedLine, &fakeCopier{}, contract.StatusOK, seedPrefix + `101}`, 1},
		{"in place, the source is the export", cudaLine, &fakeCopier{}, contract.StatusOK,
			`{"decision":{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"capsule":"dltensor","rule":"in-place","ruleset":"exchange@v2"},"buffer":7}`, 0},
		{"an exception exports nothing", refusedLine, &fakeCopier{}, contract.StatusOK,
			`{"decision":{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>; only a copy through host memory could export it, and copy=False forbids one"},"rule":"copy-false-unknown-platform","ruleset":"exchange@v2"},"buffer":null}`, 0},
		{"a copy on the GPU is not one a host makes", onGPULine, &fakeCopier{}, contract.StatusHostError, string(contract.CodeNoCopier), 0},
		{"the host's copier fails", seedLine, &fakeCopier{status: contract.HostFailed}, contract.StatusHostError, string(contract.CodeCopyFailed), 1},
		{"the host has no copier", seedLine, &fakeCopier{status: contract.HostUnavailable}, contract.StatusHostError, string(contract.CodeNoCopier), 1},
		{"a guest without the import", seedLine, nil, contract.StatusHostError, string(contract.CodeNoCopier), 0},
		{"an input error", `{"platform":"gpu","platform_version":"cuda 12030","copy":"yes"}`, &fakeCopier{}, contract.StatusInputError, string(engine.CodeWrongType), 0},
	}
	for _, tt := range tests {
		g, h := exchangeGuest(t, tt.copier)
		out := make([]byte, 4096)
		n, status := g.Exchange(ctx, h, 7, []byte(tt.line), out)
		got := string(out[:n])
		if status != contract.StatusOK {
			var e engine.Error
			if json.Unmarshal(out[:n], &e) != nil || status == contract.StatusHostError && e.Hint == "" {
				t.Errorf("%s: the error object %s has no code and hint", tt.name, got)
			}
			got = string(e.Code)
		}
		if status != tt.status || got != tt.want {
			t.Errorf("%s: Exchange = %s %s, want %s %s", tt.name, status, got, tt.status, tt.want)
		}
		if tt.copier != nil && (len(tt.copier.calls) != tt.copiesMade || tt.copiesMade > 0 && tt.copier.calls[0] != 7) {
			t.Errorf("%s: copy_to_host called for %v, want buffer 7 %d times", tt.name, tt.copier.calls, tt.copiesMade)
		}
	}
}

// TestGuestExchangeTooSmall: an output buffer too small for the answer is
// too_small before the host is asked for a copy, so the retry makes the
// only copy.
func TestGuestExchangeTooSmall(t *testing.T) {
	ctx := context.Background()
	c := &fakeCopier{}
	g, h := exchangeGuest(t, c)
	need, status := g.Exchange(ctx, h, 7, []byte(seedLine), make([]byte, 16))
	if status != contract.StatusTooSmall || len(c.calls) != 0 || int(need) < len(seedPrefix)+len("101}") {
		t.Fatalf("a 16-byte output: %s, need %d, %d copies; want too_small, no copy", status, need, len(c.calls))
	}
	out := make([]byte, need)
	n, status := g.Exchange(ctx, h, 7, []byte(seedLine), out)
	if status != contract.StatusOK || string(out[:n]) != seedPrefix+"101}" || len(c.calls) != 1 {
		t.Fatalf("again with %d bytes: %s %s, %d copies; want the answer and one copy", need, status, out[:n], len(c.calls))
	}
	// An answer without a copy is too_small with its exact size.
	n, status = g.Exchange(ctx, h, 7, []byte(cudaLine), make([]byte, 8))
	if status != contract.StatusTooSmall || n < 100 || len(c.calls) != 1 {
		t.Errorf("in place into 8 bytes: %s %d", status, n)
	}
}

// TestGuestResolveExport: the binary entry carries copy, capsule and flags
// as an export decision, and only where the rules set them.
func TestGuestResolveExport(t *testing.T) {
	g, h := exchangeGuest(t, nil)
	var desc contract.Description
	out, _ := g.Describe(h)
	if err := json.Unmarshal(out, &desc); err != nil {
		t.Fatal(err)
	}
	encode := func(in map[string]any) []byte {
		var b []byte
		for _, d := range desc.Inputs {
			v, present := in[d.Name]
			b, _ = contract.AppendField(b, v, present)
		}
		return b
	}
	seed := map[string]any{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0, "max_version": []any{1, 1}}
	out, status := g.Resolve(context.Background(), h, encode(seed))
	d, err := contract.DecodeDecision(out)
	want := contract.Decision{Kind: contract.KindExport, Rule: d.Rule, Code: 1, Copy: true, Capsule: contract.CapsuleVersioned, Flags: uint64(engine.FlagIsCopied)}
	if status != contract.StatusOK || err != nil || d != want || desc.Rules[d.Rule] != "unknown-platform-host-copy" {
		t.Errorf("the seed's case: %s %+v %v, want %+v", status, d, err, want)
	}
	// jax's decisions never set them: the device kind old hosts read.
	gj, hj := loaded(t, nil)
	var jd contract.Description
	out, _ = gj.Describe(hj)
	json.Unmarshal(out, &jd)
	var in []byte
	for _, decl := range jd.Inputs {
		v, present := map[string]any{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0}[decl.Name]
		in, _ = contract.AppendField(in, v, present)
	}
	out, _ = gj.Resolve(context.Background(), hj, in)
	if d, err := contract.DecodeDecision(out); err != nil || d.Kind != contract.KindDevice {
		t.Errorf("jax: %+v %v, want a device decision (kind 0)", d, err)
	}
}
