package interop

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// Array is one array a producer is asked about: where it lives, as the
// producer's rule sets' inputs say it.
type Array struct {
	// Platform and Memory name it for a person: the values of the
	// producer's platform inputs and memory inputs (see axes), such as
	// `gpu "cuda 12030"` and `pinned_host`; "-" where it has none.
	Platform string `json:"platform"`
	Memory   string `json:"memory"`
	// Input is the producer's inputs that describe the array: those
	// values, and any the producer fixes for an ordinary array. Every other
	// input of the producer has its default.
	Input engine.Input `json:"input"`
	// Class names the kind of array (ArrayClass) where it is not an
	// ordinary one: "bool", "negative-stride", ...; "" for an ordinary array.
	Class string `json:"class,omitempty"`
	// Facts are the array's facts (ArrayFacts) where they are not the
	// defaults: its dtype, shape, strides, ... as the capsule carries them,
	// and the library's own (torch's and JAX's dlpack_device_enum).
	Facts engine.Input `json:"facts,omitempty"`

	// unusual ranks arrays that name one place for a person: how many of
	// its values are not the input's default, plus 2 for a value of more
	// than one line. The matrix names a group by its least unusual array.
	unusual int
}

// axes are the inputs of a library's rule set that say where its array
// lives: the platform (device type, build) and the memory kind. This is
// the one fact of each library this package holds by name: a rule set's
// inputs also hold facts that are not a place (torch's requires_grad,
// JAX's shard count), which the matrix leaves at their defaults.
type axes struct {
	platform, memory []string
	// fixed are inputs set for every array: an ordinary array's values
	// where the default is not one (JAX's local_hardware_id is null by
	// default, the exceptional case).
	fixed engine.Input
}

// libraryAxes holds the axes of each library, by rule-set name. A library
// not named here is asked about one array, its inputs' defaults.
var libraryAxes = map[string]axes{
	"numpy": {platform: []string{"origin_device"}},
	"torch": {platform: []string{"device_type", "device_index", "hip"}, memory: []string{"pinned"}},
	"cupy":  {platform: []string{"hip"}, memory: []string{"managed"}},
	"jax":   {platform: []string{"platform", "platform_version"}, memory: []string{"memory_kind"}, fixed: engine.Input{"local_hardware_id": 0}},
}

// arraysFrom reads the arrays from cases: each case's input at the axes
// (the inputs rs declares), with the fixed values, in case order, once
// each. keep says which cases describe an array (a __dlpack_device__
// call). Without such a case the array is the inputs' defaults.
func arraysFrom(rs *engine.RuleSet, ax axes, keep func(engine.Input) bool) []Array {
	declared := map[string]engine.InputDecl{}
	for _, d := range rs.Inputs() {
		declared[d.Name] = d
	}
	var out []Array
	seen := map[string]bool{}
	add := func(in engine.Input) {
		a := arrayAt(rs, declared, ax, in)
		key, _ := json.Marshal(a.Input)
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, a)
		}
	}
	for _, c := range rs.Cases() {
		if keep(c.Input) {
			add(c.Input)
		}
	}
	if len(out) == 0 {
		add(engine.Input{})
	}
	return out
}

// arrayAt is the array that in describes: its values at the axes (the
// defaults where in leaves one out; a required input left out is not
// there), with the fixed values, named for a person.
func arrayAt(rs *engine.RuleSet, declared map[string]engine.InputDecl, ax axes, in engine.Input) Array {
	a := Array{Input: engine.Input{}}
	var plat, mem []string
	for _, group := range []struct {
		names []string
		label *[]string
	}{{ax.platform, &plat}, {ax.memory, &mem}} {
		for _, name := range group.names {
			d, ok := declared[name]
			if !ok {
				continue
			}
			v, set := in[name]
			if !set {
				if d.Required {
					continue
				}
				v = d.Default
			}
			a.Input[name] = v
			if d.Required || !reflect.DeepEqual(v, d.Default) {
				a.unusual++
			}
			if str, ok := v.(string); ok && strings.Contains(str, "\n") {
				a.unusual += 2
			}
			if l := label(name, v, rs); l != "" {
				*group.label = append(*group.label, l)
			}
		}
	}
	for name, v := range ax.fixed {
		if _, ok := declared[name]; ok {
			a.Input[name] = v
		}
	}
	a.Platform, a.Memory = cmp.Or(strings.Join(plat, " "), "-"), cmp.Or(strings.Join(mem, " "), "-")
	if f := libraryFacts[rs.Name()]; len(f) > 0 {
		a.Facts = engine.Input{}
		for k, v := range f {
			a.Facts[k] = v
		}
	}
	return a
}

// label is one input's value as a row of the table shows it: a string as
// it is (quoted where it holds a space or is empty), a true bool as the
// input's name and a false one not at all, null not at all, a
// (device type, id) pair as (kDLCUDAHost, 0), anything else as
// name=JSON.
func label(name string, v any, rs *engine.RuleSet) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return name
		}
		return ""
	case string:
		if x == "" || strings.ContainsAny(x, " \t\n\"") {
			return fmt.Sprintf("%q", x)
		}
		return x
	case []any:
		if len(x) == 2 {
			if code, ok := asInt(x[0]); ok {
				if id, ok := asInt(x[1]); ok {
					return fmt.Sprintf("(%s, %d)", deviceName(rs, code), id)
				}
			}
		}
	}
	b, _ := json.Marshal(v)
	return name + "=" + string(b)
}

// deviceName is a device type code's name in rs's table, or the code.
func deviceName(rs *engine.RuleSet, code int64) string {
	for _, t := range rs.DeviceTypes() {
		if t.Code == code {
			return t.Name
		}
	}
	return fmt.Sprint(code)
}

// asInt reads an integer as the engine's inputs and values carry one.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		return int64(x), true
	case json.Number: // an input decoded as DecodeInput decodes one
		n, err := x.Int64()
		return n, err == nil
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

// distinct keeps one array of each group the producer answers alike: the
// same rule and outcome for __dlpack_device__ and for a plain __dlpack__().
// Two arrays it cannot tell apart are one row, named by the least unusual
// array (the first of those).
func distinct(ctx context.Context, p *Producer, arrays []Array) ([]Array, error) {
	var out []Array
	seen := map[string]int{}
	for _, a := range arrays {
		var sig []string
		for _, call := range []string{CallDevice, CallExport} {
			in, err := p.input(call, a, nil, nil)
			if err != nil {
				return nil, err
			}
			d, err := p.ruleSet(call).Resolve(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("%s %s for the array %s %s: %w", p.Ref, call, a.Platform, a.Memory, err)
			}
			o := d.DeviceType
			if d.Error != nil {
				o = d.Error.Type
			}
			sig = append(sig, fmt.Sprintf("%s/%s/%t", d.Rule, o, d.Copy))
		}
		k := strings.Join(sig, " ")
		i, ok := seen[k]
		switch {
		case !ok:
			seen[k] = len(out)
			out = append(out, a)
		case a.unusual < out[i].unusual:
			out[i] = a
		}
	}
	slices.SortStableFunc(out, func(a, b Array) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Platform), strings.ToLower(b.Platform)), cmp.Compare(a.Memory, b.Memory))
	})
	return out, nil
}
