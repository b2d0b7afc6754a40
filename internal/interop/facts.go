package interop

import (
	"context"
	"fmt"
	"slices"

	"github.com/dlroute/dlroute/engine"
)

// ArrayFacts are the facts of an array that any library's rule set may
// read, by the names, types and defaults every rule set that reads one
// declares (rules/README.md, "Array facts"): the dtype as DLPack writes
// it, the shape and strides, whether it is writeable, the alignment of its
// data, whether the producer's __dlpack_device__() returns an IntEnum,
// whether it gives the id None for a host device (paddle's CPU and pinned
// tensors), and whether it is a negated view (torch's is_neg(), which no
// capsule carries: its memory holds the values un-negated).
// A producer's array carries them whether or not the producer's own rules
// read them, since the capsule carries them to the consumer (neg, which
// it does not, as the memory the consumer reads); each call of either
// side gets those its rule set declares.
var ArrayFacts = []string{"dtype_code", "dtype_bits", "dtype_lanes", "shape", "strides", "writeable",
	"data_alignment", "dlpack_device_enum", "dlpack_device_id_none", "neg"}

// factDefaults are the facts of the ordinary array, each fact's default
// in every rule set that declares it.
var factDefaults = engine.Input{"dtype_code": 2, "dtype_bits": 32, "dtype_lanes": 1, "shape": []any{8},
	"strides": nil, "writeable": true, "data_alignment": 64, "dlpack_device_enum": false,
	"dlpack_device_id_none": false, "neg": false}

// ordinaryFact says whether v is the fact k of an ordinary array of
// library: its library's own (libraryFacts), else the default.
func ordinaryFact(library, k string, v any) bool {
	if own, ok := libraryFacts[library][k]; ok {
		return sameJSON(v, own)
	}
	return sameJSON(v, factDefaults[k])
}

// isFact says whether name is one of ArrayFacts.
func isFact(name string) bool { return slices.Contains(ArrayFacts, name) }

// withFacts sets in's facts from a's, those rs declares. A producer's copy
// is C-contiguous and the consumer's own (afterCopy): its strides are
// null, it is writeable, and it holds a negated view's values (torch's
// clone resolves the negation). A copy of an empty array keeps the
// array's strides: its library allocates it as it allocated the array
// (numpy 1.23 on gives each empty array it allocates stride 0, which
// pyarrow refuses; an empty numpy view of another array is the exception).
func withFacts(in engine.Input, rs *engine.RuleSet, a Array, afterCopy bool) {
	for k, v := range a.Facts {
		if !declares(rs, k) {
			continue
		}
		if afterCopy && (k == "strides" && !isEmpty(a.Facts) || k == "writeable" || k == "neg") {
			continue // the defaults: contiguous, writeable, its values
		}
		in[k] = v
	}
}

// isEmpty says whether facts describe an array of no elements.
func isEmpty(facts engine.Input) bool {
	shape, _ := facts["shape"].([]any)
	for _, n := range shape {
		if i, ok := asInt(n); ok && i == 0 {
			return true
		}
	}
	return false
}

// ArrayClass is a kind of array whose exchanges can differ from an
// ordinary array's: a dtype, a shape, a layout, a bit a tensor carries.
// The matrix adds a row for each class a producer can make, with
// Options.Classes.
type ArrayClass struct {
	Name string
	// Facts are the array's facts (ArrayFacts), Input the producer's own
	// inputs (torch's requires_grad); a producer that does not declare
	// every name of Input cannot make the array.
	Facts, Input engine.Input
	// Makers are the libraries (rule-set names) whose arrays can be of
	// this class; none: every library but Except. numpy has no bfloat16,
	// torch no negative strides, JAX no strided views.
	Makers []string
	// Except are the libraries whose arrays are never of a class with no
	// Makers: Arrow has no complex type, and a pyarrow Array is a vector
	// (no 0-d array).
	Except []string
	// Own are the facts a library's array of this class has beyond
	// Facts, by library: the strides numpy (1.23 on) gives every empty
	// array it allocates, 0, which its capsule carries and pyarrow refuses.
	Own map[string]engine.Input
}

