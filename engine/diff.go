package engine

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultMaxInputs is the most inputs Diff tries when DiffOptions.MaxInputs
// is 0: a few seconds of work on one core, two decisions an input.
const DefaultMaxInputs = 1_000_000

// DefaultDiffExamples is how many example inputs each group of a
// DiffReport shows when DiffOptions.Examples is 0.
const DefaultDiffExamples = 3

// DiffOptions configure Diff. The zero value is the documented defaults.
type DiffOptions struct {
	// MaxInputs bounds the inputs Diff tries: a larger domain is refused
	// with CodeDomainTooLarge before anything is decided. 0 means
	// DefaultMaxInputs.
	MaxInputs int
	// Examples is how many inputs each group shows, the first in the
	// domain's order. 0 means DefaultDiffExamples; a negative value, none.
	Examples int
	// Progress, when set, is told how many of the total inputs are
	// decided, each time another hundredth of them is, the last time
	// with done == total. Calls come from Diff's goroutines one at a
	// time, with done increasing; Diff waits for each.
	Progress func(done, total int)

	// domain, when set, is the inputs to try instead of deriveDomain's:
	// the tests' narrowed domains.
	domain *Domain
}

// DiffReport is what Diff found: every input of the domain it tried, and
// those whose answers differ, grouped by how they change.
type DiffReport struct {
	From   string  `json:"from"`   // the first rule set's ref, such as "jax@v2"
	To     string  `json:"to"`     // the second's
	Domain *Domain `json:"domain"` // the inputs tried, derived from the rules of both

	Tried   int         `json:"tried"`   // the domain's size: every input was tried
	Changed int         `json:"changed"` // the inputs whose answers differ
	Groups  []DiffGroup `json:"groups"`  // ordered by their first input in the domain
}

// DiffGroup is the inputs whose answer changes from one outcome to
// another: from gpu-unknown-platform: BufferError to gpu: kDLOneAPI, say.
// The same outcome on both sides is a change in a message or a device id.
type DiffGroup struct {
	From  Outcome `json:"from"`
	To    Outcome `json:"to"`
	Count int     `json:"count"`
	// Differs names the fields of the answers that differ, for some input
	// of the group: "rule", "device_type", "device_id", "error.type",
	// "error.message", "failure".
	Differs  []string      `json:"differs"`
	Examples []DiffExample `json:"examples"`
}

// DiffExample is one input of a group and the two answers to it.
type DiffExample struct {
	Input Input  `json:"input"`
	From  Answer `json:"from"`
	To    Answer `json:"to"`

	names []string // the domain's input order, for InputJSON
}

