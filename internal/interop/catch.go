package interop

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dlroute/dlroute/engine"
)

// Catch is the portable catch set of an exchange between two libraries:
// what a program that hands one library's arrays to the other's
// from_dlpack has to catch, whichever releases of both it meets.
type Catch struct {
	Producer string `json:"producer"` // the producer library, as asked
	Consumer string `json:"consumer"` // the consumer library, as asked
	// Types are the exception types the exchanges raise, sorted: what an
	// except clause names (ExceptLine).
	Types []string `json:"types"`
	// Uncatchable are the outcomes no except clause catches, sorted:
	// SilentlyDifferent (values read wrong, nothing raised) and the
	// signals that kill the interpreter (SIGABRT, SIGSEGV).
	Uncatchable []string `json:"uncatchable,omitempty"`
	// ProducerVersions and ConsumerVersions are the versions decided,
	// each of one side into each of the other: rule-set refs, jax's as
	// "jax@v3+jax-export@v2". Exchanges counts the exchanges.
	ProducerVersions []string `json:"producer_versions"`
	ConsumerVersions []string `json:"consumer_versions"`
	Exchanges        int      `json:"exchanges"`
	// Except is ExceptLine(Types): the except clause to paste.
	Except string `json:"except"`
}

// CatchSet is the portable catch set of producer into consumer in cat:
// every exchange of every version of the producer library (each array
// its rules distinguish, and each array class it makes: Options.Classes)
// into every version of the consumer library, by from_dlpack(x) and,
// where the consumer declares copy, from_dlpack(x, copy=True) and
// copy=False. producer and consumer are library names (numpy, torch,
// jax), or a ref (torch@v1, jax==0.10.2) for that version alone.
//
// Every version is what each rule set's versions cover: jax as a
// producer is each pairing of jax and jax-export that a release ties, as
// a consumer each version of jax-import. A version that cannot be that
// side (a jax version no release shipped) is left out. A pair the rules
// cannot decide is an error naming it; no pair at all is a
// RefusedError.
func CatchSet(ctx context.Context, cat *engine.Catalog, producer, consumer string) (*Catch, error) {
	producers, err := producersOf(ctx, cat, producer)
	if err != nil {
		return nil, err
	}
	consumers, err := consumersOf(cat, consumer)
	if err != nil {
		return nil, err
	}
	type pair struct {
		p                  *Producer
		c                  *Consumer
		exchanges          int
		types, uncatchable []string
		err                error
	}
	var pairs []*pair
	for _, p := range producers {
		for _, c := range consumers {
			pairs = append(pairs, &pair{p: p, c: c})
		}
	}
	// The pairs are decided side by side (a rule set is safe for
	// concurrent use), and read in order.
	var wg sync.WaitGroup
	limit := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, pr := range pairs {
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer func() { <-limit; wg.Done() }()
			pr.exchanges, pr.types, pr.uncatchable, pr.err = raisedBy(ctx, pr.p, pr.c)
		}()
	}
	wg.Wait()
	out := &Catch{Producer: producer, Consumer: consumer}
	for _, p := range producers {
		out.ProducerVersions = append(out.ProducerVersions, pairName(p))
	}
	for _, c := range consumers {
		out.ConsumerVersions = append(out.ConsumerVersions, c.Ref)
	}
	for _, pr := range pairs {
		if pr.err != nil {
			return nil, pr.err
		}
		out.Exchanges += pr.exchanges
		out.Types = append(out.Types, pr.types...)
		out.Uncatchable = append(out.Uncatchable, pr.uncatchable...)
	}
	slices.Sort(out.Types)
	slices.Sort(out.Uncatchable)
	out.Types, out.Uncatchable = slices.Compact(out.Types), slices.Compact(out.Uncatchable)
	if out.Types == nil {
		out.Types = []string{}
	}
	out.Except = ExceptLine(out.Types)
	return out, nil
}

// raisedBy decides every exchange of p into c that CatchSet asks: how
// many, and the error types of those that raise, caught or not.
func raisedBy(ctx context.Context, p *Producer, c *Consumer) (n int, caught, uncatchable []string, err error) {
	argsList := []engine.Input{nil}
	if declares(c.rs, "copy") {
		argsList = append(argsList, engine.Input{"copy": true}, engine.Input{"copy": false})
	}
	for _, a := range append(slices.Clip(p.Arrays), classArrays(p)...) {
		for _, args := range argsList {
			cell, err := Decide(ctx, p, a, c, args)
			if err != nil {
				return 0, nil, nil, err
			}
			n++
			switch {
			case cell.Outcome != Raises:
			case Caught(cell.Error.Type):
				caught = append(caught, cell.Error.Type)
			default:
				uncatchable = append(uncatchable, cell.Error.Type)
			}
		}
	}
	return n, caught, uncatchable, nil
}

// Caught says whether an error type of a cell is an exception a program
// catches: not SilentlyDifferent, which nothing raises, nor a signal
// (SIGABRT, SIGSEGV) that kills the interpreter (rules/README.md).
func Caught(errorType string) bool {
	return errorType != SilentlyDifferent && !strings.HasPrefix(errorType, "SIG")
}

