package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Domain is a finite set of inputs: a few candidate values for each input,
// and every combination of them. Diff derives it from the rules of the
// rule sets it compares, and reports it in DiffReport.Domain.
type Domain struct {
	Inputs []DomainInput `json:"inputs"`
}

// DomainInput is one input of a Domain and the values tried for it.
type DomainInput struct {
	Name string `json:"name"`
	// Type is the input's declared type, such as "int?"; "string | int"
	// when the rule sets declare it differently.
	Type string `json:"type"`
	// Values are the candidates, as Input values: string, int64, float64,
	// bool, nil or []any.
	Values []any `json:"values"`
}

// Size is how many inputs the domain holds: the product of the numbers
// of candidates, or math.MaxInt when that does not fit in an int.
func (d *Domain) Size() int {
	n := 1
	for _, in := range d.Inputs {
		if len(in.Values) != 0 && n > math.MaxInt/len(in.Values) {
			return math.MaxInt
		}
		n *= len(in.Values)
	}
	return n
}

// factors writes the size as "platform 4 × platform_version 4 × ...".
func (d *Domain) factors() string {
	parts := make([]string, len(d.Inputs))
	for i, in := range d.Inputs {
		parts[i] = fmt.Sprintf("%s %d", in.Name, len(in.Values))
	}
	return strings.Join(parts, " × ")
}

// input sets dst to input number i of the domain, 0 <= i < Size(), leaving
// out the inputs skip marks: the last input varies fastest.
func (d *Domain) input(i int, dst Input, skip []bool) {
	for k := len(d.Inputs) - 1; k >= 0; k-- {
		vals := d.Inputs[k].Values
		if !skip[k] {
			dst[d.Inputs[k].Name] = vals[i%len(vals)]
		}
		i /= len(vals)
	}
}

// deriveDomain derives from the rules of the given rule sets the inputs
// worth trying: for each input any of them declares (in the order the
// first declares them), the values at which a rule can decide one way or
// the other.
//
// The values of an input are, in this order:
//
//   - its default, where it has one;
//   - the values the rules test it against: string literals it is compared
//     with or tested for (platform == 'gpu', memory_kind != 'pinned_host',
//     platform in ['a', 'b'], platform_version.contains('cuda')), every cell
//     of a table column it is tested against through a comprehension
//     (platform_version.contains(m.marker) in gpu_markers.filter(m, ...)
//     gives every marker), device-type constants (dl_device[0] == kDLCPU
//     gives 1), and numbers it is compared with, as the two values either
//     side of the boundary an ordering draws (shards > 1 gives 1 and 2,
//     stream < -1 gives -2 and -1). A value that may be an input (a bare
//     alias, or a conditional with the input as a branch: target:
//     dl_device != null ? dl_device : source) is tested as that input, and
//     the tests of imported versions are read too. Strings keep the
//     order the rules name them in; numbers are sorted;
//   - an unknown value that no rule names: for a string "<unknown>" (or
//     "<unknown 2>", ..., or a single character, when a rule names that or
//     a part of it), for a
//     number the smallest non-negative one not named; a bool gets false
//     and true instead;
//   - null, when it is nullable.
//
// A list input (list(int)? such as dl_device) gets one list for each
// combination of the values of its elements, from element 0 to the
// highest one a rule reads (dl_device[1]): each element's values are read
// as above (dl_device[0] == kDLCPU gives [1, 0] and [0, 0]), and an
// element read but never tested gets only its unknown value. It also gets
// [] where the rules take its size, a malformed value; and null. A map or
// dyn input gets its default and null only.
//
// Values are read from the parsed CEL of every value, condition and
// outcome. A value that is a bare alias of an input (kind: memory_kind) is
// followed; a value computed from inputs is not, since its own tests are
// read where it is defined (so gpu_matches.size() == 0 adds nothing). Where
// an input is tested in a way not followed (size(platform_version) > 3,
// platform.lowerAscii() == 'gpu'), the input also gets every value of its
// type that any test names.
//
// The domain is small on purpose: for the shipped jax@v3 it is 288 inputs.
// Its inputs are the boundaries the rules draw; inputs between them decide
// as their neighbours do unless a rule tests them in a way not followed.
func deriveDomain(sets ...*RuleSet) *Domain {
	var order []string
	byName := map[string]*domainVar{}
	var tested []any
	for _, rs := range withImports(sets) {
		r := readDomain(rs)
		tested = append(tested, r.tested...)
		for i := range rs.inputs {
			in := &rs.inputs[i]
			v := byName[in.Name]
			if v == nil {
				v = &domainVar{probes: probes{elems: map[int64][]any{}}}
				byName[in.Name] = v
				order = append(order, in.Name)
			}
			p := r.inputs[in.Name]
			v.decls = append(v.decls, in)
			v.named = append(v.named, p.named...)
			for idx, vals := range p.elems {
				v.elems[idx] = append(v.elems[idx], vals...)
			}
			v.sized = v.sized || p.sized
			v.opaque = v.opaque || p.opaque
		}
	}
	d := &Domain{}
	for _, name := range order {
		d.Inputs = append(d.Inputs, byName[name].candidates(name, tested))
	}
	return d
}