// InputJSON is the example's input as one line of JSON, its fields in the
// order the rule sets declare them.
func (x DiffExample) InputJSON() string {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, name := range x.names {
		v, ok := x.Input[name]
		if !ok {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := marshalJSON(name)
		val, _ := marshalJSON(v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.String()
}

// MarshalJSON writes {"input":{...},"from":...,"to":...}, the input's
// fields in declared order.
func (x DiffExample) MarshalJSON() ([]byte, error) {
	if x.names == nil {
		type plain DiffExample
		return marshalJSON(plain(x))
	}
	from, err := x.From.MarshalJSON()
	if err != nil {
		return nil, err
	}
	to, err := x.To.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"input":%s,"from":%s,"to":%s}`, x.InputJSON(), from, to), nil
}

// Diff decides every input of the domain deriveDomain derives from a and b
// with both, and reports the inputs whose answers differ (Answer.Equal),
// grouped by their outcomes on either side (Answer.Outcome). An input one
// rule set does not declare is left out of what that rule set is given.
// An input a rule set refuses, or one its rules fail on, is an answer too.
//
// The inputs are decided by GOMAXPROCS goroutines, without the rule sets'
// memos: every input is new, and remembering them would only push out
// what a host remembers. The report is the same for every run and every
// number of goroutines. Diff refuses a domain larger than
// DiffOptions.MaxInputs with CodeDomainTooLarge, and stops with
// CodeCanceled when ctx ends.
func Diff(ctx context.Context, a, b *RuleSet, opts DiffOptions) (*DiffReport, error) {
	dom := opts.domain
	if dom == nil {
		dom = deriveDomain(a, b)
	}
	n := dom.Size()
	if limit := cmp.Or(opts.MaxInputs, DefaultMaxInputs); n > limit {
		size := fmt.Sprint(n)
		if n == math.MaxInt {
			size = "too many"
		}
		return nil, &Error{Code: CodeDomainTooLarge,
			Message: fmt.Sprintf("the rules of %s and %s give %s inputs to try (%s), more than the limit of %d", a.ref, b.ref, size, dom.factors(), limit),
			Hint:    "raise the limit (DiffOptions.MaxInputs, or dlroute diff --max-inputs N); each input costs a decision from both rule sets"}
	}
	keep := opts.Examples
	switch {
	case keep == 0:
		keep = DefaultDiffExamples
	case keep < 0:
		keep = 0
	}
	run := &diffRun{dom: dom, sets: [2]*RuleSet{a, b}, n: n, keep: keep, progress: opts.Progress}
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+diffChunk-1)/diffChunk))
	tallies := make([]map[transition]*tally, workers)
	var wg sync.WaitGroup
	for w := range tallies {
		wg.Go(func() { tallies[w] = run.work(ctx) })
	}
	wg.Wait()
	if run.stopped.Load() {
		err := cmp.Or(ctx.Err(), context.Canceled)
		return nil, &Error{Code: CodeCanceled, Message: err.Error(), err: err}
	}
	return run.report(tallies), nil
}

// diffChunk is how many inputs a worker takes at a time.
const diffChunk = 64

// diffRun is one Diff in progress.
type diffRun struct {
	dom     *Domain
	sets    [2]*RuleSet
	n, keep int
	next    atomic.Int64 // the first input no worker has taken
	stopped atomic.Bool  // the context ended before every input was tried

	progress  func(done, total int)
	done      atomic.Int64 // inputs decided
	mu        sync.Mutex   // held while progress runs
	hundredth int          // the last hundredth told to progress, under mu
}

// decided counts k more inputs decided, and tells progress when that
// passes another hundredth. A worker that adds less can only reach the
// lock after one that adds more and is then silent: done never goes back.
func (r *diffRun) decided(k int) {
	if r.progress == nil {
		return
	}
	done := int(r.done.Add(int64(k)))
	h := int(int64(done) * 100 / int64(r.n))
	r.mu.Lock()
	defer r.mu.Unlock()
	if h > r.hundredth { // 100 only at done == r.n
		r.hundredth = h
		r.progress(done, r.n)
	}
}

type transition struct{ from, to Outcome }

// tally is one worker's count of a transition, with its first inputs.
type tally struct {
	count  int
	fields fieldSet
	first  int
	hits   []diffHit // at most keep, in domain order
}

type diffHit struct {
	index    int
	from, to Answer
}

// work decides chunks of inputs until none is left or ctx ends. A worker
// takes its chunks in increasing order, so the first hits it keeps are
// its earliest.
func (r *diffRun) work(ctx context.Context) map[transition]*tally {
	out := map[transition]*tally{}
	var ins [2]Input
	var skip [2][]bool
	for s, rs := range r.sets {
		ins[s] = Input{}
		for _, in := range r.dom.Inputs {
			skip[s] = append(skip[s], !rs.isInput(in.Name))
		}
	}
	var buf [256]byte
	for {
		start := int(r.next.Add(diffChunk)) - diffChunk
		if start >= r.n {
			return out
		}
		if ctx.Err() != nil { // evaluate checks it too, but a refused input is never evaluated
			r.stopped.Store(true)
			return out
		}
		end := min(start+diffChunk, r.n)
		for i := start; i < end; i++ {
			var ans [2]Answer
			for s, rs := range r.sets {
				r.dom.input(i, ins[s], skip[s])
				ans[s] = rs.decideFresh(ctx, ins[s], buf[:0])
				if ans[s].Err != nil && ans[s].Err.Code == CodeCanceled {
					r.stopped.Store(true)
					return out
				}
			}
			if ans[0].Equal(ans[1]) {
				continue
			}
			t := transition{ans[0].Outcome(), ans[1].Outcome()}
			tl := out[t]
			if tl == nil {
				tl = &tally{first: i}
				out[t] = tl
			}
			tl.count++
			tl.fields |= fieldsOf(ans[0], ans[1])
			if len(tl.hits) < r.keep {
				tl.hits = append(tl.hits, diffHit{i, ans[0], ans[1]})
			}
		}
		r.decided(end - start)
	}
}

// decideFresh is Resolve without the memo.
func (rs *RuleSet) decideFresh(ctx context.Context, in Input, buf []byte) Answer {
	if _, err := rs.check(buf, in); err != nil {
		return answerOf(Decision{}, err)
	}
	if err := rs.checkUTF8(in); err != nil {
		return answerOf(Decision{}, err)
	}
	return answerOf(rs.evaluate(ctx, in, nil))
}

// report merges the workers' tallies into groups in domain order.
func (r *diffRun) report(tallies []map[transition]*tally) *DiffReport {
	rep := &DiffReport{From: r.sets[0].ref, To: r.sets[1].ref, Domain: r.dom, Tried: r.n, Groups: []DiffGroup{}}
	merged := map[transition]*tally{}
	for _, m := range tallies {
		for t, tl := range m {
			all := merged[t]
			if all == nil {
				all = &tally{first: tl.first}
				merged[t] = all
			}
			all.count += tl.count
			all.fields |= tl.fields
			all.first = min(all.first, tl.first)
			all.hits = append(all.hits, tl.hits...)
		}
	}
	names := make([]string, len(r.dom.Inputs))
	for i, in := range r.dom.Inputs {
		names[i] = in.Name
	}
	all := make([]bool, len(names))
	for _, t := range slices.SortedFunc(maps.Keys(merged), func(x, y transition) int { return cmp.Compare(merged[x].first, merged[y].first) }) {
		tl := merged[t]
		slices.SortFunc(tl.hits, func(x, y diffHit) int { return cmp.Compare(x.index, y.index) })
		g := DiffGroup{From: t.from, To: t.to, Count: tl.count, Differs: tl.fields.names(), Examples: []DiffExample{}}
		for _, h := range tl.hits[:min(len(tl.hits), r.keep)] {
			in := Input{}
			r.dom.input(h.index, in, all)
			g.Examples = append(g.Examples, DiffExample{Input: in, From: h.from, To: h.to, names: names})
		}
		rep.Changed += tl.count
		rep.Groups = append(rep.Groups, g)
	}
	return rep
}
