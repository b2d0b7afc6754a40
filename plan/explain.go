package plan

import (
	"math"
	"strconv"
)

// ExplainStepFactor is how many times its StepLimit an explanation may
// take: an explanation evaluates every value, the decision did not read
// and those of its imports' explanations too, at most once each when it
// succeeds, so it costs at most about twice a decision's bound; the
// factor leaves room for a failing value read more than once, and a
// plan whose bytes were tampered with still stops.
const ExplainStepFactor = 4

// ExplainJSON decides one JSON input object as Decide does and returns
// the JSON of its explanation, byte for byte what
// engine.RuleSet.ExplainJSON returns: {"decision":{...},"trace":{"rules":
// [...],"values":[...]}}, the rules tried in order, and every named value
// with what it evaluated to, whether the decision read it, and, for an
// import, the import's own explanation. Errors are Decide's, an input the
// plan refuses or an evaluation that could not decide, and CodeEval for
// a value JSON cannot write (an infinite or NaN double), with the
// engine's message.
func (p *Plan) ExplainJSON(line []byte) ([]byte, error) {
	out, err := p.AppendExplain(make([]byte, 0, 1024), line)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendExplain is ExplainJSON appending the explanation's JSON to dst.
// On an error it returns dst unchanged.
func (p *Plan) AppendExplain(dst, line []byte) ([]byte, error) {
	in, err := p.decodeInput(line, nil)
	if err != nil {
		return dst, err
	}
	limit := p.StepLimit * ExplainStepFactor
	if limit/ExplainStepFactor != p.StepLimit {
		limit = math.MaxUint64
	}
	var steps uint64
	x, err := p.explain(in, &steps, limit)
	if err != nil {
		return dst, err
	}
	w := &jsonWriter{b: dst}
	if w.explanation(x); w.bad != "" {
		// The engine's encoding/json fails on the value; so does this.
		return dst, &Error{Code: CodeEval, Message: w.bad}
	}
	return w.b, nil
}

// explanation is what engine.Explanation holds: the decision (zero
// where it failed) and its trace.
type explanation struct {
	p        *Plan
	decision Decision
	rules    []ruleStep
	values   []valueStep // by value index
}

// The steps are not comparable ([0]func()): the equality functions Go
// makes for comparable types grew the decision module.
type ruleStep struct {
	_       [0]func()
	rule    *Rule
	matched bool
	err     string // its condition failed to evaluate
}

type valueStep struct {
	_      [0]func()
	traced bool
	failed bool
	value  any    // when not failed
	err    string // the failure's message
	used   bool   // the decision read it
	imp    *explanation
}

// tracer records an evaluation for an explanation, as the engine's
// does.
type tracer struct {
	rules  []ruleStep
	values []valueStep
}

//go:noinline
func (t *tracer) rule(r *Rule, matched bool, err *Error) {
	step := ruleStep{rule: r, matched: matched && err == nil}
	if err != nil {
		step.err = err.Message
	}
	t.rules = append(t.rules, step)
}

// value records the first evaluation of value i.
//
//go:noinline
func (t *tracer) value(i int, v any, err *Error) {
	step := &t.values[i]
	if step.traced {
		return
	}
	step.traced = true
	if err != nil {
		step.failed, step.err = true, err.Message
	} else {
		step.value = v
	}
}

// explain decides a checked input as the engine's RuleSet.Explain does:
// the rules in order, recording each rule tried and each value computed;
// then, in a second frame that starts from the values computed, every
// value the decision did not read. The trace is whole even when the
// decision fails.
func (p *Plan) explain(in object, steps *uint64, limit uint64) (*explanation, *Error) {
	t := &tracer{values: make([]valueStep, len(p.Values))}
	first := p.newFrame(in, steps, limit, t)
	d, err := first.decide()
	x := &explanation{p: p, rules: t.rules, values: t.values}
	if err == nil {
		x.decision = d
	}
	for i := range t.values {
		t.values[i].used = t.values[i].traced
	}
	rest := p.newFrame(in, steps, limit, t)
	for i := range p.Values {
		if first.done[i] != nil {
			s := len(p.Inputs) + i
			rest.slots[s], rest.done[i] = first.slots[s], true
		}
	}
	for i := range p.Values {
		if !t.values[i].traced {
			rest.fatal = nil
			rest.slot(len(p.Inputs) + i)
		}
	}
	return x, err
}

// jsonWriter writes a decision's and an explanation's JSON. Its methods
// are not inlined: each inlined append grew the Go build of the
// decision module (plan/doc.go, "What it links").
type jsonWriter struct {
	b []byte
	// bad is encoding/json's message for a value it cannot write, which
	// fails the whole explanation.
	bad string
}

//go:noinline
func (w *jsonWriter) lit(s string) { w.b = append(w.b, s...) }

//go:noinline
func (w *jsonWriter) str(s string) { w.b = appendString(w.b, s) }

// html writes s quoted with HTML's characters escaped, as json.Marshal
// does.
//
//go:noinline
func (w *jsonWriter) html(s string) { w.b = appendQuoted(w.b, s, true) }

//go:noinline
func (w *jsonWriter) int64(n int64) { w.b = strconv.AppendInt(w.b, n, 10) }

//go:noinline
func (w *jsonWriter) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

// explanation writes x as engine.Explanation.MarshalJSON does, without
// HTML escaping.
func (w *jsonWriter) explanation(x *explanation) {
	w.lit(`{"decision":`)
	w.decision(&x.decision)
	w.lit(`,"trace":{"rules":`)
	if len(x.rules) == 0 {
		w.lit("null") // the engine's nil slice
	}
	for i, r := range x.rules {
		if i == 0 {
			w.lit(`[{"rule":`)
		} else {
			w.lit(`,{"rule":`)
		}
		w.str(r.rule.ID)
		w.lit(`,"matched":`)
		w.bool(r.matched)
		if r.err != "" {
			w.lit(`,"error":`)
			w.str(r.err)
		}
		w.position(r.rule.Pos)
		w.lit("}")
	}
	if len(x.rules) > 0 {
		w.lit("]")
	}
	w.lit(`,"values":[`)
	for i := range x.values {
		v := &x.values[i]
		if i > 0 {
			w.lit(",")
		}
		if !v.traced { // never: every value is computed; the engine's zero step
			w.lit(`{"name":"","value":null,"used":false}`)
			continue
		}
		decl := &x.p.Values[i]
		w.lit(`{"name":`)
		w.str(decl.Name)
		w.lit(`,"value":`)
		w.value(v.value, false)
		if v.err != "" {
			w.lit(`,"error":`)
			w.str(v.err)
		}
		w.lit(`,"used":`)
		w.bool(v.used)
		w.position(decl.Pos)
		if v.imp != nil {
			w.lit(`,"import":`)
			if w.explanation(v.imp); w.bad != "" {
				w.bad = "json: error calling MarshalJSON for type *engine.Explanation: " + w.bad
			}
		}
		if w.bad != "" {
			return
		}
		w.lit("}")
	}
	w.lit("]}}")
}

func (w *jsonWriter) position(p Position) {
	w.lit(`,"position":{"file":`)
	w.str(p.File)
	w.lit(`,"line":`)
	w.int64(int64(p.Line))
	w.lit(`,"column":`)
	w.int64(int64(p.Column))
	w.lit("}")
}

// value writes a value as encoding/json writes the engine's nativeValue
// of it, or, with sprint, as fmt.Sprint does (a map's keys): a list as
// [a b], a map as map[k:v].
func (w *jsonWriter) value(v any, sprint bool) {
	sep := ","
	if sprint {
		sep = " "
	}
	switch x := v.(type) {
	case nil:
		if sprint {
			w.lit("<nil>")
		} else {
			w.lit("null")
		}
	case bool:
		w.bool(x)
	case float64:
		if sprint {
			w.lit(formatValue(x))
		} else {
			// The first value JSON cannot hold fails the explanation: a
			// later double must not clear it.
			var bad string
			if w.b, bad = appendFloat(w.b, x); bad != "" && w.bad == "" {
				w.bad = bad
			}
		}
	case string:
		if sprint {
			w.lit(x)
		} else {
			w.str(x)
		}
	case []any:
		w.lit("[")
		for i, e := range x {
			if i > 0 {
				w.lit(sep)
			}
			w.value(e, sprint)
		}
		w.lit("]")
	case *Map:
		if sprint {
			w.lit("map[")
		} else {
			w.lit("{")
		}
		for i, e := range sortedEntries(x) {
			if i > 0 {
				w.lit(sep)
			}
			if sprint {
				w.lit(e.key)
			} else {
				w.str(e.key)
			}
			w.lit(":")
			w.value(e.val, sprint)
		}
		if sprint {
			w.lit("]")
		} else {
			w.lit("}")
		}
	default: // int64, uint64
		w.lit(formatValue(x))
	}
}

// keyed is a map's entry as the engine's nativeValue holds it: a Go map
// of its keys as fmt.Sprint writes them.
type keyed struct {
	_   [0]func()
	key string
	val any
}

// sortedEntries are m's entries by key as encoding/json and fmt order a
// Go map's, the last of keys written alike kept, as a Go map keeps it.
// An insertion sort: maps are a rule set's tables and inputs, small, and
// sort's code would grow the decision module.
func sortedEntries(m *Map) []keyed {
	out := make([]keyed, 0, len(m.Keys))
	for i, k := range m.Keys {
		kw := &jsonWriter{}
		kw.value(k, true)
		key := string(kw.b)
		j := 0
		for j < len(out) && out[j].key < key {
			j++
		}
		if j < len(out) && out[j].key == key {
			out[j].val = m.Vals[i]
			continue
		}
		out = append(out, keyed{})
		copy(out[j+1:], out[j:])
		out[j] = keyed{key: key, val: m.Vals[i]}
	}
	return out
}

// appendFloat writes a double as encoding/json does: the shortest
// decimal, in exponent form below 1e-6 and from 1e21, with a one-digit
// negative exponent written without its zero.
func appendFloat(b []byte, f float64) ([]byte, string) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, "json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, ""
}
