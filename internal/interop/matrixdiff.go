package interop

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// CellChange is one cell of the matrix that an edit of the rules changes:
// the same producer library's array into the same consumer library, before
// (From) and after (To).
//
// Cells are paired by library and array, not by ref: a version bump
// (torch@v3 to torch@v4) changes every ref and no cell by itself. A cell
// on one side only (a new library, an array the rules now tell apart) has
// a nil From (added) or To (removed).
type CellChange struct {
	// Producer and Consumer are the libraries' rule-set names, such as
	// "jax" and "jax-import".
	Producer string `json:"producer"`
	Consumer string `json:"consumer"`
	// Array is the producer's array, as the side that has it names it
	// (From's where both do).
	Array Array `json:"array"`
	From  *Cell `json:"from,omitempty"`
	To    *Cell `json:"to,omitempty"`
	// Differs names what changed, in this order: "outcome", "error"
	// (its type or message), "device", "lane", "other_lane", "remedy";
	// nil for a cell added or removed.
	Differs []string `json:"differs,omitempty"`
}

// DiffMatrices is the cells of old and new that differ, in the matrix's
// order: by producer library, its ordinary arrays by platform and memory,
// then its array classes in Classes's order, then by consumer library.
// Two cells differ in what CellChange.Differs names; their steps,
// versions and what the versions were checked against are not compared.
func DiffMatrices(old, new *Matrix) []CellChange {
	before, after := cellsByPlace(old), cellsByPlace(new)
	var out []CellChange
	for k, from := range before {
		to, ok := after[k]
		if !ok {
			out = append(out, CellChange{Producer: k.producer, Consumer: k.consumer, Array: from.array, From: from.cell})
			continue
		}
		if differs := cellDiffers(from.cell, to.cell); len(differs) > 0 {
			out = append(out, CellChange{Producer: k.producer, Consumer: k.consumer, Array: from.array, From: from.cell, To: to.cell, Differs: differs})
		}
	}
	for k, to := range after {
		if _, ok := before[k]; !ok {
			out = append(out, CellChange{Producer: k.producer, Consumer: k.consumer, Array: to.array, To: to.cell})
		}
	}
	slices.SortFunc(out, func(a, b CellChange) int {
		return cmp.Or(cmp.Compare(a.Producer, b.Producer), compareArrays(a.Array, b.Array), cmp.Compare(a.Consumer, b.Consumer))
	})
	return out
}

// place is where a cell is in a matrix, whatever the versions: the
// libraries, and the array as a row names it. nth tells apart two rows of
// one producer that a person would read alike.
type place struct {
	producer, platform, memory, class string
	nth                               int
	consumer                          string
}

// placed is a cell and the array of its row.
type placed struct {
	cell  *Cell
	array Array
}

func cellsByPlace(m *Matrix) map[place]placed {
	out := map[place]placed{}
	rows := map[place]int{}
	for i := range m.Rows {
		r := &m.Rows[i]
		row := rowPlace(r)
		row.nth = rows[row]
		rows[row]++
		for j := range r.Cells {
			k := row
			k.consumer = library(r.Cells[j].Consumer)
			out[k] = placed{&r.Cells[j], r.Array}
		}
	}
	return out
}

func rowPlace(r *Row) place {
	return place{producer: library(r.Producer), platform: r.Array.Platform, memory: r.Array.Memory, class: r.Array.Class}
}

// library is the rule-set name of a ref: jax of jax@v3, jax==0.10.2 or jax.
func library(ref string) string {
	if i := strings.IndexAny(ref, "@="); i >= 0 {
		return ref[:i]
	}
	return ref
}

// compareArrays orders arrays as a producer's rows are: the ordinary
// arrays by platform and memory, then the classes in Classes's order.
func compareArrays(a, b Array) int {
	class := func(a Array) int {
		return slices.IndexFunc(Classes, func(c ArrayClass) bool { return c.Name == a.Class })
	}
	return cmp.Or(cmp.Compare(class(a), class(b)),
		cmp.Compare(strings.ToLower(a.Platform), strings.ToLower(b.Platform)), cmp.Compare(a.Memory, b.Memory))
}

// cellDiffers names what a user would see change between two cells.
func cellDiffers(a, b *Cell) []string {
	var out []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"outcome", a.Outcome == b.Outcome},
		{"error", reflect.DeepEqual(a.Error, b.Error)},
		{"device", reflect.DeepEqual(a.Device, b.Device)},
		{"lane", a.Lane == b.Lane},
		{"other_lane", a.OtherLane == b.OtherLane},
		{"remedy", reflect.DeepEqual(a.Remedy, b.Remedy)},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}

// MatrixSide is one side of a matrix diff: the rules, and the options
// that choose the matrix's rows and columns.
type MatrixSide struct {
	Catalog *engine.Catalog
	Options Options
}