// Classes are the array classes the matrix can add, in the order of its
// rows. The facts are those of the array each names (np.arange(8.0)[::-1]
// is float64 with strides [-1]); a float64 vector of 8 stands for the
// ordinary array where the dtype is not the point.
var Classes = []ArrayClass{
	{Name: "bool", Facts: engine.Input{"dtype_code": 6, "dtype_bits": 8}},
	{Name: "complex64", Facts: engine.Input{"dtype_code": 5, "dtype_bits": 64}, Except: []string{"pyarrow"}},
	{Name: "bfloat16", Facts: engine.Input{"dtype_code": 4, "dtype_bits": 16}, Makers: []string{"torch", "jax"}},
	{Name: "uint16", Facts: engine.Input{"dtype_code": 1, "dtype_bits": 16}},
	{Name: "0-d", Facts: engine.Input{"shape": []any{}}, Except: []string{"pyarrow"}},
	{Name: "empty", Facts: engine.Input{"shape": []any{0}}, Own: map[string]engine.Input{
		"numpy": {"strides": []any{0}}, "array-api-strict": {"strides": []any{0}}}},
	{Name: "strided", Facts: engine.Input{"dtype_bits": 64, "strides": []any{2}}, Makers: []string{"numpy", "torch"}},
	{Name: "transposed", Facts: engine.Input{"dtype_bits": 64, "shape": []any{3, 2}, "strides": []any{1, 3}}, Makers: []string{"numpy", "torch"}},
	{Name: "negative-stride", Facts: engine.Input{"dtype_bits": 64, "strides": []any{-1}}, Makers: []string{"numpy"}},
	{Name: "read-only", Facts: engine.Input{"writeable": false}, Input: engine.Input{"writeable": false}},
	{Name: "requires_grad", Input: engine.Input{"requires_grad": true}},
	{Name: "conj", Facts: engine.Input{"dtype_code": 5, "dtype_bits": 64}, Input: engine.Input{"conj": true}},
	{Name: "neg", Facts: engine.Input{"neg": true}, Makers: []string{"torch"}},
	{Name: "sparse", Input: engine.Input{"layout": "sparse_coo"}},
}

// classArrays are p's most ordinary array (the least unusual of its
// arrays: numpy's and torch's on the CPU, JAX's cpu array) once for each
// class p can make.
func classArrays(p *Producer) []Array {
	if len(p.Arrays) == 0 {
		return nil
	}
	base := p.Arrays[0]
	for _, a := range p.Arrays[1:] {
		if a.unusual < base.unusual {
			base = a
		}
	}
	var out []Array
	for _, c := range Classes {
		if !p.canMake(c) {
			continue
		}
		a := Array{Platform: base.Platform, Memory: base.Memory, Class: c.Name, Input: engine.Input{}, Facts: engine.Input{}, unusual: base.unusual + 1}
		for _, from := range []engine.Input{base.Input, c.Input} {
			for k, v := range from {
				a.Input[k] = v
			}
		}
		for _, from := range []engine.Input{base.Facts, c.Facts, c.Own[p.device.Name()]} {
			for k, v := range from {
				a.Facts[k] = v
			}
		}
		out = append(out, a)
	}
	return out
}

// canMake says whether p's library makes arrays of class c, and its rules
// describe them: every input of c is one p's __dlpack_device__ rule set
// declares.
func (p *Producer) canMake(c ArrayClass) bool {
	if len(c.Makers) > 0 && !slices.Contains(c.Makers, p.device.Name()) || slices.Contains(c.Except, p.device.Name()) {
		return false
	}
	for k := range c.Input {
		if !declares(p.device, k) {
			return false
		}
	}
	return true
}

// libraryFacts are the facts a library's arrays have whatever the array:
// torch's, JAX's and paddle's __dlpack_device__() return an IntEnum, and
// paddle's gives the id None for its CPU and pinned tensors
// (tensor_patch_methods.py:1368-1380 in paddlepaddle 3.3.1), which the
// consumers that read the fact read only for a host device.
var libraryFacts = map[string]engine.Input{
	"torch":  {"dlpack_device_enum": true},
	"jax":    {"dlpack_device_enum": true},
	"paddle": {"dlpack_device_enum": true, "dlpack_device_id_none": true},
}

// factsOf splits in into the array's facts and the producer's inputs.
func factsOf(in engine.Input) (facts, rest engine.Input) {
	facts, rest = engine.Input{}, engine.Input{}
	for k, v := range in {
		if isFact(k) {
			facts[k] = v
		} else {
			rest[k] = v
		}
	}
	return facts, rest
}

// checkFacts refuses a fact of the wrong type, as the engine refuses an
// input of the wrong type, whether or not a rule set of the exchange
// reads it.
func checkFacts(facts engine.Input, ref string) error {
	for k, v := range facts {
		var ok bool
		switch k {
		case "shape":
			_, ok = v.([]any)
		case "strides":
			_, isList := v.([]any)
			ok = v == nil || isList
		case "writeable", "dlpack_device_enum", "dlpack_device_id_none", "neg":
			_, ok = v.(bool)
		default:
			_, ok = asInt(v)
		}
		if !ok {
			return &engine.Error{Code: engine.CodeWrongType, Message: fmt.Sprintf("the array of %s: fact %s is %T, which is not its type", ref, k, v),
				Hint: "shape is a list of ints, strides a list of ints or null, writeable, dlpack_device_enum, dlpack_device_id_none and neg bools, the rest ints (rules/README.md, \"Array facts\")"}
		}
	}
	return nil
}

// CExchangeAPI is one attribute through which a producer's array type
// exposes DLPack 1.3's C exchange API (rules/README.md, "The C exchange
// lane"): a C extension reads it from type(x), not from x, and exchanges
// without calling x.__dlpack__.
type CExchangeAPI struct {
	// Attribute is the type's attribute: __dlpack_c_exchange_api__
	// (DLPack 1.3's name) or __c_dlpack_exchange_api__ (TVM FFI 0.1.0 to
	// 0.1.4's).
	Attribute string `json:"attribute"`
	// Form is "capsule", a PyCapsule named dlpack_exchange_api holding
	// the DLPackExchangeAPI, or "int", the struct's address.
	Form string `json:"form"`
	// Version is the DLPack version of the struct's header,
	// [major, minor].
	Version [2]int64 `json:"version"`
}

