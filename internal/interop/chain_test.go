package interop

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// loadShipped loads the embedded rules once for every test.
var loadShipped = sync.OnceValues(func() (*engine.Catalog, error) { return engine.Load(rules.FS, engine.Options{}) })

func shipped(t *testing.T) *engine.Catalog {
	t.Helper()
	cat, err := loadShipped()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// arrayOf is producer p's array named platform and memory, as the table's
// rows name them.
func arrayOf(t *testing.T, p *Producer, platform, memory string) Array {
	t.Helper()
	var names []string
	for _, a := range p.Arrays {
		if a.Platform == platform && a.Memory == memory {
			return a
		}
		names = append(names, a.Platform+" / "+a.Memory)
	}
	t.Fatalf("%s has no array %s / %s; it has:\n%s", p.Ref, platform, memory, strings.Join(names, "\n"))
	return Array{}
}

// withInput is a with its input k set to v, a's input map left as it was.
func withInput(a Array, k string, v any) Array {
	a.Input = maps.Clone(a.Input)
	a.Input[k] = v
	return a
}

// libraryPair is the producer and consumer of cat that refs name, as
// NewProducer and NewConsumer make them.
func libraryPair(t *testing.T, cat *engine.Catalog, producer, consumer string) (*Producer, *Consumer) {
	t.Helper()
	p, err := NewProducer(context.Background(), cat, producer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConsumer(cat, consumer)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// steps is a cell's steps as "call@attempt ruleset rule" lines.
func steps(c Cell) []string {
	var out []string
	for _, s := range c.Steps {
		out = append(out, fmt.Sprintf("%s@%d %s %s", s.Call, s.Attempt, s.Decision.RuleSet, s.Decision.Rule))
	}
	return out
}

// The cells below are derived by hand from the rule files: each step is
// the rule of that file whose `when` holds first for the input the chain
// asks.
func TestDecide(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	tests := []struct {
		name                       string
		producer, platform, memory string
		consumer                   string
		args                       engine.Input
		outcome                    Outcome
		err                        string // "Type: message" when outcome is Raises
		device                     string // the consumer's array's device type otherwise
		steps                      []string
	}{{
		// torch/v1 rules.yaml calls_dlpack_device is true, so JAX's
		// gpu-unknown-platform (jax/v3) is what the user sees.
		name:     "the seed's case into torch",
		producer: "jax", platform: "gpu <unknown>", memory: "device", consumer: "torch@v1",
		outcome: Raises, err: "BufferError: Unknown GPU platform for __dlpack__: <unknown>",
		steps: []string{"__dlpack_device__@1 jax@v3 gpu-unknown-platform"},
	}, {
		// numpy does not call __dlpack_device__; JAX's export reads no
		// platform_version and exports the CUDA client's kDLCUDA, which
		// numpy@v2's importable table does not hold.
		name:     "the seed's case into numpy",
		producer: "jax", platform: "gpu <unknown>", memory: "device", consumer: "numpy",
		outcome: Raises, err: "BufferError: Unsupported device in DLTensor.",
		steps: []string{"request@1 numpy@v2 ask", "__dlpack__@1 jax-export@v2 in-place", "from_dlpack@1 numpy@v2 unsupported-device"},
	}, {
		name:     "the seed's case into numpy 2.4, a RuntimeError",
		producer: "jax", platform: "gpu <unknown>", memory: "device", consumer: "numpy@v1",
		outcome: Raises, err: "RuntimeError: Unsupported device in DLTensor.",
		steps: []string{"request@1 numpy@v1 ask", "__dlpack__@1 jax-export@v2 in-place", "from_dlpack@1 numpy@v1 unsupported-device"},
	}, {
		name:     "a numpy CPU array into torch, in place",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "torch@v1",
		outcome: InPlace, device: "kDLCPU",
		steps: []string{"__dlpack_device__@1 numpy@v2 device", "request@1 torch@v1 ask", "__dlpack__@1 numpy@v2 export", "from_dlpack@1 torch@v1 import"},
	}, {
		// torch 1.13's __dlpack__ takes stream alone: numpy's first call
		// is a TypeError, and with device and copy None it asks again.
		name:     "a torch CPU tensor into numpy, on the second try",
		producer: "torch@v1", platform: "cpu", memory: "-", consumer: "numpy",
		outcome: InPlace, device: "kDLCPU",
		steps: []string{"request@1 numpy@v2 ask", "__dlpack__@1 torch@v1 unexpected-keyword", "request@2 numpy@v2 ask-again-without-arguments", "__dlpack__@2 torch@v1 export-cpu", "from_dlpack@2 numpy@v2 import"},
	}, {
		// torch/v2 rules.yaml: from_dlpack tries four times (dlpack.py
		// 184-210), dropping max_version, then copy; torch 1.13's
		// __dlpack__ takes only stream, so the third attempt exports,
		// and copy=True that the producer did not take is torch's clone.
		name:     "a torch 1.13 tensor into torch 2.11 with copy=True, on the third try",
		producer: "torch@v1", platform: "cpu", memory: "-", consumer: "torch@v2", args: engine.Input{"copy": true},
		outcome: ConsumerCopy, device: "kDLCPU",
		steps: []string{"__dlpack_device__@1 torch@v1 device-cpu", "request@1 torch@v2 ask", "__dlpack__@1 torch@v1 unexpected-keyword", "request@2 torch@v2 ask", "__dlpack__@2 torch@v1 unexpected-keyword", "request@3 torch@v2 ask", "__dlpack__@3 torch@v1 export-cpu", "from_dlpack@3 torch@v2 import-clone"},
	}, {
		name:     "a torch CPU tensor into numpy with copy=True, no second try",
		producer: "torch@v1", platform: "cpu", memory: "-", consumer: "numpy", args: engine.Input{"copy": true},
		outcome: Raises, err: "TypeError: Tensor.__dlpack__() got an unexpected keyword argument 'dl_device'",
		steps: []string{"request@1 numpy@v2 ask", "__dlpack__@1 torch@v1 unexpected-keyword", "request@2 numpy@v2 no-retry"},
	}, {
		name:     "numpy into numpy with copy=True, the producer copies",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "numpy", args: engine.Input{"copy": true},
		outcome: ProducerCopy, device: "kDLCPU",
		steps: []string{"request@1 numpy@v2 ask", "__dlpack__@1 numpy@v2 export-versioned", "from_dlpack@1 numpy@v2 import"},
	}, {
		// torch passes the CUDA stream 1 (the legacy default stream 0),
		// which JAX's export takes on a GPU.
		name:     "a JAX CUDA array into torch, in place",
		producer: "jax", platform: `gpu "cuda 12030"`, memory: "device", consumer: "torch@v1",
		outcome: InPlace, device: "kDLCUDA",
		steps: []string{"__dlpack_device__@1 jax@v3 gpu", "request@1 torch@v1 ask-stream", "__dlpack__@1 jax-export@v2 in-place", "from_dlpack@1 torch@v1 import"},
	}, {
		name:     "JAX CUDA pinned host memory into numpy, in place",
		producer: "jax", platform: `gpu "cuda 12030"`, memory: "pinned_host", consumer: "numpy",
		outcome: InPlace, device: "kDLCUDAHost",
		steps: []string{"request@1 numpy@v2 ask", "__dlpack__@1 jax-export@v2 in-place", "from_dlpack@1 numpy@v2 import"},
	}, {
		// torch.from_dlpack's request (its own __dlpack_device__) says
		// kDLCUDAHost, and torch@v1 imports no kDLCUDAHost capsule.
		name:     "JAX CUDA pinned host memory into torch",
		producer: "jax", platform: `gpu "cuda 12030"`, memory: "pinned_host", consumer: "torch@v1",
		outcome: Raises, err: "RuntimeError: Unsupported device_type: 3",
		steps: []string{"__dlpack_device__@1 jax@v3 gpu", "request@1 torch@v1 ask", "__dlpack__@1 jax-export@v2 in-place", "from_dlpack@1 torch@v1 unsupported-device"},
	}, {
		name:     "numpy's request refuses a device before any call",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "numpy", args: engine.Input{"device": "cuda"},
		outcome: Raises, err: `ValueError: Device not understood. Only "cpu" is allowed, but received: cuda`,
		steps: []string{"request@1 numpy@v2 device-not-cpu"},
	}, {
		// jax-import/v3 rules.yaml: from_dlpack calls __dlpack_device__
		// first, then __dlpack__(stream=None, max_version=(1, 3)).
		name:     "a numpy CPU array into jax, in place",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "jax",
		outcome: InPlace, device: "kDLCPU",
		steps: []string{"__dlpack_device__@1 numpy@v2 device", "request@1 jax-import@v3 ask", "__dlpack__@1 numpy@v2 export-versioned", "from_dlpack@1 jax-import@v3 import"},
	}, {
		// torch 1.13 refuses max_version; jax 0.12 asks again with stream alone.
		name:     "a torch 1.13 tensor into jax 0.12, on the second try",
		producer: "torch@v1", platform: "cpu", memory: "-", consumer: "jax==0.12.0.1",
		outcome: InPlace, device: "kDLCPU",
		steps: []string{"__dlpack_device__@1 torch@v1 device-cpu", "request@1 jax-import@v3 ask", "__dlpack__@1 torch@v1 unexpected-keyword", "request@2 jax-import@v3 ask", "__dlpack__@2 torch@v1 export-cpu", "from_dlpack@2 jax-import@v3 import"},
	}, {
		// jax 0.10.2 asks __dlpack__(stream=None) alone, which torch 1.13 takes.
		name:     "a torch 1.13 tensor into jax 0.10.2, on the first try",
		producer: "torch@v1", platform: "cpu", memory: "-", consumer: "jax==0.10.2",
		outcome: InPlace, device: "kDLCPU",
		steps: []string{"__dlpack_device__@1 torch@v1 device-cpu", "request@1 jax-import@v1.1 ask", "__dlpack__@1 torch@v1 export-cpu", "from_dlpack@1 jax-import@v1.1 import"},
	}, {
		// torch's pinned tensor says kDLCUDAHost and exports a kDLCPU
		// capsule; jax places it by the producer's device.
		name:     "a pinned torch tensor into jax, on kDLCUDAHost",
		producer: "torch", platform: "cpu", memory: "pinned", consumer: "jax",
		outcome: InPlace, device: "kDLCUDAHost",
		steps: []string{"__dlpack_device__@1 torch@v3 device-pinned", "request@1 jax-import@v3 ask", "__dlpack__@1 torch@v3 export-versioned", "from_dlpack@1 jax-import@v3 import"},
	}, {
		name:     "a pinned torch tensor into jax 0.10.0, a device type it does not take",
		producer: "torch", platform: "cpu", memory: "pinned", consumer: "jax==0.10.0",
		outcome: Raises, err: "TypeError: Array passed to from_dlpack is on unsupported device type (DLDeviceType: 3, array: ",
		steps: []string{"__dlpack_device__@1 torch@v3 device-pinned", "request@1 jax-import@v1 unsupported-device-type"},
	}, {
		name:     "jax's request refuses another device with copy=False before __dlpack__",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "jax", args: engine.Input{"device": "CpuDevice(id=1)", "copy": false},
		outcome: Raises, err: "ValueError: Specified device=CpuDevice(id=1) which requires a copy since the source device is CpuDevice(id=0), however copy=False. Set copy=True or copy=None to perform the requested operation.",
		steps: []string{"__dlpack_device__@1 numpy@v2 device", "request@1 jax-import@v3 device-needs-copy"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProducer(ctx, cat, tt.producer)
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewConsumer(cat, tt.consumer)
			if err != nil {
				t.Fatal(err)
			}
			cell, err := Decide(ctx, p, arrayOf(t, p, tt.platform, tt.memory), c, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := steps(cell); !slices.Equal(got, tt.steps) {
				t.Errorf("steps:\n got %q\nwant %q", got, tt.steps)
			}
			if cell.Outcome != tt.outcome {
				t.Errorf("outcome %s, want %s", cell.Outcome, tt.outcome)
			}
			if tt.outcome == Raises {
				if cell.Error == nil || cell.Error.Type+": "+cell.Error.Message != tt.err {
					t.Errorf("error %v, want %s", cell.Error, tt.err)
				}
				if cell.Device != nil {
					t.Errorf("device %v with an error", cell.Device)
				}
				return
			}
			if cell.Error != nil || cell.Device == nil || cell.Device.Type != tt.device {
				t.Errorf("device %v, error %v; want device %s", cell.Device, cell.Error, tt.device)
			}
		})
	}
}

// What the chain passes between the calls, read off the steps: the
// producer's device into torch's request, the request's keywords into
// __dlpack__, and __dlpack__'s capsule into from_dlpack.
func TestDecidePassesEachAnswerOn(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	p, c := libraryPair(t, cat, "jax", "torch@v1")
	cell, err := Decide(ctx, p, arrayOf(t, p, `gpu "rocm 60200"`, "device"), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cell.Steps) != 4 {
		t.Fatalf("steps %q; want 4", steps(cell))
	}
	req, export, imp := cell.Steps[1], cell.Steps[2], cell.Steps[3]
	if got := fmt.Sprint(req.Input["producer_device"]); got != "[10 0]" {
		t.Errorf("torch's request got producer_device %s, want [10 0] (kDLROCM, 0)", got)
	}
	// utils/dlpack.py:110-113: ROCm's stream 0 is passed as it is.
	if !slices.Equal(req.Keywords, []string{"stream"}) || fmt.Sprint(req.Kwargs["stream"]) != "0" {
		t.Errorf("request keywords %q kwargs %v, want [stream] with stream 0", req.Keywords, req.Kwargs)
	}
	if export.Input["client_platform"] != "rocm" || fmt.Sprint(export.Input["stream"]) != "0" {
		t.Errorf("jax-export asked %v; want client_platform rocm, stream 0", export.Input)
	}
	if got := fmt.Sprint(imp.Input["capsule_device"]); got != "[10 0]" || imp.Input["capsule"] != "dltensor" {
		t.Errorf("from_dlpack asked %v; want capsule_device [10 0] and capsule dltensor", imp.Input)
	}
	if cell.Outcome != InPlace || cell.Device.Type != "kDLROCM" {
		t.Errorf("outcome %s on %v; want in place on kDLROCM", cell.Outcome, cell.Device)
	}
}

// jax's from_dlpack is asked with the producer's device (the request's)
// beside the capsule's: a pinned torch tensor's capsule says kDLCPU.
func TestDecidePassesTheProducerDeviceToTheImport(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	p, c := libraryPair(t, cat, "torch", "jax")
	cell, err := Decide(ctx, p, arrayOf(t, p, "cpu", "pinned"), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	imp := cell.Decider()
	if imp.Call != CallImport || fmt.Sprint(imp.Input["producer_device"]) != "[3 0]" || fmt.Sprint(imp.Input["capsule_device"]) != "[1 0]" {
		t.Errorf("from_dlpack asked %v; want producer_device [3 0] and capsule_device [1 0]", imp.Input)
	}
	req := cell.Steps[1]
	if !slices.Equal(req.Keywords, []string{"stream", "max_version"}) || req.Kwargs["stream"] != nil || fmt.Sprint(req.Kwargs["max_version"]) != "[1 3]" {
		t.Errorf("request keywords %q kwargs %v, want stream None and max_version [1 3]", req.Keywords, req.Kwargs)
	}
}

func TestShort(t *testing.T) {
	raise := Cell{Outcome: Raises, Error: &engine.Exception{Type: "BufferError", Message: "Unknown GPU platform for __dlpack__: PJRT C API\nnvfork"}}
	for _, tt := range []struct {
		cell  Cell
		width int
		want  string
	}{
		{Cell{Outcome: InPlace}, 0, "in place"},
		{Cell{Outcome: ProducerCopy}, 0, "copy (producer)"},
		{Cell{Outcome: ConsumerCopy}, 0, "copy (consumer)"},
		{Cell{Outcome: BothCopy}, 0, "copy (both)"},
		{raise, 0, "BufferError: Unknown GPU platform for __dlpack__: PJRT C API nvfork"},
		{raise, 20, "BufferError: …nvfork"},
		{raise, 44, "BufferError: Unknown GPU plat…T C API nvfork"},
		{Cell{Outcome: InPlace}, 8, "in place"},
		{Cell{Outcome: Raises, Error: &engine.Exception{Type: "AssertionError"}}, 0, "AssertionError"},
	} {
		if got := tt.cell.Short(tt.width); got != tt.want {
			t.Errorf("Short(%d) of %s = %q, want %q", tt.width, tt.cell.Outcome, got, tt.want)
		}
	}
}

// No consumer takes the C lane: a producer whose type exposes the C
// exchange API (torch 2.15, paddle 3.3) crosses into every consumer by
// __dlpack__, and no cell has an outcome by another lane.
func TestEveryCellCrossesByTheDLPackLane(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	_, consumers := Libraries(cat)
	for _, ref := range []string{"torch@v3", "paddle@v1"} {
		p, err := NewProducer(ctx, cat, ref)
		if err != nil {
			t.Fatal(err)
		}
		if api, err := p.CExchange(ctx, p.Arrays[0]); err != nil || len(api) == 0 {
			t.Fatalf("%s.CExchange = %v, %v; want the API its type exposes", ref, api, err)
		}
		for _, cref := range consumers {
			c, err := NewConsumer(cat, cref)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range p.Arrays {
				cell, err := Decide(ctx, p, a, c, nil)
				if err != nil {
					t.Fatal(err)
				}
				if cell.Lane != LaneDLPack || cell.OtherLane != "" {
					t.Errorf("%s into %s, %s / %s: lane %q, other lane %q; want %q and none", ref, cref, a.Platform, a.Memory, cell.Lane, cell.OtherLane, LaneDLPack)
				}
			}
		}
	}
}

// TestConsumerGoesOnWithoutACapsule: a consumer whose request names the
// value request_fallback goes on, after the producer's __dlpack__ raised,
// without calling it again: its from_dlpack is asked with fallback true,
// and its answer ends the cell. MLX takes torch.utils.dlpack.to_dlpack of
// a tensor that requires grad, which torch's __dlpack__ refuses twice
// (BufferError), and copies it; with copy=False it refuses, as every CPU
// import.
func TestConsumerGoesOnWithoutACapsule(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	p, c := libraryPair(t, cat, "torch@v3", "mlx@v1")
	a := withInput(arrayOf(t, p, "cpu", "-"), "requires_grad", true)
	cell, err := Decide(ctx, p, a, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"request@1 mlx@v1 ask", "__dlpack__@1 torch@v3 requires-grad", "request@2 mlx@v1 ask-again",
		"__dlpack__@2 torch@v3 requires-grad", "request@3 mlx@v1 to-dlpack", "from_dlpack@3 mlx@v1 import"}
	if cell.Outcome != ConsumerCopy || !slices.Equal(steps(cell), want) {
		t.Fatalf("torch's tensor that requires grad into mlx: %s %v; steps:\n%v\nwant consumer_copy and:\n%v", cell.Outcome, cell.Error, steps(cell), want)
	}
	imp := cell.Steps[len(cell.Steps)-1].Input
	if imp["fallback"] != true || imp["failed_type"] != "BufferError" || !sameJSON(imp["producer_device"], []any{1, 0}) {
		t.Errorf("the import's input is %v; want fallback true, the BufferError and the tensor's device", imp)
	}
	cell, err = Decide(ctx, p, a, c, engine.Input{"copy": false})
	if err != nil {
		t.Fatal(err)
	}
	if cell.Error == nil || cell.Error.Type != "ValueError" || cell.Error.Message != "[convert] Cannot import a CPU array without a copy." {
		t.Errorf("with copy=False: %s %v, want mlx's ValueError", cell.Outcome, cell.Error)
	}
}

// TestConsumerNamesTheProducersType: a consumer that declares
// producer_type gets the producer's value python_type (torch@v3:
// torch.Tensor), which mlx's argument error prints for a sparse tensor;
// from_dlpack's arguments may give another, and a producer that states
// none (torch 2.8, torch@v1.0.7) leaves the consumer's placeholder.
func TestConsumerNamesTheProducersType(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	c, err := NewConsumer(cat, "mlx@v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		producer string
		args     engine.Input
		want     string
	}{
		{"torch@v3", nil, "Invoked with types: torch.Tensor"},
		{"torch@v3", engine.Input{"copy": true}, "Invoked with types: torch.Tensor, kwargs = { copy: bool }"},
		{"torch@v3", engine.Input{"producer_type": "torch.nn.parameter.Parameter"}, "Invoked with types: torch.nn.parameter.Parameter"},
		{"torch@v1.0.7", nil, "Invoked with types: the producer's type"},
	} {
		p, err := NewProducer(ctx, cat, tc.producer)
		if err != nil {
			t.Fatal(err)
		}
		a := withInput(arrayOf(t, p, "cpu", "-"), "layout", "sparse_coo")
		cell, err := Decide(ctx, p, a, c, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if cell.Error == nil || cell.Error.Type != "TypeError" || !strings.HasSuffix(cell.Error.Message, tc.want) {
			t.Errorf("%s's sparse tensor into mlx, %v: %s %v; want a TypeError ending %q; steps:\n%v", tc.producer, tc.args, cell.Outcome, cell.Error, tc.want, steps(cell))
		}
	}
}

// TestFallbackNeedsTheImportsInput: a request that goes on without a
// capsule, in a rule set whose from_dlpack declares no input fallback,
// is the rule set's error, naming the input, not a cell decided as if
// a capsule had come.
func TestFallbackNeedsTheImportsInput(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, dir := range []string{"mlx/v1", "torch/v3"} {
		err := fs.WalkDir(rules.FS, dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(rules.FS, path)
			if err != nil {
				return err
			}
			if path == "mlx/v1/rules.yaml" || path == "mlx/v1/tests.yaml" {
				s := strings.ReplaceAll(string(b), "request_fallback", "REQUEST_FALLBACK")
				s = strings.ReplaceAll(s, "fallback", "fell_back")
				b = []byte(strings.ReplaceAll(s, "REQUEST_FALLBACK", "request_fallback"))
			}
			fsys[path] = &fstest.MapFile{Data: b}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, c := libraryPair(t, cat, "torch@v3", "mlx@v1")
	a := withInput(arrayOf(t, p, "cpu", "-"), "requires_grad", true)
	_, err = Decide(ctx, p, a, c, nil)
	if err == nil || !strings.Contains(err.Error(), "from_dlpack declares no input fallback") {
		t.Errorf("Decide = %v, want an error naming the input fallback", err)
	}
}
