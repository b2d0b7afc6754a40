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
	in, err := p.decodeInput(line)
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
	out, bad := x.appendJSON(dst)
	if bad != "" {
		// The engine's encoding/json fails on the value; so does this.
		return dst, &Error{Code: CodeEval, Message: bad}
	}
	return out, nil
}

// explanation is what engine.Explanation holds: the decision (zero
// where it failed) and its trace.
type explanation struct {
	p        *Plan
	decision Decision
	rules    []ruleStep
	values   []valueStep // by value index
}

type ruleStep struct {
	rule    *Rule
	matched bool
	err     string // its condition failed to evaluate
}

type valueStep struct {
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

func (t *tracer) rule(r *Rule, matched bool, err *Error) {
	step := ruleStep{rule: r, matched: matched && err == nil}
	if err != nil {
		step.err = err.Message
	}
	t.rules = append(t.rules, step)
}

// value records the first evaluation of value i.
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
func (p *Plan) explain(in map[string]any, steps *uint64, limit uint64) (*explanation, *Error) {
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

// appendJSON appends the explanation as engine.Explanation.MarshalJSON
// writes it, without HTML escaping. bad is encoding/json's message for a
// value it cannot write, which fails the whole explanation.
func (x *explanation) appendJSON(b []byte) (out []byte, bad string) {
	b = append(b, `{"decision":`...)
	b = x.decision.AppendJSON(b)
	b = append(b, `,"trace":{"rules":`...)
	if len(x.rules) == 0 {
		b = append(b, "null"...) // the engine's nil slice
	}
	for i, r := range x.rules {
		if i == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"rule":`...)
		b = appendString(b, r.rule.ID)
		b = append(b, `,"matched":`...)
		b = strconv.AppendBool(b, r.matched)
		if r.err != "" {
			b = append(b, `,"error":`...)
			b = appendString(b, r.err)
		}
		b = append(b, `,"position":`...)
		b = appendPosition(b, r.rule.Pos)
		b = append(b, '}')
	}
	if len(x.rules) > 0 {
		b = append(b, ']')
	}
	b = append(b, `,"values":[`...)
	for i := range x.values {
		v := &x.values[i]
		if i > 0 {
			b = append(b, ',')
		}
		if !v.traced { // never: every value is computed; the engine's zero step
			b = append(b, `{"name":"","value":null,"used":false}`...)
			continue
		}
		decl := &x.p.Values[i]
		b = append(b, `{"name":`...)
		b = appendString(b, decl.Name)
		b = append(b, `,"value":`...)
		if b, bad = appendValue(b, v.value); bad != "" {
			return b, bad
		}
		if v.err != "" {
			b = append(b, `,"error":`...)
			b = appendString(b, v.err)
		}
		b = append(b, `,"used":`...)
		b = strconv.AppendBool(b, v.used)
		b = append(b, `,"position":`...)
		b = appendPosition(b, decl.Pos)
		if v.imp != nil {
			b = append(b, `,"import":`...)
			if b, bad = v.imp.appendJSON(b); bad != "" {
				return b, "json: error calling MarshalJSON for type *engine.Explanation: " + bad
			}
		}
		b = append(b, '}')
	}
	return append(b, "]}}"...), ""
}

func appendPosition(b []byte, p Position) []byte {
	b = append(b, `{"file":`...)
	b = appendString(b, p.File)
	b = append(b, `,"line":`...)
	b = strconv.AppendInt(b, int64(p.Line), 10)
	b = append(b, `,"column":`...)
	b = strconv.AppendInt(b, int64(p.Column), 10)
	return append(b, '}')
}

// appendValue appends a value as encoding/json writes the engine's
// nativeValue of it: a map's keys as fmt.Sprint writes them, sorted. bad
// is encoding/json's message for a double JSON cannot hold.
func appendValue(b []byte, v any) (out []byte, bad string) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), ""
	case bool:
		return strconv.AppendBool(b, x), ""
	case int64:
		return strconv.AppendInt(b, x, 10), ""
	case uint64:
		return strconv.AppendUint(b, x, 10), ""
	case float64:
		return appendFloat(b, x)
	case string:
		return appendString(b, x), ""
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, bad = appendValue(b, e); bad != "" {
				return b, bad
			}
		}
		return append(b, ']'), ""
	case *Map:
		b = append(b, '{')
		for i, e := range sortedEntries(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e.key)
			b = append(b, ':')
			if b, bad = appendValue(b, e.val); bad != "" {
				return b, bad
			}
		}
		return append(b, '}'), ""
	}
	return appendString(b, formatValue(v)), ""
}

// keyed is a map's entry as the engine's nativeValue holds it: a Go map
// of its keys as fmt.Sprint writes them.
type keyed struct {
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
		key := string(appendSprint(nil, k))
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
		out[j] = keyed{key, m.Vals[i]}
	}
	return out
}

// appendSprint appends a value as fmt.Sprint writes the engine's
// nativeValue of it: a list as [a b], a map as map[k:v].
func appendSprint(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "<nil>"...)
	case string:
		return append(b, x...)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendSprint(b, e)
		}
		return append(b, ']')
	case *Map:
		b = append(b, "map["...)
		for i, e := range sortedEntries(x) {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(append(b, e.key...), ':')
			b = appendSprint(b, e.val)
		}
		return append(b, ']')
	}
	return append(b, formatValue(v)...)
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