// DiffCatalogs decides the matrix of each side (Options.Decide) and
// returns both with DiffMatrices of the two. Before they are compared,
// each side's producers are also asked about the arrays that only the
// other side's rows name, where their rules describe such an array: a
// marker that makes an unknown GPU platform known groups that array with
// a known one (Producer.Arrays keeps one array per way it is answered),
// and the diff shows the cells that change, not a row removed. Such rows
// are added at the end of the matrix's rows.
func DiffCatalogs(ctx context.Context, old, new MatrixSide) (before, after *Matrix, changes []CellChange, err error) {
	done := make(chan error, 1)
	go func() { // the two sides are independent: decide them at once
		var err error
		before, err = old.Options.Decide(ctx, old.Catalog)
		done <- err
	}()
	after, err = new.Options.Decide(ctx, new.Catalog)
	if err := <-done; err != nil {
		return nil, nil, nil, err
	}
	if err != nil {
		return nil, nil, nil, err
	}
	oldRows, newRows := before.Rows, after.Rows
	if err := addRows(ctx, new, after, oldRows); err != nil {
		return nil, nil, nil, err
	}
	if err := addRows(ctx, old, before, newRows); err != nil {
		return nil, nil, nil, err
	}
	return before, after, DiffMatrices(before, after), nil
}

// addRows adds to m, the matrix of side s, a row for each array of rows
// that m has no row of, where m's producer of that library can be asked
// about it: its rules declare the array's inputs and decide it into every
// consumer.
func addRows(ctx context.Context, s MatrixSide, m *Matrix, rows []Row) error {
	has := map[place]bool{}
	producers := map[string]string{} // library -> ref
	for i := range m.Rows {
		has[rowPlace(&m.Rows[i])] = true
		producers[library(m.Rows[i].Producer)] = m.Rows[i].Producer
	}
	var consumers []*Consumer
	made := map[string]*Producer{}
	rem := newRemedies(s.Catalog) // the side's fixed exchanges, decided once
	for i := range rows {
		r := &rows[i]
		ref, ok := producers[library(r.Producer)]
		if !ok || has[rowPlace(r)] {
			continue
		}
		has[rowPlace(r)] = true
		p := made[ref]
		if p == nil {
			var err error
			if p, err = NewProducer(ctx, s.Catalog, ref); err != nil {
				return err
			}
			made[ref] = p
		}
		if consumers == nil {
			for _, c := range m.Consumers {
				cons, err := NewConsumer(s.Catalog, c)
				if err != nil {
					return err
				}
				consumers = append(consumers, cons)
			}
		}
		row, ok, err := askAbout(ctx, s, p, r.Array, consumers, rem)
		if err != nil {
			return err
		}
		if ok {
			m.Rows = append(m.Rows, row)
		}
	}
	return nil
}

// askAbout is p's row for another version's array a, each cell with its
// remedy as Options.Decide gives it, or false where p's rules cannot
// answer for a (an input p does not declare).
func askAbout(ctx context.Context, s MatrixSide, p *Producer, a Array, consumers []*Consumer, rem *remedies) (Row, bool, error) {
	in, err := p.input(CallDevice, a, nil, nil)
	if err != nil {
		return Row{}, false, nil
	}
	if _, err := p.device.Resolve(ctx, in); err != nil {
		return Row{}, false, ctx.Err()
	}
	row, err := decideRow(ctx, p, a, consumers, s.Options.Args, rem)
	if err != nil {
		return Row{}, false, ctx.Err()
	}
	return row, true, nil
}

// At is o with rule set rs at its version: rs's library, among o's
// producers and consumers (every library of cat's default version where o
// names none, as Decide takes them), is named by rs's ref; a version of
// jax-import is JAX's from_dlpack. ok is false where rs is no producer's
// or consumer's rule set there (jax-export, exchange).
func (o Options) At(cat *engine.Catalog, rs *engine.RuleSet) (_ Options, ok bool) {
	producers, consumers := o.Producers, o.Consumers
	if len(producers) == 0 || len(consumers) == 0 {
		allP, allC := Libraries(cat)
		if len(producers) == 0 {
			producers = allP
		}
		if len(consumers) == 0 {
			consumers = allC
		}
	}
	pin := func(refs []string, name string) []string {
		out := slices.Clone(refs)
		for i, ref := range out {
			if library(ref) == name {
				out[i], ok = rs.Ref(), true
			}
		}
		return out
	}
	o.Producers = pin(producers, rs.Name())
	consumerName := rs.Name()
	if consumerName == jaxImport {
		consumerName = "jax"
	}
	o.Consumers = pin(consumers, consumerName)
	return o, ok
}

// String is the change as "jax gpu <unknown> device into torch", the
// class after the memory where there is one.
func (c CellChange) String() string {
	s := fmt.Sprintf("%s %s %s", c.Producer, c.Array.Platform, c.Array.Memory)
	if c.Array.Class != "" {
		s += " " + c.Array.Class
	}
	return s + " into " + c.Consumer
}
