package plan

import (
	"errors"
	"maps"
	"math"
	"slices"
)

// The encoding: Magic, FormatVersion (uvarint), a table of every string
// in order of first use, then the plan, its imports nested. Integers are
// varints; a string is its index in the table; a value is a tag byte and
// its contents. Nodes are written children first, so that a node's
// arguments always come before it: Decode checks that, and a plan's
// trees can neither loop nor nest deeper than they are long.

const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt
	tagUint
	tagDouble
	tagString
	tagList
	tagMap
	tagObject // a JSON object, map[string]any: an input's default
)

// MarshalBinary encodes the plan. Equal plans encode to equal bytes.
func (p *Plan) MarshalBinary() ([]byte, error) {
	w := &writer{strs: map[string]int{}}
	if err := w.plan(p); err != nil {
		return nil, err
	}
	out := appendUvarint([]byte(Magic), FormatVersion)
	out = appendUvarint(out, uint64(len(w.table)))
	for _, s := range w.table {
		out = appendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return append(out, w.b...), nil
}

type writer struct {
	b     []byte
	strs  map[string]int
	table []string
}

func (w *writer) uint(n uint64) { w.b = appendUvarint(w.b, n) }
func (w *writer) int(n int64)   { w.b = appendVarint(w.b, n) }

func (w *writer) str(s string) {
	i, ok := w.strs[s]
	if !ok {
		i = len(w.table)
		w.strs[s] = i
		w.table = append(w.table, s)
	}
	w.uint(uint64(i))
}

func (w *writer) plan(p *Plan) error {
	w.str(p.Ref)
	w.uint(p.StepLimit)
	w.uint(uint64(p.Locals))
	w.uint(uint64(len(p.Values)))
	w.uint(uint64(len(p.Inputs)))
	for _, in := range p.Inputs {
		w.str(in.Name)
		w.typ(in.Type)
		if in.Required {
			w.b = append(w.b, 1)
		} else {
			w.b = append(w.b, 0)
			if err := w.value(in.Default); err != nil {
				return errors.New("input " + in.Name + ": " + err.Error())
			}
		}
	}
	w.uint(uint64(len(p.DeviceTypes)))
	for _, dt := range p.DeviceTypes {
		w.str(dt.Name)
		w.int(dt.Code)
	}
	w.uint(uint64(len(p.Exprs)))
	for _, x := range p.Exprs {
		w.uint(uint64(x.Root))
		w.pos(x.Pos)
		w.str(x.Source)
	}
	w.uint(uint64(len(p.Nodes)))
	for _, n := range p.Nodes {
		w.b = append(w.b, byte(n.Op), byte(n.Func))
		w.uint(uint64(len(n.Args)))
		for _, a := range n.Args {
			w.uint(uint64(a))
		}
		switch n.Op {
		case OpConst, OpSelect:
			if err := w.value(n.Const); err != nil {
				return err
			}
		case OpSlot:
			w.uint(uint64(n.Slot))
		case OpFold:
			w.uint(uint64(n.Slot))
			w.uint(uint64(n.Slot2))
		}
		w.uint(uint64(n.Line))
		w.uint(uint64(n.Column))
	}
	w.uint(uint64(len(p.Values)))
	for _, v := range p.Values {
		w.str(v.Name)
		w.int(int64(v.Expr))
		w.int(int64(v.Import))
		w.pos(v.Pos)
	}
	w.uint(uint64(len(p.Rules)))
	for _, r := range p.Rules {
		w.str(r.ID)
		w.pos(r.Pos)
		w.str(r.Raise)
		for _, x := range []int{r.When, r.Message, r.Type, r.DeviceID, r.Copy, r.Capsule, r.Flags} {
			w.int(int64(x))
		}
	}
	w.uint(uint64(len(p.Imports)))
	for _, imp := range p.Imports {
		if err := w.plan(imp); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) pos(p Position) {
	w.str(p.File)
	w.uint(uint64(p.Line))
	w.uint(uint64(p.Column))
}

func (w *writer) typ(t *Type) {
	nullable := byte(0)
	if t.Nullable {
		nullable = 1
	}
	w.b = append(w.b, byte(t.Kind), nullable)
	w.str(t.Text)
	if t.Kind == KindList || t.Kind == KindMap {
		w.typ(t.Elem)
	}
}

func (w *writer) value(v any) error {
	switch x := v.(type) {
	case nil:
		w.b = append(w.b, tagNull)
	case bool:
		if x {
			w.b = append(w.b, tagTrue)
		} else {
			w.b = append(w.b, tagFalse)
		}
	case int64:
		w.b = append(w.b, tagInt)
		w.int(x)
	case uint64:
		w.b = append(w.b, tagUint)
		w.uint(x)
	case float64:
		w.b = appendUint64LE(append(w.b, tagDouble), math.Float64bits(x))
	case string:
		w.b = append(w.b, tagString)
		w.str(x)
	case []any:
		w.b = append(w.b, tagList)
		w.uint(uint64(len(x)))
		for _, e := range x {
			if err := w.value(e); err != nil {
				return err
			}
		}
	case *Map:
		w.b = append(w.b, tagMap)
		w.uint(uint64(len(x.Keys)))
		for i := range x.Keys {
			if err := w.value(x.Keys[i]); err != nil {
				return err
			}
			if err := w.value(x.Vals[i]); err != nil {
				return err
			}
		}
	case map[string]any:
		w.b = append(w.b, tagObject)
		w.uint(uint64(len(x)))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			w.str(k)
			if err := w.value(x[k]); err != nil {
				return err
			}
		}
	default:
		return errors.New("a plan cannot hold a value of this Go type: only JSON values and plan values")
	}
	return nil
}
