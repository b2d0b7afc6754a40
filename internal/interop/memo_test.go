package interop

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// TestMemoChangesNoCell: every cell of the shipped matrix, its arrays of
// every class, with and without copy, is the same decided through a
// Memo that earlier matrices filled as decided from nothing.
func TestMemoChangesNoCell(t *testing.T) {
	ctx := context.Background()
	cat := shipped(t)
	memo := NewMemo()
	for _, args := range []engine.Input{nil, {"copy": true}} {
		m, err := Options{Classes: true, Args: args, Memo: memo}.Decide(ctx, cat)
		if err != nil {
			t.Fatal(err)
		}
		consumers := map[string]*Consumer{} // without a memo
		for _, ref := range m.Consumers {
			if consumers[ref], err = NewConsumer(cat, ref); err != nil {
				t.Fatal(err)
			}
		}
		producers := map[string]*Producer{}
		for _, row := range m.Rows {
			p := producers[row.Producer]
			if p == nil {
				if p, err = NewProducer(ctx, cat, row.Producer); err != nil {
					t.Fatal(err)
				}
				producers[row.Producer] = p
			}
			for i, got := range row.Cells {
				want, err := Decide(ctx, p, row.Array, consumers[m.Consumers[i]], args)
				if err != nil {
					t.Fatal(err)
				}
				want.Remedy = got.Remedy // found by the matrix, not by Decide
				if g, w := cellJSON(t, got), cellJSON(t, want); g != w {
					t.Errorf("%s into %s, %v: through the memo\n%s\nfrom nothing\n%s", row.Producer, m.Consumers[i], args, g, w)
				}
			}
		}
	}
	if len(memo.x) == 0 {
		t.Error("the memo kept nothing")
	}
}

func cellJSON(t *testing.T, c Cell) string {
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMemoKeyTellsTypesApart: an input that differs only in a value's
// type (an int 1 or a double 1.0, the string "1") is another request.
func TestMemoKeyTellsTypesApart(t *testing.T) {
	inputs := []engine.Input{
		{"n": int64(1)}, {"n": 1.0}, {"n": "1"}, {"n": []any{int64(1)}}, {"n": []any{1.0}},
		{"n": true}, {"n": nil}, {"n": map[string]any{"a": int64(1)}}, {"n": map[string]any{"a": 1.0}},
		{"n": int64(1), "m": int64(1)}, {"nm": int64(1)},
	}
	seen := map[string]engine.Input{}
	for _, in := range inputs {
		k := string(appendKey(nil, map[string]any(in)))
		if prev, ok := seen[k]; ok {
			t.Errorf("%v and %v have one key %s", prev, in, k)
		}
		seen[k] = in
	}
	a := appendKey(nil, map[string]any{"a": int64(1), "b": "x"})
	b := appendKey(nil, map[string]any{"b": "x", "a": int64(1)})
	if string(a) != string(b) {
		t.Errorf("one input, two keys: %s, %s", a, b)
	}
}
