package interop

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// editedRules is the embedded rules with file's text old replaced by new,
// loaded.
func editedRules(t *testing.T, file, old, new string) *engine.Catalog {
	t.Helper()
	files := fstest.MapFS{}
	err := fs.WalkDir(rules.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(rules.FS, path)
		files[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	text := string(files[file].Data)
	if strings.Count(text, old) != 1 {
		t.Fatalf("%s holds %q %d times, want once", file, old, strings.Count(text, old))
	}
	files[file].Data = []byte(strings.Replace(text, old, new, 1))
	cat, err := engine.Load(files, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// The motivating edit: one marker row in jax's rules, and a GPU array whose
// platform_version JAX did not know is known. Every consumer whose
// exchange stopped at JAX's "Unknown GPU platform" now gets what it gets
// from a CUDA array, and no other cell changes.
func TestDiffCatalogsMarkerEdit(t *testing.T) {
	ctx := context.Background()
	old := shipped(t)
	edited := editedRules(t, "jax/v3/rules.yaml",
		"      - {marker: oneapi, device: kDLOneAPI}\n",
		"      - {marker: oneapi, device: kDLOneAPI}\n      - {marker: unknown, device: kDLCUDA, pinned_host: kDLCUDAHost}\n")
	before, after, changes, err := DiffCatalogs(ctx, MatrixSide{Catalog: old}, MatrixSide{Catalog: edited})
	if err != nil {
		t.Fatal(err)
	}

	cuda := map[string]*Cell{} // the CUDA array's cells, by consumer, after the edit
	var unknown []string       // the consumers JAX's unknown platform stopped, before it
	for _, r := range before.Rows {
		if r.Producer != "jax@v3" || r.Array.Platform != "gpu <unknown>" || r.Array.Memory != "device" {
			continue
		}
		for _, c := range r.Cells {
			if c.Error != nil && c.Error.Message == "Unknown GPU platform for __dlpack__: <unknown>" {
				unknown = append(unknown, library(c.Consumer))
			}
		}
	}
	for _, r := range after.Rows {
		if r.Producer == "jax@v3" && r.Array.Platform == `gpu "cuda 12030"` && r.Array.Memory == "device" {
			for i, c := range r.Cells {
				cuda[library(c.Consumer)] = &r.Cells[i]
			}
		}
	}
	if len(unknown) < 5 || cuda["torch"] == nil {
		t.Fatalf("the shipped matrix has %d consumers stopped at jax's unknown platform (%v), and a CUDA cell into torch: %v; the test needs both", len(unknown), unknown, cuda["torch"] != nil)
	}

	var got []string
	for _, ch := range changes {
		got = append(got, ch.Consumer)
		if ch.String() != "jax gpu <unknown> device into "+ch.Consumer {
			t.Errorf("a cell the marker does not concern changed: %s: %v -> %v (%v)", ch, short(ch.From), short(ch.To), ch.Differs)
			continue
		}
		want := cuda[ch.Consumer]
		if ch.From == nil || ch.To == nil || want == nil || ch.To.Short(0) != want.Short(0) {
			t.Errorf("%s: got %s -> %s, want %s (the CUDA array's)", ch, short(ch.From), short(ch.To), short(want))
		}
	}
	if !slices.Equal(got, unknown) {
		t.Errorf("the cells that change are into %v, want those JAX's unknown platform stopped: %v", got, unknown)
	}
	i := slices.IndexFunc(changes, func(c CellChange) bool { return c.Consumer == "torch" })
	if i < 0 {
		return // reported above
	}
	// Before, the cell raised and had a remedy; after, it crosses and has none.
	if ch := changes[i]; ch.To.Short(0) != "in place" || !slices.Equal(ch.Differs, []string{"outcome", "error", "device", "remedy"}) {
		t.Errorf("jax into torch: got %s -> %s, %v differing; want BufferError: Unknown GPU platform ... -> in place, outcome, error, device and remedy differing", short(ch.From), short(ch.To), ch.Differs)
	}
}

func short(c *Cell) string {
	if c == nil {
		return "(none)"
	}
	return c.Short(0)
}

// An edit that decides nothing differently changes no cell.
func TestDiffCatalogsDocEdit(t *testing.T) {
	edited := editedRules(t, "jax/v3/rules.yaml",
		"doc: memory kind and hardware id are ignored; the id is always 0",
		"doc: memory kind and hardware id are ignored (the id is always 0)")
	_, _, changes, err := DiffCatalogs(context.Background(), MatrixSide{Catalog: shipped(t)}, MatrixSide{Catalog: edited})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		t.Errorf("a doc edit changed %s: %s -> %s", ch, short(ch.From), short(ch.To))
	}
}

// Cells pair by library and array: a version bump of either side is no
// change, and what a user would see change is named.
func TestDiffMatrices(t *testing.T) {
	cpu := Array{Platform: "cpu", Memory: "-"}
	gpu := Array{Platform: "cuda", Memory: "-"}
	raises := Cell{Outcome: Raises, Error: &engine.Exception{Type: "BufferError", Message: "no"}, Lane: LaneDLPack}
	inPlace := Cell{Outcome: InPlace, Device: &Device{Type: "kDLCPU", Code: 1}, Lane: LaneDLPack}
	matrix := func(producer, consumer string, rows ...any) *Matrix {
		m := &Matrix{Consumers: []string{consumer}}
		for i := 0; i < len(rows); i += 2 {
			c := rows[i+1].(Cell)
			c.Producer, c.Consumer = producer, consumer
			m.Rows = append(m.Rows, Row{Producer: producer, Array: rows[i].(Array), Cells: []Cell{c}})
		}
		return m
	}
	withLane := inPlace
	withLane.Lane = LaneCExchange
	remedied := raises
	remedied.Remedy = &Remedy{Kind: "copy", Fix: "torch.from_dlpack(x, copy=True)", Outcome: ConsumerCopy}
	otherMessage := raises
	otherMessage.Error = &engine.Exception{Type: "BufferError", Message: "no, not that"}

	tests := []struct {
		name     string
		old, new *Matrix
		want     []string // "array into consumer: differs", "+" added, "-" removed
	}{
		{"a version bump", matrix("numpy@v1", "torch@v3", cpu, inPlace), matrix("numpy@v2", "torch@v4", cpu, inPlace), nil},
		{"an outcome", matrix("numpy@v1", "torch@v3", cpu, raises), matrix("numpy@v2", "torch@v3", cpu, inPlace), []string{"numpy cpu - into torch: outcome error device"}},
		{"a message", matrix("numpy@v1", "torch@v3", cpu, raises), matrix("numpy@v1", "torch@v3", cpu, otherMessage), []string{"numpy cpu - into torch: error"}},
		{"a lane", matrix("numpy@v1", "torch@v3", cpu, inPlace), matrix("numpy@v1", "torch@v3", cpu, withLane), []string{"numpy cpu - into torch: lane"}},
		{"a remedy", matrix("numpy@v1", "torch@v3", cpu, raises), matrix("numpy@v1", "torch@v3", cpu, remedied), []string{"numpy cpu - into torch: remedy"}},
		{"an array added", matrix("numpy@v1", "torch@v3", cpu, inPlace), matrix("numpy@v1", "torch@v3", cpu, inPlace, gpu, raises), []string{"numpy cuda - into torch: +"}},
		{"a consumer removed", matrix("numpy@v1", "torch@v3", cpu, inPlace), matrix("numpy@v1", "cupy@v1", cpu, inPlace), []string{"numpy cpu - into cupy: +", "numpy cpu - into torch: -"}},
	}
	for _, tt := range tests {
		var got []string
		for _, ch := range DiffMatrices(tt.old, tt.new) {
			s := ch.String() + ": " + strings.Join(ch.Differs, " ")
			switch {
			case ch.From == nil:
				s += "+"
			case ch.To == nil:
				s += "-"
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: DiffMatrices got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// At names the rule set's version wherever its library is a producer or
// consumer; jax-import is JAX's from_dlpack.
func TestOptionsAt(t *testing.T) {
	cat := shipped(t)
	tests := []struct {
		ref                string
		producer, consumer string // the entry that names the library
		ok                 bool
	}{
		{"torch@v1", "torch@v1", "torch@v1", true},
		{"jax@v1.1", "jax@v1.1", "jax@v1.1", true},
		{"jax-import@v1", "jax", "jax-import@v1", true},
		{"jax-export@v1", "jax", "jax", false},
	}
	for _, tt := range tests {
		rs, err := cat.RuleSet(tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := Options{}.At(cat, rs)
		lib := library(tt.producer)
		p := o.Producers[slices.IndexFunc(o.Producers, func(r string) bool { return library(r) == lib })]
		c := o.Consumers[slices.IndexFunc(o.Consumers, func(r string) bool { return library(r) == library(tt.consumer) || library(r) == lib })]
		if ok != tt.ok || p != tt.producer || c != tt.consumer {
			t.Errorf("Options{}.At(%s): producer %s, consumer %s, ok %t; want %s, %s, %t", tt.ref, p, c, ok, tt.producer, tt.consumer, tt.ok)
		}
	}
}

// BenchmarkDiffCatalogs is what `dlroute diff` adds to compare the matrix
// of the embedded rules with itself: both matrices decided, then paired.
func BenchmarkDiffCatalogs(b *testing.B) {
	cat, err := loadShipped()
	if err != nil {
		b.Fatal(err)
	}
	for _, classes := range []bool{false, true} {
		b.Run(fmt.Sprintf("classes=%t", classes), func(b *testing.B) {
			side := MatrixSide{Catalog: cat, Options: Options{Classes: classes}}
			for b.Loop() {
				if _, _, _, err := DiffCatalogs(context.Background(), side, side); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
