package interop

import (
	"context"
	"slices"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// classArray is producer p's ordinary array of class name (Classes).
func classArray(t *testing.T, p *Producer, name string) Array {
	t.Helper()
	for _, a := range classArrays(p) {
		if a.Class == name {
			return a
		}
	}
	t.Fatalf("%s makes no array of class %s", p.Ref, name)
	return Array{}
}

// Each remedy below is what a user of these libraries applies, and the
// cell is what the rules decide without it: the fix named is the first
// of the Remedy* kinds that, decided again, crosses.
func TestFindRemedy(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	tests := []struct {
		name                    string
		producer, consumer      string
		platform, memory, class string // the row; class "" for a row of Arrays
		args                    engine.Input
		errType                 string // the cell's error type
		kind, fix               string // "" for no remedy
		outcome                 Outcome
	}{{
		name:     "a CUDA tensor into numpy, copied to the host by torch",
		producer: "torch", platform: "cuda device_index=0", memory: "-", consumer: "numpy",
		errType: "BufferError", kind: RemedyHostCopy, fix: "x.cpu()", outcome: InPlace,
	}, {
		name:     "a JAX GPU array into numpy, put on JAX's CPU device",
		producer: "jax", platform: `gpu "cuda 12030"`, memory: "device", consumer: "numpy",
		errType: "BufferError", kind: RemedyHostCopy, fix: `jax.device_put(x, jax.devices("cpu")[0])`, outcome: InPlace,
	}, {
		// cupy has no host array of its own: x.get() is a NumPy array.
		name:     "a CuPy array into numpy, x.get()",
		producer: "cupy", platform: "-", memory: "-", consumer: "numpy",
		errType: "BufferError", kind: RemedyHostCopy, fix: "x.get()", outcome: InPlace,
	}, {
		name:     "numpy's kDLCUDAHost array into torch, copied into numpy's own memory",
		producer: "numpy", platform: "(kDLCUDAHost, 0)", memory: "-", consumer: "torch",
		errType: "BufferError", kind: RemedyHostCopy, fix: "x.copy()", outcome: InPlace,
	}, {
		// pyarrow 26 reads only versioned capsules; mlx exports the
		// unversioned one, numpy the versioned one pyarrow asks for.
		name:     "an mlx array into pyarrow, through NumPy",
		producer: "mlx", platform: "-", memory: "-", consumer: "pyarrow",
		errType: "ValueError", kind: RemedyThroughNumPy, fix: "pa.Array.from_dlpack(np.asarray(x))", outcome: InPlace,
	}, {
		name:     "a negated torch view into numpy, silently different, resolved",
		producer: "torch", class: "neg", consumer: "numpy",
		errType: SilentlyDifferent, kind: RemedyResolveNeg, fix: "x.resolve_neg()", outcome: InPlace,
	}, {
		name:     "a conjugated torch view into numpy, resolved",
		producer: "torch", class: "conj", consumer: "numpy",
		errType: "BufferError", kind: RemedyResolveConj, fix: "x.resolve_conj()", outcome: InPlace,
	}, {
		name:     "a tensor that requires grad into numpy, detached",
		producer: "torch", class: "requires_grad", consumer: "numpy",
		errType: "BufferError", kind: RemedyDetach, fix: "x.detach()", outcome: InPlace,
	}, {
		name:     "a sparse tensor into jax, made dense",
		producer: "torch", class: "sparse", consumer: "jax",
		errType: "BufferError", kind: RemedyDense, fix: "x.to_dense()", outcome: InPlace,
	}, {
		// jax-import refuses a negative stride; the class is float64,
		// which JAX (without x64) copies into float32.
		name:     "a reversed numpy view into jax, made contiguous",
		producer: "numpy", class: "negative-stride", consumer: "jax",
		errType: "JaxRuntimeError", kind: RemedyContiguous, fix: "np.ascontiguousarray(x)", outcome: ConsumerCopy,
	}, {
		name:     "a read-only numpy array into tensorflow, copied",
		producer: "numpy", class: "read-only", consumer: "tensorflow",
		errType: "BufferError", kind: RemedyWriteable, fix: "x.copy()", outcome: InPlace,
	}, {
		name:     "a bfloat16 tensor into numpy, cast",
		producer: "torch", class: "bfloat16", consumer: "numpy",
		errType: "BufferError", kind: RemedyCast, fix: "x.to(torch.float32)", outcome: InPlace,
	}, {
		// torch 1.13's __dlpack__ takes no dl_device, and with copy given
		// numpy does not ask again.
		name:     "a torch 1.13 tensor into numpy with copy=True, without it",
		producer: "torch@v1", platform: "cpu", memory: "-", consumer: "numpy", args: engine.Input{"copy": true},
		errType: "TypeError", kind: RemedyDropKeywords, fix: "np.from_dlpack(x)", outcome: InPlace,
	}, {
		// mlx's import always copies: copy=False is a ValueError.
		name:     "mlx without copy=False",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "mlx", args: engine.Input{"copy": false},
		errType: "ValueError", kind: RemedyDropKeywords, fix: "mx.from_dlpack(x)", outcome: ConsumerCopy,
	}, {
		name:     "tensorflow's from_dlpack takes the capsule",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "tensorflow", args: engine.Input{"copy": true},
		errType: "TypeError", kind: RemedyDropKeywords, fix: "tf.experimental.dlpack.from_dlpack(x.__dlpack__())", outcome: InPlace,
	}, {
		// A cast to float32 would drop the imaginary part: no remedy.
		name:     "a complex numpy array into pyarrow, no cast offered",
		producer: "numpy", class: "complex64", consumer: "pyarrow",
		errType: "ArrowInvalid",
	}, {
		// x.cpu() of a meta tensor raises: it holds no data.
		name:     "a meta tensor has no host copy",
		producer: "torch", platform: "meta", memory: "-", consumer: "numpy",
		errType: "BufferError",
	}, {
		name:     "a CPU array into cupy: no fix the rules know",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "cupy",
		errType: "TypeError",
	}, {
		name:     "a cell that crosses has none",
		producer: "numpy", platform: "(kDLCPU, 0)", memory: "-", consumer: "torch",
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
			var a Array
			if tt.class == "" {
				a = arrayOf(t, p, tt.platform, tt.memory)
			} else {
				a = classArray(t, p, tt.class)
			}
			cell, err := Decide(ctx, p, a, c, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := errType(cell); got != tt.errType {
				t.Fatalf("the cell raises %q (%s), want %q", got, cell.Short(0), tt.errType)
			}
			got, err := FindRemedy(ctx, cat, p, a, c, tt.args, cell)
			if err != nil {
				t.Fatal(err)
			}
			if tt.kind == "" {
				if got != nil {
					t.Errorf("FindRemedy = %+v, want none", *got)
				}
				return
			}
			want := Remedy{Kind: tt.kind, Fix: tt.fix, Outcome: tt.outcome}
			if got == nil || *got != want {
				t.Errorf("FindRemedy = %v, want %+v", got, want)
			}
		})
	}
}

func errType(c Cell) string {
	if c.Error == nil {
		return ""
	}
	return c.Error.Type
}

// The fixes are tried cheapest first, and a fix that does not apply is
// not listed: a transposed negated bool view of torch's, passed with
// copy=False, is resolved, made contiguous, passed without the argument
// (a fact of numpy's process, ml_dtypes, stays), then with copy=True,
// then cast (float32 holds every bool). It is on
// the host already (no x.cpu()), and NumPy makes no negated view (no
// np.asarray(x)).
func TestFixesInOrder(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	p, c := libraryPair(t, cat, "torch", "numpy")
	a := classArray(t, p, "transposed")
	a.Facts["dtype_code"], a.Facts["dtype_bits"], a.Facts["neg"] = 6, 8, true
	fixes, err := newRemedies(cat).fixes(ctx, p, a, c, engine.Input{"copy": false, "ml_dtypes": true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fixes {
		got = append(got, f.kind+" "+f.text)
	}
	want := []string{
		"resolve_neg x.resolve_neg()",
		"contiguous x.contiguous()",
		"drop_keywords np.from_dlpack(x)",
		"copy np.from_dlpack(x, copy=True)",
		"cast x.to(torch.float32)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("fixes:\n got %q\nwant %q", got, want)
	}
	// Each fix changes only what it names.
	if f := fixes[0]; f.a.Facts["neg"] != false || f.a.Facts["strides"] == nil {
		t.Errorf("resolve_neg's array %v; want neg false, the strides kept", f.a.Facts)
	}
	if f := fixes[2]; len(f.args) != 1 || f.args["ml_dtypes"] != true {
		t.Errorf("drop_keywords's args %v; want ml_dtypes alone", f.args)
	}
	if f := fixes[3]; f.args["copy"] != true || f.args["ml_dtypes"] != true || f.a.Facts["neg"] != true {
		t.Errorf("copy's args %v, array %v; want copy true beside ml_dtypes, the array as it was", f.args, f.a.Facts)
	}
}

// A library that remedyWords does not name is written in plain words.
func TestFixWords(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{producerFix("torch", RemedyContiguous), "x.contiguous()"},
		{producerFix("onnxruntime", RemedyCast), "cast the array to float32 first"},
		{producerFix("nosuch", RemedyHostCopy), "copy it to host memory first"},
		{consumerCall("jax", "x", engine.Input{"copy": true, "device": "cpu"}), `jax.numpy.from_dlpack(x, device="cpu", copy=True)`},
		{consumerCall("pyarrow", "x", engine.Input{"device": []any{1, 0}}), "pa.Array.from_dlpack(x, device=(1, 0))"},
		{consumerCall("nosuch", "x", engine.Input{"copy": nil}), "nosuch's from_dlpack(x, copy=None)"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// The matrix's cells carry FindRemedy's remedy, and a fix's own cell
// none: a remedy is one fix, decided once.
func TestMatrixRemedies(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	m, err := Options{Producers: []string{"torch"}, Consumers: []string{"numpy", "cupy"}, Classes: true}.Decide(ctx, cat)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProducer(ctx, cat, "torch")
	if err != nil {
		t.Fatal(err)
	}
	remedied := 0
	for _, r := range m.Rows {
		for i, cell := range r.Cells {
			c, err := NewConsumer(cat, m.Consumers[i])
			if err != nil {
				t.Fatal(err)
			}
			want, err := FindRemedy(ctx, cat, p, r.Array, c, nil, cell)
			if err != nil {
				t.Fatal(err)
			}
			if (cell.Remedy == nil) != (want == nil) || want != nil && *cell.Remedy != *want {
				t.Errorf("%s %s %s into %s: remedy %v, want %v", r.Array.Platform, r.Array.Memory, r.Array.Class, c.Ref, cell.Remedy, want)
			}
			if cell.Remedy != nil {
				remedied++
				if cell.Remedy.Outcome == Raises {
					t.Errorf("%s into %s: a remedy that raises", r.Array.Class, c.Ref)
				}
			}
		}
	}
	if remedied == 0 {
		t.Error("no cell of torch into numpy has a remedy")
	}
}
