package interop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestCellChecked: each cell says, for both sides, the versions that
// answered it and the releases each was checked against; it rests on real
// code (Run) only where every version was run here and no ref named a
// release outside what was checked.
func TestCellChecked(t *testing.T) {
	cat := shipped(t)
	ctx := context.Background()
	for _, c := range []struct {
		producer, consumer string
		versions           []string // producer's, then consumer's
		run                bool
		warned             string // the ref of a release warning, if any
	}{
		{"jax==0.10.2", "numpy@v1", []string{"jax@v1.1", "jax-export@v0.10", "numpy@v1"}, true, ""},
		{"numpy@v1", "torch@v1", []string{"numpy@v1", "torch@v1"}, true, ""},
		{"numpy@v1", "numpy@v2", []string{"numpy@v1", "numpy@v2"}, true, ""},
		{"numpy@v2", "cupy@v1", []string{"numpy@v2", "cupy@v1"}, false, ""}, // cupy@v1 read from source only
		// jax 0.12.0 is jax@v3's __dlpack_device__ and jax-export@v2's __dlpack__, each run on it.
		{"jax==0.12.0", "numpy@v1", []string{"jax@v3", "jax-export@v2", "numpy@v1"}, true, ""},
		// A jax newer than every release checked: both of its sides say so.
		{"jax==0.13.0", "numpy@v1", []string{"jax@v3", "jax-export@v2", "numpy@v1"}, false, "jax==0.13.0 jax-export==0.13.0"},
		{"numpy@v1", "numpy==9.1", []string{"numpy@v1", "numpy@v2"}, false, "numpy==9.1"},
	} {
		m, err := Options{Producers: []string{c.producer}, Consumers: []string{c.consumer}}.Decide(ctx, cat)
		if err != nil {
			t.Fatalf("%s into %s: %v", c.producer, c.consumer, err)
		}
		for _, row := range m.Rows {
			cell := row.Cells[0]
			var got []string
			for _, v := range append(append([]VersionCheck(nil), cell.Checked.Producer...), cell.Checked.Consumer...) {
				if len(v.Checked) == 0 {
					t.Errorf("%s into %s: %s says no release checked", c.producer, c.consumer, v.RuleSet)
				}
				got = append(got, v.RuleSet)
			}
			if strings.Join(got, " ") != strings.Join(c.versions, " ") || cell.Checked.Run != c.run {
				t.Errorf("%s into %s: checked %v, run %v; want %v, run %v", c.producer, c.consumer, got, cell.Checked.Run, c.versions, c.run)
			}
			var warned []string
			for _, w := range cell.Checked.Warnings() {
				warned = append(warned, w.Ref)
			}
			if strings.Join(warned, " ") != c.warned {
				t.Errorf("%s into %s: warnings %v, want %q", c.producer, c.consumer, warned, c.warned)
			}
			data, _ := json.Marshal(cell)
			if !strings.Contains(string(data), `"checked":{"run":`) {
				t.Errorf("%s into %s: the cell's JSON has no checked: %s", c.producer, c.consumer, data)
			}
		}
		if len(m.Warnings()) != len(strings.Fields(c.warned)) {
			t.Errorf("%s into %s: the matrix's warnings %v, want %q once", c.producer, c.consumer, m.Warnings(), c.warned)
		}
	}
}