// SilentlyDifferent is the error type of an exchange that crosses with
// other values than the producer's (rules/README.md): nothing raises it.
const SilentlyDifferent = "SilentlyDifferent"

// pairName names a producer for a person: its ref, and jax-export's
// version beside jax's.
func pairName(p *Producer) string {
	if p.export != p.device {
		return p.Ref + "+" + p.export.Ref()
	}
	return p.Ref
}

// producersOf are the producers of every version of library name, or of
// the ref's alone.
func producersOf(ctx context.Context, cat *engine.Catalog, name string) ([]*Producer, error) {
	if strings.Contains(name, "@") || strings.Contains(name, engine.ReleaseRef) {
		p, err := NewProducer(ctx, cat, name)
		if err != nil {
			return nil, err
		}
		return []*Producer{p}, nil
	}
	versions := versionsOf(cat, name)
	if len(versions) == 0 {
		_, err := NewProducer(ctx, cat, name) // the catalog's error for the name
		return nil, err
	}
	var refs []string
	for _, rs := range versions {
		if name != "jax" {
			refs = append(refs, rs.Ref())
			continue
		}
		// jax pairs with jax-export by release: each release of each
		// version, once per pair.
		if r := rs.Manifest().Mirrors.Releases; r != nil {
			rels := slices.Sorted(maps.Keys(r.Checked))
			for _, rel := range slices.Compact(append(rels, r.First, r.Last)) {
				refs = append(refs, name+engine.ReleaseRef+rel)
			}
		}
	}
	var out []*Producer
	var refusal error // the newest version's
	seen := map[string]bool{}
	for _, ref := range refs {
		p, err := NewProducer(ctx, cat, ref)
		if refused := (*RefusedError)(nil); errors.As(err, &refused) {
			refusal = err
			continue
		}
		if err != nil {
			return nil, err
		}
		if k := pairName(p); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		if refusal == nil { // a jax that mirrors no release
			refusal = &RefusedError{Ref: name, Side: "producer", Reason: "no version of it mirrors a release"}
		}
		return nil, refusal
	}
	// In the catalog's order of versions: jax's, then jax-export's.
	order := map[*engine.RuleSet]int{}
	for i, rs := range cat.RuleSets() {
		order[rs] = i
	}
	slices.SortStableFunc(out, func(a, b *Producer) int {
		return cmp.Or(cmp.Compare(order[a.device], order[b.device]), cmp.Compare(order[a.export], order[b.export]))
	})
	return out, nil
}

// consumersOf are the consumers of every version of library name (jax's:
// jax-import's), or of the ref's alone.
func consumersOf(cat *engine.Catalog, name string) ([]*Consumer, error) {
	if strings.Contains(name, "@") || strings.Contains(name, engine.ReleaseRef) {
		c, err := NewConsumer(cat, name)
		if err != nil {
			return nil, err
		}
		return []*Consumer{c}, nil
	}
	set := name
	if name == "jax" {
		set = jaxImport
	}
	versions := versionsOf(cat, set)
	if len(versions) == 0 {
		_, err := NewConsumer(cat, name) // the catalog's error for the name
		return nil, err
	}
	var out []*Consumer
	var refusal error // the newest version's
	for _, rs := range versions {
		c, err := NewConsumer(cat, rs.Ref())
		if refused := (*RefusedError)(nil); errors.As(err, &refused) {
			refusal = err
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, refusal
	}
	return out, nil
}

// versionsOf are the versions of rule set name in cat, in cat's order.
func versionsOf(cat *engine.Catalog, name string) []*engine.RuleSet {
	var out []*engine.RuleSet
	for _, rs := range cat.RuleSets() {
		if rs.Name() == name {
			out = append(out, rs)
		}
	}
	return out
}

// ExceptLine is the except clause that catches types in Python, to
// paste: each type named as Python reaches it without an import where a
// built-in class it derives from is one (pyarrow's ArrowInvalid is a
// ValueError, JAX's JaxRuntimeError a RuntimeError), else by its module
// (tf.errors.InvalidArgumentError); each name once, sorted.
func ExceptLine(types []string) string {
	var names []string
	for _, t := range types {
		n := t
		if b, ok := pythonBases[t]; ok {
			n = b
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "except " + names[0] + ":"
	}
	return "except (" + strings.Join(names, ", ") + "):"
}

// pythonBases are the exception types of the rule sets that are no
// built-in: the built-in class each derives from, or where none its
// qualified name.
var pythonBases = map[string]string{
	"AcceleratorError":         "RuntimeError", // torch.AcceleratorError
	"ArrowInvalid":             "ValueError",
	"ArrowNotImplementedError": "NotImplementedError",
	"ArrowTypeError":           "TypeError",
	"JaxRuntimeError":          "RuntimeError", // jax.errors.JaxRuntimeError
	"XlaRuntimeError":          "RuntimeError", // jaxlib.xla_extension.XlaRuntimeError
	"InvalidArgumentError":     "tf.errors.InvalidArgumentError",
}
