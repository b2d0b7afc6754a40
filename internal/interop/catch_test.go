package interop

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// witness is one exchange, producer's array at platform and memory into
// consumer's from_dlpack(x, **args), and the type it raises.
type witness struct {
	producer, platform, memory, consumer string
	args                                 engine.Input
	errType                              string
}

// The catch sets below hold the types of cells derived by hand from the
// rule files; each test names one such cell, decided, beside the set.
func TestCatchSet(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	tests := []struct {
		producer, consumer string
		pversion, cversion string   // one version of each side decided
		types              []string // some of the types
		uncatchable        []string // some of the outcomes no except catches
		witness            witness  // one exchange of the set
	}{{
		// numpy@v2's kDLCUDAHost array: torch 2.15 imports no kDLCUDAHost
		// capsule; torch 1.13-2.13 abort on a negative stride.
		producer: "numpy", consumer: "torch", pversion: "numpy@v0.1", cversion: "torch@v0.1",
		types: []string{"BufferError", "RuntimeError", "TypeError"}, uncatchable: []string{"SIGABRT"},
		witness: witness{"numpy", "(kDLCUDAHost, 0)", "-", "torch", nil, "BufferError"},
	}, {
		// jax 0.4.20's __dlpack__ takes no dl_device, which numpy passes
		// with copy=True and does not ask again without.
		producer: "jax", consumer: "numpy", pversion: "jax@v0+jax-export@v0.1", cversion: "numpy@v2",
		types:   []string{"TypeError"},
		witness: witness{"jax==0.4.20", "cpu cpu", "device", "numpy", engine.Input{"copy": true}, "TypeError"},
	}, {
		// torch 1.13's from_dlpack takes no copy; a negated view is
		// silently different, which no except catches.
		producer: "jax", consumer: "torch", pversion: "jax@v3+jax-export@v2", cversion: "torch@v3",
		types: []string{"BufferError", "TypeError"}, uncatchable: []string{SilentlyDifferent},
		witness: witness{"jax==0.4.20", "cpu cpu", "device", "torch@v1", engine.Input{"copy": true}, "TypeError"},
	}}
	for _, tt := range tests {
		t.Run(tt.producer+" into "+tt.consumer, func(t *testing.T) {
			got, err := CatchSet(ctx, cat, tt.producer, tt.consumer)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(got.ProducerVersions, tt.pversion) || !slices.Contains(got.ConsumerVersions, tt.cversion) {
				t.Errorf("versions %q into %q; want %s into %s among them", got.ProducerVersions, got.ConsumerVersions, tt.pversion, tt.cversion)
			}
			for _, typ := range tt.types {
				if !slices.Contains(got.Types, typ) {
					t.Errorf("types %q; want %s among them", got.Types, typ)
				}
			}
			for _, typ := range tt.uncatchable {
				if !slices.Contains(got.Uncatchable, typ) || slices.Contains(got.Types, typ) {
					t.Errorf("types %q, uncatchable %q; want %s uncatchable", got.Types, got.Uncatchable, typ)
				}
			}
			if !slices.IsSorted(got.Types) || got.Except != ExceptLine(got.Types) {
				t.Errorf("types %q, except %q; want them sorted and ExceptLine's", got.Types, got.Except)
			}
			w := tt.witness
			p, err := NewProducer(ctx, cat, w.producer)
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewConsumer(cat, w.consumer)
			if err != nil {
				t.Fatal(err)
			}
			cell, err := Decide(ctx, p, arrayOf(t, p, w.platform, w.memory), c, w.args)
			if err != nil {
				t.Fatal(err)
			}
			if errType(cell) != w.errType || !slices.Contains(got.Types, w.errType) {
				t.Errorf("%s %s into %s %v: %s; want %s, and it in %q", w.producer, w.platform, w.consumer, w.args, cell.Short(0), w.errType, got.Types)
			}
		})
	}
}

// A ref names one version: one pair.
func TestCatchSetOfOneVersion(t *testing.T) {
	got, err := CatchSet(context.Background(), shipped(t), "torch@v1", "jax==0.10.2")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.ProducerVersions, []string{"torch@v1"}) || !slices.Equal(got.ConsumerVersions, []string{"jax-import@v1.1"}) {
		t.Errorf("versions %q into %q; want torch@v1 into jax-import@v1.1 alone", got.ProducerVersions, got.ConsumerVersions)
	}
}

func TestCatchSetRefusesWhatIsNoLibrary(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	if _, err := CatchSet(ctx, cat, "nosuch", "torch"); err == nil || engine.Errors(err)[0].Code != engine.CodeNoRuleSet {
		t.Errorf("nosuch as a producer: %v; want %s", err, engine.CodeNoRuleSet)
	}
	var refused *RefusedError
	if _, err := CatchSet(ctx, cat, "numpy", "exchange"); !errors.As(err, &refused) || refused.Side != "consumer" {
		t.Errorf("exchange as a consumer: %v; want a RefusedError", err)
	}
}

func TestExceptLine(t *testing.T) {
	for _, tt := range []struct {
		types []string
		want  string
	}{
		{nil, ""},
		{[]string{"BufferError"}, "except BufferError:"},
		{[]string{"ArrowInvalid", "BufferError", "JaxRuntimeError", "RuntimeError", "XlaRuntimeError"}, "except (BufferError, RuntimeError, ValueError):"},
		{[]string{"InvalidArgumentError", "TypeError"}, "except (TypeError, tf.errors.InvalidArgumentError):"},
	} {
		if got := ExceptLine(tt.types); got != tt.want {
			t.Errorf("ExceptLine(%q) = %q, want %q", tt.types, got, tt.want)
		}
	}
}

func TestCaught(t *testing.T) {
	for typ, want := range map[string]bool{"BufferError": true, "ArrowInvalid": true, SilentlyDifferent: false, "SIGABRT": false, "SIGSEGV": false} {
		if Caught(typ) != want {
			t.Errorf("Caught(%s) = %t, want %t", typ, !want, want)
		}
	}
}