// withImports is sets and every version they import, transitively, each
// once: an import's tests are tests of the importer's inputs too.
func withImports(sets []*RuleSet) []*RuleSet {
	var out []*RuleSet
	seen := map[*RuleSet]bool{}
	var add func(*RuleSet)
	add = func(rs *RuleSet) {
		if seen[rs] {
			return
		}
		seen[rs] = true
		out = append(out, rs)
		for _, im := range rs.imports {
			add(im.rs)
		}
	}
	for _, rs := range sets {
		add(rs)
	}
	return out
}

// domainVar is one input as every rule set declares and tests it.
type domainVar struct {
	decls []*input
	probes
}

func (v *domainVar) candidates(name string, tested []any) DomainInput {
	out := DomainInput{Name: name}
	var c valueSet
	var typeNames []string
	nullable := false
	for _, in := range v.decls {
		if !in.Required {
			c.add(in.Default)
		}
		nullable = nullable || in.typ.nullable
		if !slices.Contains(typeNames, in.Type) {
			typeNames = append(typeNames, in.Type)
		}
	}
	kinds := map[string]bool{} // the same kind declared twice gets its values once
	for _, in := range v.decls {
		t := in.typ
		key := strings.TrimSuffix(t.text, "?")
		if kinds[key] {
			continue
		}
		kinds[key] = true
		switch t.kind {
		case kindList:
			c.add(listCandidates(t.elem, v.elems)...)
			if v.sized {
				c.add([]any{})
			}
		case kindMap, kindDyn:
		default:
			named := fitAll(t.kind, v.named)
			if v.opaque {
				named = append(named, fitAll(t.kind, tested)...)
			}
			c.add(scalarCandidates(t.kind, named, c.vals)...)
		}
	}
	if nullable {
		c.add(nil)
	}
	out.Type = strings.Join(typeNames, " | ")
	out.Values = c.vals
	return out
}

// scalarCandidates are the named values of one kind, sorted if numbers,
// then the unknown value (which avoids have too).
func scalarCandidates(k kind, named, have []any) []any {
	if k == kindBool {
		return []any{false, true}
	}
	if k != kindString {
		slices.SortStableFunc(named, func(a, b any) int { return cmp.Compare(asFloat(a), asFloat(b)) })
	}
	return append(named, unknownValue(k, append(have, named...)))
}

// listCandidates is every combination of the values the elements of a list
// are tested against, from element 0 to the highest one tested.
func listCandidates(elem *valueType, elems map[int64][]any) []any {
	out := [][]any{{}}
	for i := int64(0); i <= maxKey(elems); i++ {
		var vals valueSet
		vals.add(scalarCandidates(elem.kind, fitAll(elem.kind, elems[i]), nil)...)
		next := make([][]any, 0, len(out)*len(vals.vals))
		for _, prefix := range out {
			for _, v := range vals.vals {
				next = append(next, append(slices.Clip(prefix), v))
			}
		}
		out = next
	}
	lists := make([]any, len(out))
	for i, l := range out {
		lists[i] = l
	}
	return lists
}

func maxKey(m map[int64][]any) int64 {
	top := int64(-1)
	for k := range m {
		top = max(top, k)
	}
	return top
}

// unknownValue is a value of kind k that no rule names: one equal to none
// of have and, for a string, containing none of them.
func unknownValue(k kind, have []any) any {
	switch k {
	case kindString:
		names := func(s string) func(any) bool {
			return func(v any) bool {
				h, ok := v.(string)
				return ok && (h == s || h != "" && strings.Contains(s, h))
			}
		}
		for n := 1; n < 10; n++ {
			s := "<unknown>"
			if n > 1 {
				s = fmt.Sprintf("<unknown %d>", n)
			}
			if !slices.ContainsFunc(have, names(s)) {
				return s
			}
		}
		// The rules name "<unknown" or a part of it: a single character
		// that no named string holds contains none of them.
		for r := '?'; ; r++ {
			if !slices.ContainsFunc(have, names(string(r))) {
				return string(r)
			}
		}
	case kindDouble:
		for f := 0.0; ; f++ {
			if !slices.Contains(have, any(f)) {
				return f
			}
		}
	}
	for i := int64(0); ; i++ {
		if !slices.Contains(have, any(i)) {
			return i
		}
	}
}

// fitAll keeps the values that are of kind k, as the Go type an input of
// that kind takes.
func fitAll(k kind, vals []any) []any {
	var out []any
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			if k == kindString {
				out = append(out, x)
			}
		case int64:
			switch {
			case k == kindInt || k == kindDeviceType || k == kindUint && x >= 0:
				out = append(out, x)
			case k == kindDouble:
				out = append(out, float64(x))
			}
		case float64:
			if k == kindDouble {
				out = append(out, x)
			}
		case bool:
			if k == kindBool {
				out = append(out, x)
			}
		}
	}
	return out
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// valueSet is a list of values without repeats, in the order first added.
type valueSet struct {
	vals []any
	seen map[string]bool
}

func (s *valueSet) add(vals ...any) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for _, v := range vals {
		key := fmt.Sprintf("%T %#v", v, v)
		if !s.seen[key] {
			s.seen[key] = true
			s.vals = append(s.vals, v)
		}
	}
}
