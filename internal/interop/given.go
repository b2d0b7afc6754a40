package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// exchangeInputs are the producer's inputs that the exchange sets, never
// the array: the call, and __dlpack__'s arguments (rules/README.md,
// "Libraries on both sides").
var exchangeInputs = []string{"call", "stream", "max_version", "dl_device", "copy", "keywords"}

// ArrayOf is p's array that in describes, to be decided as Decide decides
// a row's: in names inputs of p's __dlpack_device__ rule set, such as
// jax's {"platform": "gpu", "platform_version": "<unknown>"} or torch's
// {"device_type": "cpu", "requires_grad": true}. The inputs that say where
// an array lives (its platform and memory kind) take their defaults where
// in leaves them out, and those an ordinary array fixes (JAX's
// local_hardware_id, 0) their fixed values, so the array of a row of the
// matrix is the array of its own Input, named alike. Every other input
// left out keeps its default.
//
// An input that is not a place, given at its default (torch's
// requires_grad false, JAX's shards 1), is left out, as is a fact of the
// ordinary array (float32, a vector of 8, ...; ArrayFacts): it decides
// nothing the default does not, and the array of an ordinary array is
// then the row's, byte for byte. A fact is any of ArrayFacts, whether or
// not p's rules read it (the capsule carries it to the consumer).
//
// The call and __dlpack__'s arguments (stream, max_version, dl_device,
// copy, keywords) are the exchange's to set: naming one is an error
// (engine.CodeUnknownField), as is a name the rule set does not declare
// or a value of the wrong type (the engine's error for
// x.__dlpack_device__() of the array).
func (p *Producer) ArrayOf(ctx context.Context, in engine.Input) (Array, error) {
	for _, name := range exchangeInputs {
		if _, ok := in[name]; ok {
			return Array{}, &engine.Error{Code: engine.CodeUnknownField,
				Message: fmt.Sprintf("the array of %s names %s, which the exchange sets, not the array", p.Ref, name),
				Hint:    "the array's inputs say where it lives (" + strings.Join(p.placeInputs(), ", ") + "); from_dlpack's copy and device are the exchange's arguments"}
		}
	}
	facts, in := factsOf(in)
	if err := checkFacts(facts, p.Ref); err != nil {
		return Array{}, err
	}
	declared := map[string]engine.InputDecl{}
	for _, d := range p.device.Inputs() {
		declared[d.Name] = d
	}
	ax := libraryAxes[p.device.Name()]
	a := arrayAt(p.device, declared, ax, in)
	for k, v := range facts {
		if ordinaryFact(p.device.Name(), k, v) {
			continue // the ordinary array's, as a row's array leaves it
		}
		if a.Facts == nil {
			a.Facts = engine.Input{}
		}
		a.Facts[k] = v
	}
	for k, v := range in {
		_, fixed := ax.fixed[k]
		if d, ok := declared[k]; ok && !fixed && !d.Required && !slices.Contains(ax.platform, k) && !slices.Contains(ax.memory, k) && sameJSON(v, d.Default) {
			continue // the default: left out, as a row's array leaves it
		}
		a.Input[k] = v
	}
	// Asking x.__dlpack_device__() checks every name and type, whichever
	// calls the consumer makes.
	din, err := p.input(CallDevice, a, nil, nil)
	if err != nil {
		return Array{}, err
	}
	if _, err := p.device.Resolve(ctx, din); err != nil {
		return Array{}, fmt.Errorf("the array of %s: %w", p.Ref, err)
	}
	return a, nil
}

// placeInputs are the inputs of p that say where its array lives, as
// the matrix reads them; every input but the exchange's for a library
// this package does not know.
func (p *Producer) placeInputs() []string {
	ax := libraryAxes[p.device.Name()]
	var out []string
	for _, d := range p.device.Inputs() {
		if slices.Contains(ax.platform, d.Name) || slices.Contains(ax.memory, d.Name) ||
			len(ax.platform)+len(ax.memory) == 0 && !slices.Contains(exchangeInputs, d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

// sameJSON says whether a and b are one JSON value: an input decoded from
// JSON (json.Number) and a default read from YAML (int64) alike.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
