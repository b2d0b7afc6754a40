package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// Producer is a library as the producer of an exchange: the rule sets that
// answer its x.__dlpack_device__() and x.__dlpack__(), and the arrays it
// is asked about.
type Producer struct {
	// Ref names it: the ref of the rule set that answers
	// __dlpack_device__, such as "numpy@v2" or "jax@v3".
	Ref string
	// Arrays are the arrays its rules distinguish, sorted by platform and
	// memory kind.
	Arrays []Array

	device, export *engine.RuleSet
	checks         []VersionCheck // device's, then export's where it is another
	// exportArray maps an array of device's inputs to export's, where the
	// two rule sets differ (JAX's); nil where they are one rule set.
	exportArray func(engine.Input) engine.Input
}

// Consumer is a library as the consumer of an exchange: the rule set that
// answers what its from_dlpack asks and what it makes of the capsule.
type Consumer struct {
	Ref   string // such as "torch@v1"
	rs    *engine.RuleSet
	check VersionCheck
	memo  *Memo // its requests' explanations; nil keeps none
}

// RefusedError is a rule set named as a producer or consumer that cannot
// be one.
type RefusedError struct {
	Ref    string // the rule set's ref, such as "exchange@v2"
	Side   string // "producer" or "consumer"
	Reason string
}

func (e *RefusedError) Error() string { return e.Ref + " cannot be a " + e.Side + ": " + e.Reason }

// bothSides says whether rs answers the four calls: it declares `call`.
func bothSides(rs *engine.RuleSet) bool { return declares(rs, "call") }

func declares(rs *engine.RuleSet, name string) bool { return rs.Declares(name) }

// NewConsumer is the consumer of rule set ref in cat, such as "numpy" or
// "torch@v1", or jax, whose from_dlpack is answered by the version of
// jax-import for the release named ("jax==0.10.2"), or for a version ref
// the last release of the jax version chosen; an error when it is not one
// that answers the four calls. A
// release ref that no version was checked against is answered as
// engine.Catalog.Lookup answers it, its warning in each cell's Checked.
func NewConsumer(cat *engine.Catalog, ref string) (*Consumer, error) {
	rs, w, err := cat.Lookup(ref)
	if err != nil {
		return nil, err
	}
	if rs.Name() == "jax" {
		_, release, _ := strings.Cut(ref, engine.ReleaseRef)
		return jaxConsumer(cat, rs, release)
	}
	if !bothSides(rs) {
		return nil, &RefusedError{Ref: rs.Ref(), Side: "consumer", Reason: "it does not declare the input call, so it does not answer from_dlpack's request and import (rules/README.md, \"Libraries on both sides\")"}
	}
	return &Consumer{Ref: rs.Ref(), rs: rs, check: versionCheck(rs, w)}, nil
}

// NewProducer is the producer of rule set ref in cat, such as "numpy",
// "torch@v1" or "jax==0.10.2": a rule set that answers the four calls, or
// jax, whose __dlpack__ is answered by the version of jax-export for the
// release named ("jax==0.12.0"), or for a version ref the first release
// of the jax version chosen. An error names why ref is not one. A release
// ref that no version was checked against is answered as
// engine.Catalog.Lookup answers it, its warning in each cell's Checked.
func NewProducer(ctx context.Context, cat *engine.Catalog, ref string) (*Producer, error) {
	rs, w, err := cat.Lookup(ref)
	if err != nil {
		return nil, err
	}
	var p *Producer
	switch {
	case rs.Name() == jaxImport:
		return nil, &RefusedError{Ref: rs.Ref(), Side: "producer", Reason: "it answers only JAX's from_dlpack; JAX's arrays are produced by jax (its __dlpack_device__) and jax-export (its __dlpack__), as the producer jax"}
	case bothSides(rs):
		p = &Producer{Ref: rs.Ref(), device: rs, export: rs, checks: []VersionCheck{versionCheck(rs, w)}}
		p.Arrays = arraysFrom(rs, libraryAxes[rs.Name()], func(in engine.Input) bool { return in["call"] == CallDevice })
	case rs.Name() == "jax":
		_, release, _ := strings.Cut(ref, engine.ReleaseRef)
		if p, err = jaxProducer(cat, rs, w, release); err != nil {
			return nil, err
		}
	default:
		return nil, &RefusedError{Ref: rs.Ref(), Side: "producer", Reason: "it does not declare the input call, so it does not answer __dlpack_device__ and __dlpack__ (rules/README.md, \"Libraries on both sides\")"}
	}
	if p.Arrays, err = distinct(ctx, p, p.Arrays); err != nil {
		return nil, err
	}
	return p, nil
}

// Libraries are the refs, in name order, of the default version of every
// rule set in cat that can be a producer and of every one that can be a
// consumer: those that answer the four calls, and jax as a producer when
// cat has jax-export and as a consumer when it has jax-import.
func Libraries(cat *engine.Catalog) (producers, consumers []string) {
	seen := map[string]bool{}
	for _, rs := range cat.RuleSets() {
		name := rs.Name()
		if seen[name] {
			continue
		}
		seen[name] = true
		def, err := cat.RuleSet(name)
		if err != nil {
			continue
		}
		switch {
		case name == jaxImport:
			// jax's consumer side, named jax
		case bothSides(def):
			producers = append(producers, name)
			consumers = append(consumers, name)
		case name == "jax":
			if has(cat, "jax-export") {
				producers = append(producers, name)
			}
			if has(cat, jaxImport) {
				consumers = append(consumers, name)
			}
		}
	}
	slices.Sort(producers)
	slices.Sort(consumers)
	return producers, consumers
}

// has says whether cat holds a version of rule set name.
func has(cat *engine.Catalog, name string) bool {
	return slices.ContainsFunc(cat.RuleSets(), func(r *engine.RuleSet) bool { return r.Name() == name })
}

// ruleSet is the rule set that answers call.
func (p *Producer) ruleSet(call string) *engine.RuleSet {
	if call == CallDevice {
		return p.device
	}
	return p.export
}

// input is what the producer's rule set for call is asked about array a,
// with the keywords of a __dlpack__ call and their values. A keyword the
// rule set has no input for is an error: the rules cannot say what it does.
func (p *Producer) input(call string, a Array, keywords []string, kwargs map[string]any) (engine.Input, error) {
	rs := p.ruleSet(call)
	in := engine.Input{}
	arr := a.Input
	if call == CallExport && p.exportArray != nil {
		arr = p.exportArray(arr)
	}
	for k, v := range arr {
		in[k] = v
	}
	withFacts(in, rs, a, false)
	if declares(rs, "call") {
		in["call"] = call
	}
	if call != CallExport {
		return in, nil
	}
	for _, k := range keywords {
		if !declares(rs, k) {
			return nil, fmt.Errorf("%s has no input %s, so it cannot say what __dlpack__(%s=...) does", rs.Ref(), k, k)
		}
		in[k] = kwargs[k]
	}
	if declares(rs, "keywords") {
		kw := make([]any, len(keywords))
		for i, k := range keywords {
			kw[i] = k
		}
		in["keywords"] = kw
	}
	return in, nil
}
