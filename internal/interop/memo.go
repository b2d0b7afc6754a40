package interop

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/dlroute/dlroute/engine"
)

// Memo keeps what consumers' from_dlpack requests explained, by rule set
// and input, for the Decide calls that share it (Options.Memo). A request
// is asked again for every array whose facts the consumer reads alike:
// the playground's matrices of the shipped rules, every older producer
// and both copy arguments, ask some 20,000 requests, 584 of them
// different. What it gives back is what Explain answers again, since a
// rule set decides equal inputs equally; an error is not kept. It keeps
// at most MaxMemo explanations. A Memo is safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	x  map[memoKey]engine.Explanation
}

// MaxMemo bounds what a Memo keeps: a request past it is explained, and
// not kept.
const MaxMemo = 1 << 14

type memoKey struct {
	rs *engine.RuleSet
	in string
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{x: map[memoKey]engine.Explanation{}} }

// explain is rs.Explain(ctx, in), from m where it asked it before; m nil
// keeps nothing.
func (m *Memo) explain(ctx context.Context, rs *engine.RuleSet, in engine.Input) (engine.Explanation, error) {
	if m == nil {
		return rs.Explain(ctx, in)
	}
	k := memoKey{rs, string(appendKey(nil, map[string]any(in)))}
	m.mu.Lock()
	x, ok := m.x[k]
	m.mu.Unlock()
	if ok {
		return x, nil
	}
	x, err := rs.Explain(ctx, in)
	if err != nil {
		return x, err
	}
	m.mu.Lock()
	if len(m.x) < MaxMemo {
		m.x[k] = x
	}
	m.mu.Unlock()
	return x, nil
}

// appendKey appends v, an input or a part of one, with the type of each
// scalar: an int 1 and a double 1.0 are different inputs to CEL.
func appendKey(b []byte, v any) []byte {
	switch v := v.(type) {
	case engine.Input:
		return appendKey(b, map[string]any(v))
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = strconv.AppendQuote(b, k)
			b = appendKey(append(b, ':'), v[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for _, e := range v {
			b = appendKey(b, e)
		}
		return append(b, ']')
	case string:
		return strconv.AppendQuote(b, v)
	default:
		return fmt.Appendf(b, "%T(%v),", v, v)
	}
}
