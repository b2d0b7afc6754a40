package interop

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// The array's facts reach each call whose rule set declares them: the
// capsule's strides and dtype the consumer's import, the producer's
// __dlpack_device__ kind (an IntEnum) the consumer's message, from_dlpack's
// keywords the request. Each want is read off the rule files by hand.
func TestDecideFacts(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	tests := []struct {
		name               string
		producer, consumer string
		array              engine.Input
		args               engine.Input
		wantType, wantMsg  string // wantType "" wants outcome wantOutcome
		wantOutcome        Outcome
		wantRule           string // the rule of the last step
	}{
		// paddle's CPU tensor says its device id is None: JAX cannot look
		// the device up, and torch sees a transfer to device=cpu.
		{name: "a paddle CPU tensor into jax 0.12 raises on its id None", producer: "paddle@v1", consumer: "jax-import@v3",
			wantType: "TypeError", wantMsg: "device_from_local_hardware_id(): incompatible function arguments. The following argument types are supported:\n    1. device_from_local_hardware_id(self, arg: int, /) -> jaxlib._jax.Device\n\nInvoked with types: jaxlib._jax.Client, NoneType", wantRule: "device-id-none"},
		{name: "a paddle CPU tensor into torch 2.15 with device=cpu, copy=False is a transfer", producer: "paddle@v1", consumer: "torch@v3",
			args: engine.Input{"device": "cpu", "copy": false}, wantType: "ValueError", wantMsg: "cannot move DLPack tensor from device (<DLDeviceType.kDLCPU: 1>, None) to (1, 0) without copying. Set copy=None or copy=True.", wantRule: "cross-device-no-copy"},
		{name: "a paddle CPU tensor into torch 2.15 with device=cpu crosses in place", producer: "paddle@v1", consumer: "torch@v3",
			args: engine.Input{"device": "cpu"}, wantOutcome: InPlace, wantRule: "import"},
		{name: "a numpy array into jax 0.12 has an int id", producer: "numpy@v2", consumer: "jax-import@v3",
			wantOutcome: InPlace, wantRule: "import"},
		{name: "a negative stride aborts torch 1.13", producer: "numpy@v1", consumer: "torch@v1",
			array:    engine.Input{"dtype_bits": 64, "strides": []any{-1}},
			wantType: "SIGABRT", wantMsg: "Storage size calculation overflowed with sizes=[8] and strides=[-1]", wantRule: "import-overflow-abort"},
		{name: "and torch 2.11", producer: "numpy", consumer: "torch@v2",
			array: engine.Input{"strides": []any{-1}, "shape": []any{4}}, wantType: "SIGABRT",
			wantMsg: "Storage size calculation overflowed with sizes=[4] and strides=[-1]", wantRule: "import-overflow-abort"},
		{name: "torch 2.15 raises", producer: "numpy", consumer: "torch@v3",
			array: engine.Input{"strides": []any{4, -1}, "shape": []any{2, 4}}, wantType: "RuntimeError",
			wantMsg: "Storage size calculation overflowed with sizes=[2, 4] and strides=[4, -1]", wantRule: "import-overflow"},
		{name: "numpy's copy is contiguous: copy=True reaches torch 2.11 in a copy", producer: "numpy", consumer: "torch@v2",
			array: engine.Input{"strides": []any{-1}}, args: engine.Input{"copy": true}, wantOutcome: ProducerCopy, wantRule: "import"},
		{name: "a bool capsule into torch 1.13", producer: "jax", consumer: "torch@v1",
			array:    engine.Input{"platform": "cpu", "platform_version": "cpu", "dtype_code": 6, "dtype_bits": 8},
			wantType: "RuntimeError", wantMsg: "Unsupported code 6", wantRule: "import-dtype"},
		{name: "a bool tensor out of torch 1.13", producer: "torch@v1", consumer: "numpy",
			array:    engine.Input{"dtype_code": 6, "dtype_bits": 8},
			wantType: "RuntimeError", wantMsg: "Bool type is not supported by dlpack", wantRule: "export-bool"},
		{name: "bfloat16 into numpy", producer: "torch", consumer: "numpy@v2",
			array:    engine.Input{"dtype_code": 4, "dtype_bits": 16},
			wantType: "BufferError", wantMsg: "Unsupported dtype in DLTensor.", wantRule: "unsupported-dtype"},
		{name: "a torch producer's device prints as its enum", producer: "torch", consumer: "torch@v2",
			args: engine.Input{"device": "cuda", "copy": false}, wantType: "ValueError",
			wantMsg: "cannot move DLPack tensor from device (<DLDeviceType.kDLCPU: 1>, 0) to (2, 255) without copying. Set copy=None or copy=True.", wantRule: "cross-device-no-copy"},
		{name: "numpy's as ints", producer: "numpy", consumer: "torch@v2",
			args: engine.Input{"device": "cuda", "copy": false}, wantType: "ValueError",
			wantMsg: "cannot move DLPack tensor from device (1, 0) to (2, 255) without copying. Set copy=None or copy=True.", wantRule: "cross-device-no-copy"},
		{name: "copy=None passed to torch 1.13 is the TypeError", producer: "numpy", consumer: "torch@v1",
			args: engine.Input{"copy": nil}, wantType: "TypeError",
			wantMsg: "from_dlpack() got an unexpected keyword argument 'copy'", wantRule: "no-copy-keyword"},
		{name: "copy not passed is in place", producer: "numpy", consumer: "torch@v1", wantOutcome: InPlace, wantRule: "import"},
		// A negated view crosses as its memory, whatever the consumer; a
		// copy torch makes holds its values; the consumer's refusals come first.
		{name: "a negated view into numpy 2.5 is silently different", producer: "torch", consumer: "numpy@v2",
			array: engine.Input{"neg": true}, wantType: "SilentlyDifferent", wantMsg: "the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say: numpy reads every value with its sign flipped, and nothing raises; pass x.resolve_neg() (a copy) instead", wantRule: "import-negated"},
		{name: "into torch 2.15 itself", producer: "torch", consumer: "torch@v3",
			array: engine.Input{"neg": true}, wantType: "SilentlyDifferent", wantMsg: "the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say: torch reads every value with its sign flipped, and nothing raises; pass x.resolve_neg() (a copy) instead", wantRule: "import-negated"},
		{name: "into jax 0.12, its copy too", producer: "torch", consumer: "jax==0.12.0.1", args: engine.Input{"copy": true},
			array: engine.Input{"neg": true}, wantType: "SilentlyDifferent", wantMsg: "the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say: jax reads every value with its sign flipped, and nothing raises; pass x.resolve_neg() (a copy) instead", wantRule: "import-negated"},
		{name: "into torch 1.13 from torch 1.13", producer: "torch@v1", consumer: "torch@v1",
			array: engine.Input{"neg": true}, wantType: "SilentlyDifferent", wantMsg: "the capsule holds the memory of a negated view (x.is_neg()), which DLPack cannot say: torch reads every value with its sign flipped, and nothing raises; pass x.resolve_neg() (a copy) instead", wantRule: "import-negated"},
		{name: "copy=True: torch's clone holds the view's values", producer: "torch", consumer: "numpy@v2", args: engine.Input{"copy": true},
			array: engine.Input{"neg": true}, wantOutcome: ProducerCopy, wantRule: "import"},
		// numpy's own empty array has stride 0, and so has its copy
		{name: "pyarrow refuses numpy's empty array", producer: "numpy@v2", consumer: "pyarrow@v2",
			array: engine.Input{"shape": []any{0}, "strides": []any{0}}, wantType: "ArrowInvalid",
			wantMsg: "Only contiguous one dimensional tensor can be imported as arrays. Try importing to Tensor first.", wantRule: "not-a-contiguous-vector"},
		{name: "and numpy's copy of it", producer: "numpy@v2", consumer: "pyarrow@v2", args: engine.Input{"copy": true},
			array: engine.Input{"shape": []any{0}, "strides": []any{0}}, wantType: "ArrowInvalid",
			wantMsg: "Only contiguous one dimensional tensor can be imported as arrays. Try importing to Tensor first.", wantRule: "not-a-contiguous-vector"},
		{name: "a copy of a strided vector is contiguous", producer: "numpy@v2", consumer: "pyarrow@v2", args: engine.Input{"copy": true},
			array: engine.Input{"dtype_bits": 64, "strides": []any{2}}, wantOutcome: ProducerCopy, wantRule: "import"},
		// ArrowTypeError is a TypeError: torch tries again without
		// max_version, which pyarrow refuses with copy given, and
		// without copy re-raises pyarrow's own exception
		{name: "a pyarrow bool array into torch with copy", producer: "pyarrow@v2", consumer: "torch@v3", args: engine.Input{"copy": true},
			array: engine.Input{"dtype_code": 6, "dtype_bits": 8}, wantType: "BufferError",
			wantMsg: "The copy argument is not supported with legacy (pre 1.0) DLPack version.", wantRule: "copy-unversioned"},
		{name: "and without", producer: "pyarrow@v2", consumer: "torch@v3",
			array: engine.Input{"dtype_code": 6, "dtype_bits": 8}, wantType: "ArrowTypeError",
			wantMsg: "Bit-packed boolean data type not supported by DLPack.", wantRule: "no-retry"},
		{name: "jax refuses the strides of x.conj().imag first", producer: "torch", consumer: "jax==0.12.0.1",
			array: engine.Input{"neg": true, "dtype_bits": 32, "strides": []any{2}, "shape": []any{3}}, wantType: "JaxRuntimeError",
			wantMsg: "UNIMPLEMENTED: Only DLPack tensors with trivial (compact) striding are supported; i.e., tensors whose striding represents a transposition of the underlying buffer but not broadcasting. Dimensions were: [3], strides were [2].", wantRule: "not-compact"},
	}
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
			a, err := p.ArrayOf(ctx, tt.array)
			if err != nil {
				t.Fatalf("ArrayOf(%v): %v", tt.array, err)
			}
			cell, err := Decide(ctx, p, a, c, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			last := cell.Steps[len(cell.Steps)-1].Decision.Rule
			if tt.wantType != "" {
				if cell.Error == nil || cell.Error.Type != tt.wantType || cell.Error.Message != tt.wantMsg {
					t.Errorf("Decide(%s -> %s, %v) = %s %v, want %s: %s", tt.producer, tt.consumer, tt.array, cell.Outcome, cell.Error, tt.wantType, tt.wantMsg)
				}
			} else if cell.Outcome != tt.wantOutcome {
				t.Errorf("Decide(%s -> %s, %v) = %s %v, want %s", tt.producer, tt.consumer, tt.array, cell.Outcome, cell.Error, tt.wantOutcome)
			}
			if last != tt.wantRule {
				t.Errorf("last rule %s, want %s (steps %s)", last, tt.wantRule, strings.Join(steps(cell), "; "))
			}
		})
	}
}

