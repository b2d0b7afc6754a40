package interop

import (
	"context"
	"slices"

	"github.com/dlroute/dlroute/engine"
)

// Options choose the matrix's rows and columns.
type Options struct {
	// Producers and Consumers are rule-set refs (numpy, torch@v1,
	// jax==0.10.2); empty: every library's default version (Libraries).
	Producers, Consumers []string
	// Args are from_dlpack's keyword arguments, as in Decide.
	Args engine.Input
	// Classes adds, after each producer's arrays, its ordinary array once
	// for each array class it can make (Classes): bool, 0-d,
	// negative-stride, requires_grad, ...
	Classes bool
	// Memo keeps the consumers' requests explained, for the next Decide
	// that shares it; nil: a Memo of this Decide's own.
	Memo *Memo
}

// Matrix is every exchange of the chosen producers' arrays into the
// chosen consumers.
type Matrix struct {
	Consumers []string // the consumers' refs, in the order of each row's cells
	Rows      []Row
}

// Row is one producer's array, and its exchange into each consumer.
type Row struct {
	Producer string
	Array    Array
	Cells    []Cell // one per consumer, in Matrix.Consumers's order
	// CExchange is how the array's type exposes DLPack 1.3's C exchange
	// API (Producer.CExchange); empty where it does not.
	CExchange []CExchangeAPI
}

// Decide decides the matrix of cat. Every producer's arrays are decided
// into every consumer, a producer's rows in its Arrays' order; a cell
// that raises carries its remedy (FindRemedy).
func (o Options) Decide(ctx context.Context, cat *engine.Catalog) (*Matrix, error) {
	prodRefs, consRefs := o.Producers, o.Consumers
	if len(prodRefs) == 0 || len(consRefs) == 0 {
		allP, allC := Libraries(cat)
		if len(prodRefs) == 0 {
			prodRefs = allP
		}
		if len(consRefs) == 0 {
			consRefs = allC
		}
	}
	m := &Matrix{}
	memo := o.Memo
	if memo == nil {
		memo = NewMemo()
	}
	var consumers []*Consumer
	for _, ref := range consRefs {
		c, err := NewConsumer(cat, ref)
		if err != nil {
			return nil, err
		}
		c.memo = memo
		consumers = append(consumers, c)
		m.Consumers = append(m.Consumers, c.Ref)
	}
	rem := newRemedies(cat)
	for _, ref := range prodRefs {
		p, err := NewProducer(ctx, cat, ref)
		if err != nil {
			return nil, err
		}
		arrays := p.Arrays
		if o.Classes {
			arrays = append(slices.Clip(arrays), classArrays(p)...)
		}
		for _, a := range arrays {
			row, err := decideRow(ctx, p, a, consumers, o.Args, rem)
			if err != nil {
				return nil, err
			}
			m.Rows = append(m.Rows, row)
		}
	}
	return m, nil
}

// decideRow is p's array a decided into each consumer, from_dlpack(x,
// **args), each cell with its remedy (rem), and the C exchange API its
// type exposes. An error is Decide's, or the remedy's: the rules cannot
// answer.
func decideRow(ctx context.Context, p *Producer, a Array, consumers []*Consumer, args engine.Input, rem *remedies) (Row, error) {
	row := Row{Producer: p.Ref, Array: a}
	var err error
	if row.CExchange, err = p.CExchange(ctx, a); err != nil {
		return Row{}, err
	}
	for _, c := range consumers {
		cell, err := Decide(ctx, p, a, c, args)
		if err != nil {
			return Row{}, err
		}
		if cell.Remedy, err = rem.find(ctx, p, a, c, args, cell); err != nil {
			return Row{}, err
		}
		row.Cells = append(row.Cells, cell)
	}
	return row, nil
}

// Warnings are the release warnings of the matrix's refs, each once, in
// the order the cells meet them.
func (m *Matrix) Warnings() []*engine.ReleaseWarning {
	var out []*engine.ReleaseWarning
	seen := map[string]bool{}
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			for _, w := range c.Checked.Warnings() {
				if key := w.Ref + " " + w.RuleSet; !seen[key] {
					seen[key] = true
					out = append(out, w)
				}
			}
		}
	}
	return out
}

// Versions are the rule-set versions of the matrix's cells, producers'
// then consumers', in the order the cells meet them (repeated).
func (m *Matrix) Versions() []VersionCheck {
	var producers, consumers []VersionCheck
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			producers = append(producers, c.Checked.Producer...)
			consumers = append(consumers, c.Checked.Consumer...)
		}
	}
	return append(producers, consumers...)
}

// Cells counts the matrix's cells, and RunCells those whose both sides
// were run here against a real release (Checked.Run).
func (m *Matrix) Cells() int {
	n := 0
	for _, r := range m.Rows {
		n += len(r.Cells)
	}
	return n
}

func (m *Matrix) RunCells() int {
	n := 0
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Checked.Run {
				n++
			}
		}
	}
	return n
}
