package playground

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
	shipped "github.com/dlroute/dlroute/rules"
)

// interop.json is `dlroute interop --json` of the rules served, as one
// document the page draws as a grid (interop.js):
//
//	{"source": ..., "revision": ..., "call": "from_dlpack(x)",
//	 "consumers": ["cupy@v1", ...],
//	 "rows": [{"producer": "jax@v3", "platform": "gpu <unknown>", "memory": "device",
//	           "cells": [{"outcome": "error", "short": "BufferError: ...", "error": {...},
//	                      "steps": [{"ref": "jax@v3", "call": "__dlpack_device__",
//	                                 "attempt": 1, "input": {...}, "decision": {...}}],
//	                      "checked": {"run": false, "producer": [...], "consumer": [...]},
//	                      "lane": "dlpack", "other_lane": ..., "remedy": {"kind": ..., "fix": ..., "outcome": ...}}]}]}
//
// or, where the rules served do not load or cannot decide the matrix,
// {"source": ..., "revision": ..., "error": "..."} and no rows. It is
// decided natively, by package internal/interop, so that the grid is the
// command line's matrix; the page decides a cell's step again, with its
// own rules, when the person opens it. It is computed after each
// Publish, in the background, within InteropTimeout: the page asks for it
// as it loads.

// interopShortWidth is the cut of a cell's short text: the command line's
// default --width, so that the grid and README's table read alike.
const interopShortWidth = 44

