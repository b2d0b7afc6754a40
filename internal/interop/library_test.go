package interop

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func TestLibraries(t *testing.T) {
	producers, consumers := Libraries(shipped(t))
	// jax answers as a producer through jax-export and as a consumer
	// through jax-import; exchange, jax-export and jax-import are no
	// library of their own.
	for _, want := range []string{"jax", "numpy", "torch"} {
		if !slices.Contains(producers, want) {
			t.Errorf("producers %q lack %s", producers, want)
		}
		if !slices.Contains(consumers, want) {
			t.Errorf("consumers %q lack %s", consumers, want)
		}
	}
	for _, no := range []string{"jax-export", "jax-import", "exchange"} {
		if slices.Contains(consumers, no) || slices.Contains(producers, no) {
			t.Errorf("producers %q or consumers %q hold %s, which is not a library", producers, consumers, no)
		}
	}
	if !slices.IsSorted(producers) || !slices.IsSorted(consumers) {
		t.Errorf("not in name order: %q, %q", producers, consumers)
	}
}

// numpy's arrays are the devices of its __dlpack_device__ cases in
// rules/numpy/v2/tests.yaml, each a distinct answer.
func TestArraysFromCases(t *testing.T) {
	cat := shipped(t)
	p, err := NewProducer(context.Background(), cat, "numpy@v2")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range p.Arrays {
		got = append(got, a.Platform)
	}
	want := []string{"(kDLCPU, 0)", "(kDLCUDAHost, 0)", "(kDLCUDAManaged, 1)"}
	if !slices.Equal(got, want) {
		t.Errorf("numpy@v2's arrays %q, want %q", got, want)
	}
	// torch's meta, mps and xpu tensors are answered alike by 1.13 (an
	// unknown device, and no packing): one row.
	p, err = NewProducer(context.Background(), cat, "torch@v1")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range p.Arrays {
		if d := a.Input["device_type"]; d == "meta" || d == "mps" || d == "xpu" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("torch@v1 has %d rows of meta, mps and xpu tensors; want 1: %v", n, p.Arrays)
	}
}

func TestJAXPairsByRelease(t *testing.T) {
	cat := shipped(t)
	// A release ref pairs with jax-export's version for that release; a
	// version ref with the one for its newest release checked (jax@v3's is
	// 0.12.0.1).
	for ref, export := range map[string]string{"jax": "jax-export@v2", "jax@v3": "jax-export@v2", "jax==0.10.2": "jax-export@v0.10", "jax==0.11.2": "jax-export@v1", "jax==0.12.0": "jax-export@v2"} {
		p, err := NewProducer(context.Background(), cat, ref)
		if err != nil {
			t.Fatal(err)
		}
		if p.export.Ref() != export {
			t.Errorf("%s exports with %s, want %s", ref, p.export.Ref(), export)
		}
	}
}

func TestJAXConsumerPairsByRelease(t *testing.T) {
	cat := shipped(t)
	// A release ref pairs with jax-import's version for that release; a
	// version ref with the one for its newest release checked.
	for ref, want := range map[string]string{
		"jax": "jax-import@v3", "jax@v3": "jax-import@v3", "jax@v1.1": "jax-import@v1.1",
		"jax==0.10.0": "jax-import@v1", "jax==0.10.1": "jax-import@v1", "jax==0.10.2": "jax-import@v1.1",
		"jax==0.11.2": "jax-import@v2", "jax==0.12.0": "jax-import@v3", "jax==0.12.0.1": "jax-import@v3",
		"jax-import@v2": "jax-import@v2", "jax==0.9.2": "jax-import@v1", "jax==0.8.1": "jax-import@v1",
		"jax==0.6.2": "jax-import@v0.8", "jax==0.5.0": "jax-import@v0.5", "jax==0.4.31": "jax-import@v0.4", "jax==0.4.30": "jax-import@v0.3", "jax==0.4.27": "jax-import@v0.2",
		"jax==0.7.2": "jax-import@v0.9", "jax==0.8.0": "jax-import@v0.10", "jax==0.7.1": "jax-import@v0.8.1",
		"jax==0.4.20": "jax-import@v0.1", "jax==0.4.23": "jax-import@v0.1.2", "jax==0.4.26": "jax-import@v0.1.4",
	} {
		c, err := NewConsumer(cat, ref)
		if err != nil {
			t.Fatalf("NewConsumer(%s): %v", ref, err)
		}
		if c.Ref != want {
			t.Errorf("NewConsumer(%s) is %s, want %s", ref, c.Ref, want)
		}
	}
	// A release older than every jax-import range names jax-import's nearest.
	if _, err := NewConsumer(cat, "jax==0.4.19"); err == nil || !strings.Contains(err.Error(), "no version for release 0.4.19") {
		t.Errorf("NewConsumer(jax==0.4.19) = %v, want a refusal of 0.4.19", err)
	}
}

func TestRefused(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	for ref, want := range map[string]string{
		"jax@v2":     "jax@v2 cannot be a producer: it mirrors no release of JAX",
		"exchange":   "exchange@v2 cannot be a producer",
		"jax-export": "jax-export@v2 cannot be a producer",
		"nosuch":     "nosuch",
	} {
		if _, err := NewProducer(ctx, cat, ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewProducer(%s) = %v, want an error with %q", ref, err, want)
		}
	}
	if _, err := NewConsumer(cat, "jax@v2"); err == nil || !strings.Contains(err.Error(), "jax@v2 cannot be a consumer: it mirrors no release of JAX") {
		t.Errorf("NewConsumer(jax@v2) = %v, want refused", err)
	}
	if _, err := NewProducer(ctx, cat, "jax-import"); err == nil || !strings.Contains(err.Error(), "jax-import@v3 cannot be a producer: it answers only JAX's from_dlpack") {
		t.Errorf("NewProducer(jax-import) = %v, want refused", err)
	}
	p, _ := NewProducer(ctx, cat, "numpy")
	c, _ := NewConsumer(cat, "torch@v1")
	if _, err := Decide(ctx, p, p.Arrays[0], c, engine.Input{"dtype": "float32"}); err == nil || !strings.Contains(err.Error(), "torch@v1 has no input dtype") {
		t.Errorf("Decide(torch, dtype=float32) = %v, want an error naming the input torch@v1 lacks", err)
	}
}

// A consumer that does not name request_keywords cannot be chained; the
// error says which value of which rule set is missing.
func TestConsumerWithoutTheShape(t *testing.T) {
	fsys := fstest.MapFS{}
	err := fs.WalkDir(rules.FS, "numpy/v2", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(rules.FS, path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "rules.yaml") {
			b = []byte(strings.ReplaceAll(string(b), "request_keywords", "asked_keywords"))
		}
		fsys[path] = &fstest.MapFile{Data: b}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Options{}.Decide(context.Background(), cat)
	if err == nil || !strings.Contains(err.Error(), "numpy@v2 names no value request_keywords") {
		t.Errorf("Decide = %v, want an error naming request_keywords", err)
	}
}