// numpy's empty array is its own: stride 0, which pyarrow refuses, and
// torch's is C order's, which it takes.
func TestMatrixEmptyIntoPyarrow(t *testing.T) {
	m, err := Options{Producers: []string{"numpy", "torch"}, Consumers: []string{"pyarrow@v2"}, Classes: true}.Decide(context.Background(), shipped(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Outcome{"numpy@v2": Raises, "torch@v3": InPlace}
	for _, r := range m.Rows {
		if r.Array.Class == "empty" {
			if got := r.Cells[0].Outcome; got != want[r.Producer] {
				t.Errorf("%s's empty array into pyarrow@v2: %s %v, want %s", r.Producer, got, r.Cells[0].Error, want[r.Producer])
			}
			delete(want, r.Producer)
		}
	}
	if len(want) > 0 {
		t.Errorf("no empty row of %v", want)
	}
}

// A fact of the wrong type is refused, whether or not a rule set reads it.
func TestArrayOfFactType(t *testing.T) {
	p, err := NewProducer(context.Background(), shipped(t), "jax")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.ArrayOf(context.Background(), engine.Input{"platform": "cpu", "shape": 8})
	if e := engine.Errors(err); len(e) == 0 || e[0].Code != engine.CodeWrongType {
		t.Fatalf("ArrayOf(shape: 8) = %v, want %s", err, engine.CodeWrongType)
	}
}

// The matrix's classes: each producer's ordinary array once per class
// its library makes, after its arrays.
func TestMatrixClasses(t *testing.T) {
	m, err := Options{Producers: []string{"numpy", "torch", "jax", "pyarrow"}, Consumers: []string{"torch@v1"}, Classes: true}.Decide(context.Background(), shipped(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range m.Rows {
		if r.Array.Class != "" {
			got[r.Producer] = append(got[r.Producer], r.Array.Class)
		}
	}
	want := map[string]string{
		"numpy@v2": "bool complex64 uint16 0-d empty strided transposed negative-stride read-only",
		"torch@v3": "bool complex64 bfloat16 uint16 0-d empty strided transposed requires_grad conj neg sparse",
		"jax@v3":   "bool complex64 bfloat16 uint16 0-d empty",
		// Arrow has no complex type, and its arrays are vectors
		"pyarrow@v2": "bool uint16 empty",
	}
	for p, w := range want {
		if g := strings.Join(got[p], " "); g != w {
			t.Errorf("%s's classes: %s, want %s", p, g, w)
		}
	}
}

// A producer's type exposes the C exchange API as its rules say, read off
// the rule files by hand: torch 2.10 on one capsule attribute of DLPack
// 1.3, paddle 3.3 two; torch 2.9, numpy and JAX none.
func TestCExchange(t *testing.T) {
	cat := shipped(t)
	std := CExchangeAPI{Attribute: "__dlpack_c_exchange_api__", Form: "capsule", Version: [2]int64{1, 3}}
	tvm := CExchangeAPI{Attribute: "__c_dlpack_exchange_api__", Form: "capsule", Version: [2]int64{1, 3}}
	tests := []struct {
		producer string
		want     []CExchangeAPI
	}{
		{"torch==2.10.0", []CExchangeAPI{std}},
		{"torch==2.13.0", []CExchangeAPI{std}},
		{"torch@v3", []CExchangeAPI{std}},
		{"torch==2.9.1", nil},
		{"torch@v1", nil},
		{"paddle@v1", []CExchangeAPI{std, tvm}},
		{"numpy", nil},
		{"jax", nil},
	}
	for _, tt := range tests {
		p, err := NewProducer(context.Background(), cat, tt.producer)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Arrays {
			got, err := p.CExchange(context.Background(), a)
			if err != nil {
				t.Fatalf("%s.CExchange(%s / %s): %v", tt.producer, a.Platform, a.Memory, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s.CExchange(%s / %s) = %+v, want %+v", tt.producer, a.Platform, a.Memory, got, tt.want)
			}
		}
	}
}

// A c_exchange_api value that is not what the shape needs is an error
// naming the rule set and the value, never a half-read API.
func TestCExchangeRefusesAMalformedValue(t *testing.T) {
	ok := map[string]any{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": []any{int64(1), int64(3)}}
	for _, v := range []any{
		"capsule",
		[]any{"__dlpack_c_exchange_api__"},
		[]any{map[string]any{"attribute": "__dlpack_c_exchange_api__", "form": "capsule"}},
		[]any{map[string]any{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": []any{int64(1)}}},
		[]any{map[string]any{"attribute": "__dlpack_c_exchange_api__", "form": "capsule", "version": []any{"1", "3"}}},
		[]any{ok, map[string]any{"attribute": 1, "form": "capsule", "version": []any{int64(1), int64(3)}}},
	} {
		got, err := cExchangeOf("torch@v3", v)
		if err == nil || !strings.Contains(err.Error(), "torch@v3's value c_exchange_api") {
			t.Errorf("cExchangeOf(%v) = %v, %v; want an error naming torch@v3's value c_exchange_api", v, got, err)
		}
	}
	if got, err := cExchangeOf("torch@v3", []any{ok}); err != nil || len(got) != 1 || got[0].Version != [2]int64{1, 3} {
		t.Errorf("cExchangeOf(one good entry) = %v, %v", got, err)
	}
}

// What the C lane exports of an array, as torch@v3's and paddle@v1's
// rules state it (each run on 2.15.0 and 3.3.1), against what __dlpack__
// answers the DLPack lane: a tensor that requires grad and a torch
// conjugate view cross by the C lane where numpy's from_dlpack gets a
// BufferError; a sparse tensor raises on both lanes, a RuntimeError on
// the C lane. torch@v2 (2.10 to 2.12), whose export was not run, states
// none.
func TestCLane(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	numpy, err := NewConsumer(cat, "numpy@v2")
	if err != nil {
		t.Fatal(err)
	}
	cpu := &CLaneExport{Device: []int64{1, 0}}
	tests := []struct {
		producer, class string // class "": the producer's most ordinary array (a cpu one)
		want            *CLaneExport
		dlpack          Outcome // numpy's from_dlpack of it: the DLPack lane
	}{
		{"torch@v3", "", cpu, InPlace},
		{"torch@v3", "requires_grad", cpu, Raises},
		{"torch@v3", "conj", cpu, Raises},
		{"torch@v3", "sparse", &CLaneExport{ErrorType: "RuntimeError"}, Raises},
		{"paddle@v1", "", cpu, InPlace},
		{"paddle@v1", "requires_grad", cpu, Raises},
		{"torch@v2", "", nil, InPlace},
		{"numpy@v2", "", nil, InPlace},
	}
	for _, tt := range tests {
		p, err := NewProducer(ctx, cat, tt.producer)
		if err != nil {
			t.Fatal(err)
		}
		a := p.Arrays[0] // the most ordinary: the one classArrays starts from
		for _, b := range p.Arrays[1:] {
			if b.unusual < a.unusual {
				a = b
			}
		}
		if tt.class != "" {
			a = classArray(t, p, tt.class)
		}
		got, err := p.CLane(ctx, a)
		if err != nil {
			t.Fatalf("%s.CLane(%s): %v", tt.producer, tt.class, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s.CLane(%s) = %+v, want %+v", tt.producer, tt.class, got, tt.want)
		}
		cell, err := Decide(ctx, p, a, numpy, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cell.Outcome != tt.dlpack || cell.Lane != LaneDLPack {
			t.Errorf("%s %s into numpy: %s by lane %s, want %s by the DLPack lane", tt.producer, tt.class, cell.Outcome, cell.Lane, tt.dlpack)
		}
	}
}

// A c_exchange_export value of another shape is an error naming the rule
// set and the value.
func TestCLaneRefusesAMalformedValue(t *testing.T) {
	for _, v := range []any{
		"RuntimeError",
		map[string]any{"raise": []any{}},
		map[string]any{"raise": []any{int64(1)}},
		map[string]any{"raise": []any{"RuntimeError", "text"}},
		map[string]any{"device": []any{int64(1)}, "flags": int64(0)},
		map[string]any{"device": []any{int64(1), "0"}, "flags": int64(0)},
		map[string]any{"device": []any{int64(1), int64(0)}},
	} {
		got, err := cLaneOf("paddle@v1", v)
		if err == nil || !strings.Contains(err.Error(), "paddle@v1's value c_exchange_export") {
			t.Errorf("cLaneOf(%v) = %+v, %v; want an error naming paddle@v1's value c_exchange_export", v, got, err)
		}
	}
}