type interopDoc struct {
	Source    string       `json:"source"`
	Revision  string       `json:"revision,omitempty"`
	Call      string       `json:"call"`
	Consumers []string     `json:"consumers"`
	Rows      []interopRow `json:"rows"`
	// Copies are the same matrix for from_dlpack(x, copy=True) and
	// copy=False, whose rows and consumers are the document's, in order:
	// the page's question asks with copy as well as without.
	Copies []interopCopy `json:"copies,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// interopCopy is the matrix decided with from_dlpack's copy argument.
type interopCopy struct {
	Copy  bool            `json:"copy"`
	Call  string          `json:"call"`
	Cells [][]interopCell `json:"cells"` // by row, then consumer, as the document's
}

type interopRow struct {
	Producer string `json:"producer"`
	// Older is a row of a version of the producer other than its default:
	// the question on the first screen asks of every version, the grid
	// shows the default versions'.
	Older    bool          `json:"older,omitempty"`
	Platform string        `json:"platform"`
	Memory   string        `json:"memory"`
	Cells    []interopCell `json:"cells"` // in the order of the document's consumers
}

type interopCell struct {
	Outcome interop.Outcome   `json:"outcome"`
	Short   string            `json:"short"` // Cell.Short(interopShortWidth)
	Error   *engine.Exception `json:"error,omitempty"`
	Device  *interop.Device   `json:"device,omitempty"`
	Steps   []interopStep     `json:"steps"`
	// Checked is what each side's versions were checked against
	// (interop.Checked): the grid's mark of a cell run here on both sides.
	Checked interop.Checked `json:"checked"`
	// Lane, OtherLane and Remedy are the cell's (interop.Cell): how the
	// consumer reaches the array, what the other way would come to where
	// it differs, and the fix of an exchange that raises or reads
	// silently different values. The page shows them when a cell is
	// opened; a matrix that leaves them out is drawn without them.
	Lane      interop.Lane    `json:"lane,omitempty"`
	OtherLane interop.Outcome `json:"other_lane,omitempty"`
	Remedy    *interop.Remedy `json:"remedy,omitempty"`
}

// interopStep is an interop.Step with the ref of the rule set asked, the
// version the page selects to decide the step again.
type interopStep struct {
	Ref string `json:"ref"`
	interop.Step
}

// InteropTimeout bounds the deciding of interop.json when
// Options.InteropTimeout is 0: rules served with --rules are anyone's,
// and the matrix is decided for every version of every producer, asked
// or not. The shipped rules' matrix, their load included, takes 1.1 s
// natively and 7.8 s under the race detector on a 2-core machine
// (BenchmarkInteropJSON): this is over twenty times the one and nearly
// four times the other (playground/RATIONALE.md,
// "Why is the playground's matrix bounded in time?"). Past it,
// interop.json is a document with an error, and the page shows no grid.
const InteropTimeout = 30 * time.Second

// interopJSON decides the matrix of rules and writes interop.json. Rules
// that do not load, or cannot decide it before ctx ends, are a document
// with an error: the page says why there is no grid, as it marks the
// errors in its editors.
func interopJSON(ctx context.Context, rules fs.FS, st rulesState) ([]byte, error) {
	doc := interopDoc{Source: st.source, Revision: st.revision, Call: "from_dlpack(x)", Consumers: []string{}, Rows: []interopRow{}}
	err := decideInterop(ctx, rules, &doc)
	if ctx.Err() != nil {
		err = fmt.Errorf("the interop matrix was not decided: %w", context.Cause(ctx))
	}
	if err != nil {
		doc.Consumers, doc.Rows, doc.Copies, doc.Error = []string{}, []interopRow{}, nil, err.Error()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<unknown>" reads as itself, as the engine writes it
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func decideInterop(ctx context.Context, rules fs.FS, doc *interopDoc) error {
	cat, err := engine.Load(rules, engine.Options{TrustParsed: shipped.Embedded(rules), Cache: loads})
	if err != nil {
		return err
	}
	memo := interop.NewMemo() // one request is asked again in every matrix below
	m, err := interop.Options{Memo: memo}.Decide(ctx, cat)
	if err != nil {
		return err
	}
	doc.Consumers = append(doc.Consumers, m.Consumers...)
	// The default versions' rows, then each other version's that the
	// matrix can decide (a version too old to answer every call has none).
	matrices := []*interop.Matrix{m}
	for _, ref := range olderProducers(cat, m) {
		if mo, err := (interop.Options{Producers: []string{ref}, Consumers: m.Consumers, Memo: memo}).Decide(ctx, cat); err == nil {
			matrices = append(matrices, mo)
		}
	}
	for i, mx := range matrices {
		for _, r := range mx.Rows {
			row := interopRow{Producer: r.Producer, Older: i > 0, Platform: r.Array.Platform, Memory: r.Array.Memory, Cells: []interopCell{}}
			for _, c := range r.Cells {
				row.Cells = append(row.Cells, cellOf(c))
			}
			doc.Rows = append(doc.Rows, row)
		}
	}
	// copy=True and copy=False, row for row; a consumer that does not
	// take the argument makes the matrix an error: no such variant.
	for _, copy := range []bool{true, false} {
		v := interopCopy{Copy: copy, Call: "from_dlpack(x, copy=False)", Cells: [][]interopCell{}}
		if copy {
			v.Call = "from_dlpack(x, copy=True)"
		}
		for i, mx := range matrices {
			o := interop.Options{Consumers: m.Consumers, Args: engine.Input{"copy": copy}, Memo: memo}
			if i > 0 {
				o.Producers = []string{mx.Rows[0].Producer}
			}
			mc, err := o.Decide(ctx, cat)
			if err != nil || len(mc.Rows) != len(mx.Rows) {
				v.Cells = nil
				break
			}
			for _, r := range mc.Rows {
				cells := []interopCell{}
				for _, c := range r.Cells {
					cells = append(cells, cellOf(c))
				}
				v.Cells = append(v.Cells, cells)
			}
		}
		if v.Cells != nil {
			doc.Copies = append(doc.Copies, v)
		}
	}
	return nil
}

// olderProducers are the versions of m's producers other than the
// default ones, newest first.
func olderProducers(cat *engine.Catalog, m *interop.Matrix) []string {
	defaults := map[string]string{} // name -> default ref
	for _, r := range m.Rows {
		defaults[strings.SplitN(r.Producer, "@", 2)[0]] = r.Producer
	}
	var out []string
	sets := cat.RuleSets()
	for i := len(sets) - 1; i >= 0; i-- {
		rs := sets[i]
		if def, ok := defaults[rs.Name()]; ok && rs.Ref() != def {
			out = append(out, rs.Ref())
		}
	}
	return out
}

// cellOf is a cell of the matrix as interop.json writes it.
func cellOf(c interop.Cell) interopCell {
	cell := interopCell{Outcome: c.Outcome, Short: c.Short(interopShortWidth), Error: c.Error, Device: c.Device, Checked: c.Checked,
		Lane: c.Lane, OtherLane: c.OtherLane, Remedy: c.Remedy}
	for _, s := range c.Steps {
		cell.Steps = append(cell.Steps, interopStep{Ref: s.Decision.RuleSet, Step: s})
	}
	return cell
}

// interopSite is interop.json of the rules published last, decided when
// first asked for, within its timeout.
type interopSite struct {
	timeout time.Duration // Options.InteropTimeout, or InteropTimeout
	mu      sync.Mutex
	current *interopDecision
}

// interopDecision is interop.json of one publish: decided once, by the
// first to ask; the others wait for it.
type interopDecision struct {
	rules    fs.FS
	state    rulesState
	ctx      context.Context // ended by the next publish
	cancel   context.CancelCauseFunc
	once     sync.Once
	resource *resource
	err      error
}

// errRepublished ends the deciding of rules that a publish replaced.
var errRepublished = errors.New("newer rules were published")

// publish makes rules, named by st, the ones interop.json decides, and
// starts deciding it: the page asks for it as it loads, to answer its
// question on the first screen. The deciding of the rules before stops:
// nobody will ask for their matrix. It does not wait for it.
func (s *interopSite) publish(rules fs.FS, st rulesState) {
	ctx, cancel := context.WithCancelCause(context.Background())
	d := &interopDecision{rules: rules, state: st, ctx: ctx, cancel: cancel}
	s.mu.Lock()
	if s.current != nil {
		s.current.cancel(errRepublished)
	}
	s.current = d
	s.mu.Unlock()
	go d.get(s.timeout)
}

// get returns interop.json of the rules published last, deciding it once
// per publish; concurrent requests wait for the one that decides.
func (s *interopSite) get() (*resource, error) {
	s.mu.Lock()
	d := s.current
	s.mu.Unlock()
	return d.get(s.timeout)
}

func (d *interopDecision) get(timeout time.Duration) (*resource, error) {
	d.once.Do(func() {
		ctx, cancel := context.WithTimeoutCause(d.ctx, cmp.Or(timeout, InteropTimeout), fmt.Errorf("it took longer than %v", cmp.Or(timeout, InteropTimeout)))
		defer cancel()
		defer d.cancel(nil)
		var data []byte
		if data, d.err = interopJSON(ctx, d.rules, d.state); d.err == nil {
			d.resource, d.err = newResource("interop.json", data, nil)
		}
	})
	return d.resource, d.err
}