// CExchange says how the type of p's array a exposes the C exchange API:
// the value c_exchange_api of the rule set that answers p's __dlpack__,
// one CExchangeAPI for each attribute in the order the rules list them;
// none where the rule set names no such value (the type has neither
// attribute: numpy, JAX, torch before 2.10). An error where the value is
// not a list of maps with a string attribute and form and a version of
// two ints.
func (p *Producer) CExchange(ctx context.Context, a Array) ([]CExchangeAPI, error) {
	v, ok, err := p.exportValue(ctx, a, cExchangeValue)
	if err != nil || !ok {
		return nil, err
	}
	return cExchangeOf(p.ruleSet(CallExport).Ref(), v)
}

// CLaneExport is what the C exchange API's
// managed_tensor_from_py_object_no_sync makes of an array: a versioned
// export (its device and flags), or the type of the exception it raises.
// It can differ from __dlpack__'s answer: torch 2.15 and paddle 3.3
// export a tensor that requires grad, and torch a conjugate view
// unconjugated, where __dlpack__ raises BufferError.
type CLaneExport struct {
	// Device is the export's DLPack device, [device type code, id];
	// nil where it raised.
	Device []int64 `json:"device,omitempty"`
	// Flags are the export's DLPack flags (READ_ONLY is 1).
	Flags int64 `json:"flags"`
	// ErrorType is the exception's type where it raised (its text names
	// the build's source path, so the rules state the type alone).
	ErrorType string `json:"error_type,omitempty"`
}

// CLane is what p's C exchange API exports of array a, as the value
// c_exchange_export of the rule set that answers p's __dlpack__ states
// it; nil where the rules state none (no type exposes the API, or its
// export was not run: torch 2.10 to 2.13).
func (p *Producer) CLane(ctx context.Context, a Array) (*CLaneExport, error) {
	v, ok, err := p.exportValue(ctx, a, cLaneValue)
	if err != nil || !ok {
		return nil, err
	}
	return cLaneOf(p.ruleSet(CallExport).Ref(), v)
}

func cLaneOf(ref string, v any) (*CLaneExport, error) {
	bad := fmt.Errorf("%s's value %s is %v; want {device: [type code, id], flags} or {raise: [type]}", ref, cLaneValue, v)
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad
	}
	if r, ok := m["raise"].([]any); ok {
		if len(r) != 1 {
			return nil, bad
		}
		t, ok := r[0].(string)
		if !ok {
			return nil, bad
		}
		return &CLaneExport{ErrorType: t}, nil
	}
	dev, ok := m["device"].([]any)
	flags, okf := asInt(m["flags"])
	if !ok || !okf || len(dev) != 2 {
		return nil, bad
	}
	code, ok1 := asInt(dev[0])
	id, ok2 := asInt(dev[1])
	if !ok1 || !ok2 {
		return nil, bad
	}
	return &CLaneExport{Device: []int64{code, id}, Flags: flags}, nil
}

// The values a producer's rule set names for its type's C exchange API
// and for what the API exports of an array.
const (
	cExchangeValue = "c_exchange_api"
	cLaneValue     = "c_exchange_export"
)

// exportValue is the value name of the rule set that answers p's
// __dlpack__, explained for array a with no keywords; ok is false where
// the rule set names no such value.
func (p *Producer) exportValue(ctx context.Context, a Array, name string) (v any, ok bool, err error) {
	rs := p.ruleSet(CallExport)
	in, err := p.input(CallExport, a, nil, nil)
	if err != nil {
		return nil, false, err
	}
	x, err := rs.Explain(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", rs.Ref(), CallExport, err)
	}
	if !slices.ContainsFunc(x.Trace.Values, func(v engine.ValueStep) bool { return v.Name == name }) {
		return nil, false, nil
	}
	v, err = value(x, name)
	return v, err == nil, err
}

func cExchangeOf(ref string, v any) ([]CExchangeAPI, error) {
	bad := func(why string) error {
		return fmt.Errorf("%s's value %s is %v: %s; want a list of {attribute, form, version: [major, minor]}", ref, cExchangeValue, v, why)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, bad("not a list")
	}
	var out []CExchangeAPI
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, bad("an entry is not a map")
		}
		attr, ok1 := m["attribute"].(string)
		form, ok2 := m["form"].(string)
		ver, ok3 := m["version"].([]any)
		if !ok1 || !ok2 || !ok3 || len(ver) != 2 {
			return nil, bad("an entry lacks a string attribute or form, or a version of two ints")
		}
		major, ok1 := asInt(ver[0])
		minor, ok2 := asInt(ver[1])
		if !ok1 || !ok2 {
			return nil, bad("a version is not two ints")
		}
		out = append(out, CExchangeAPI{Attribute: attr, Form: form, Version: [2]int64{major, minor}})
	}
	return out, nil
}
