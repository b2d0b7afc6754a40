package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dlroute/dlroute/engine"
)

// The kinds of remedy, in the order FindRemedy tries them: the fix that
// costs the user least first. A detached tensor is the same memory; a
// view resolved or a layout made dense or contiguous copies the array and
// keeps its values and place; from_dlpack's arguments are the consumer's
// call alone; a cast changes the values' type; a host copy or a trip
// through NumPy moves the data.
const (
	RemedyDetach       = "detach"        // the producer's array detached from autograd (torch's x.detach())
	RemedyResolveNeg   = "resolve_neg"   // the producer resolves a negated view (torch's x.resolve_neg())
	RemedyResolveConj  = "resolve_conj"  // the producer resolves a conjugated view (torch's x.resolve_conj())
	RemedyDense        = "dense"         // the producer's sparse array made dense (torch's x.to_dense())
	RemedyContiguous   = "contiguous"    // the producer's array made C-contiguous
	RemedyWriteable    = "writeable"     // the producer's read-only array copied into a writeable one
	RemedyDropKeywords = "drop_keywords" // from_dlpack(x), without the device and copy passed
	RemedyCopy         = "copy"          // from_dlpack(x, copy=True)
	RemedyCast         = "cast"          // the producer's array cast to float32
	RemedyHostCopy     = "host_copy"     // the producer's array copied to host memory first
	RemedyThroughNumPy = "through_numpy" // np.asarray(x), then the consumer's from_dlpack
)

// FindRemedy is the remedy of cell, the exchange of p's array a into c's
// from_dlpack(x, **args) as Decide decided it: nil where the cell crosses
// (its Outcome is not Raises), else the first fix in the order of the
// Remedy* kinds that applies to the array and, decided again by Decide
// with the fix applied, makes the exchange cross; nil where none does.
// cat holds the rule sets the fixes ask beside p's and c's: numpy's, the
// producer of a NumPy array (cupy's x.get(), np.asarray(x)); a fix that
// needs a rule set cat lacks, or one the rules cannot decide, is not
// offered.
//
// The fix's own cell gets no remedy: FindRemedy calls Decide, never
// itself, so a remedy is one fix, checked once.
func FindRemedy(ctx context.Context, cat *engine.Catalog, p *Producer, a Array, c *Consumer, args engine.Input, cell Cell) (*Remedy, error) {
	return newRemedies(cat).find(ctx, p, a, c, args, cell)
}

// remedies finds the remedies of one catalog's cells, keeping what every
// cell of a producer shares: its array on the host, and NumPy's.
type remedies struct {
	cat *engine.Catalog
	// outcomes are the fixed exchanges decided, by producer, consumer,
	// array and arguments: a GPU array's host copy is the same exchange
	// for each of its places.
	outcomes map[string]Outcome
	hosts    map[*Producer]*Array // p's array in host memory; nil: it has none
	numpy    *Producer            // cat's default numpy, once asked
	noNP     bool                 // cat has no numpy that is a producer
}

func newRemedies(cat *engine.Catalog) *remedies {
	return &remedies{cat: cat, hosts: map[*Producer]*Array{}, outcomes: map[string]Outcome{}}
}

// fix is one way to exchange the array again: the producer, array and
// from_dlpack arguments with the fix applied, and the fix as its user
// writes it.
type fix struct {
	kind string
	p    *Producer
	a    Array
	args engine.Input
	text string
}

func (r *remedies) find(ctx context.Context, p *Producer, a Array, c *Consumer, args engine.Input, cell Cell) (*Remedy, error) {
	if cell.Outcome != Raises {
		return nil, nil
	}
	fixes, err := r.fixes(ctx, p, a, c, args)
	if err != nil {
		return nil, err
	}
	for _, f := range fixes {
		o, err := r.outcome(ctx, f, c)
		if err != nil {
			return nil, err
		}
		if o != Raises && o != "" {
			return &Remedy{Kind: f.kind, Fix: f.text, Outcome: o}, nil
		}
	}
	return nil, nil
}

// outcome is the outcome of f's exchange into c, decided once; "" where
// the rules cannot decide it (a fix they cannot decide is not offered).
func (r *remedies) outcome(ctx context.Context, f fix, c *Consumer) (Outcome, error) {
	key, err := json.Marshal([]any{f.a.Input, f.a.Facts, f.args})
	if err != nil {
		return "", err
	}
	k := fmt.Sprintf("%p %p %p %s", f.p, c, c.rs, key)
	if o, ok := r.outcomes[k]; ok {
		return o, nil
	}
	fixed, err := Decide(ctx, f.p, f.a, c, f.args)
	if err != nil && ctx.Err() != nil {
		return "", err
	}
	r.outcomes[k] = fixed.Outcome // "" where err
	return fixed.Outcome, nil
}

// fixes are the fixes that apply to p's array a into c, in the order
// they are tried.
func (r *remedies) fixes(ctx context.Context, p *Producer, a Array, c *Consumer, args engine.Input) ([]fix, error) {
	lib, into := p.device.Name(), consumerLibrary(c)
	var out []fix
	same := func(kind string, a Array) {
		out = append(out, fix{kind: kind, p: p, a: a, args: args, text: producerFix(lib, kind)})
	}
	for _, f := range inputFixes {
		if b, ok := ordinaryAt(p, a, f.name); ok {
			same(f.kind, b)
		}
		if f.kind == RemedyDense { // after the bits of the tensor, its layout
			if s, ok := a.Facts["strides"]; ok && s != nil && !isEmpty(a.Facts) {
				same(RemedyContiguous, withFact(a, "strides", nil))
			}
		}
	}
	if without := withoutArguments(args); len(without) < len(args) {
		out = append(out, fix{kind: RemedyDropKeywords, p: p, a: a, args: without, text: consumerCall(into, "x", without)})
	}
	if declares(c.rs, "copy") && args["copy"] != true {
		withCopy := maps.Clone(args)
		if withCopy == nil {
			withCopy = engine.Input{}
		}
		withCopy["copy"] = true
		out = append(out, fix{kind: RemedyCopy, p: p, a: a, args: withCopy, text: consumerCall(into, "x", withCopy)})
	}
	if !isFloat32(a.Facts) && float32Holds(a.Facts) {
		b := a
		b.Facts = maps.Clone(a.Facts)
		for _, k := range []string{"dtype_code", "dtype_bits", "dtype_lanes"} {
			delete(b.Facts, k)
		}
		same(RemedyCast, b)
	}
	onHost, err := r.onHost(ctx, p, a)
	if err != nil {
		return nil, err
	}
	if !onHost {
		host, err := r.hostArray(ctx, p, a)
		if err != nil {
			return nil, err
		}
		if host != nil {
			out = append(out, fix{kind: RemedyHostCopy, p: host.p, a: host.a, args: args, text: producerFix(lib, RemedyHostCopy)})
		}
	}
	if onHost && lib != "numpy" && placeOnly(p, a) {
		np, b, err := r.numpyArray(ctx, p, a)
		if err != nil {
			return nil, err
		}
		if np != nil {
			out = append(out, fix{kind: RemedyThroughNumPy, p: np, a: b, args: args, text: consumerCall(into, "np.asarray(x)", args)})
		}
	}
	return out, nil
}

// inputFixes are the fixes that set one fact or input of the producer's
// array back to the ordinary array's, in the order they are tried (the
// order of the Remedy* kinds; contiguous, the strides, comes after
// dense).
var inputFixes = []struct{ kind, name string }{
	{RemedyDetach, "requires_grad"},
	{RemedyResolveNeg, "neg"},
	{RemedyResolveConj, "conj"},
	{RemedyDense, "layout"},
	{RemedyWriteable, "writeable"},
}

// ordinaryAt is a with name, a fact (ArrayFacts) or an input of p's,
// where a's differs from the ordinary array's, set to the ordinary
// array's (the fact's default, the input's declared default); false
// where a's is the ordinary array's.
func ordinaryAt(p *Producer, a Array, name string) (Array, bool) {
	changed := false
	if v, ok := a.Facts[name]; ok && !sameJSON(v, factDefaults[name]) {
		a, changed = withFact(a, name, factDefaults[name]), true
	}
	if v, ok := a.Input[name]; ok {
		for _, d := range p.device.Inputs() {
			if d.Name == name && !sameJSON(v, d.Default) {
				a.Input = maps.Clone(a.Input)
				a.Input[name], changed = d.Default, true
			}
		}
	}
	return a, changed
}

// placeOnly says whether a's inputs are its place alone: no bit of the
// producer's own (requires_grad, conj, a sparse layout) that
// np.asarray(x) refuses as its export does.
func placeOnly(p *Producer, a Array) bool {
	ax := libraryAxes[p.device.Name()]
	for k := range a.Input {
		if !ax.isPlace(k) {
			return false
		}
	}
	return true
}

// isPlace says whether input k says where an array of ax's library lives
// (its platform, its memory, or a value every array fixes).
func (ax axes) isPlace(k string) bool {
	_, fixed := ax.fixed[k]
	return fixed || slices.Contains(ax.platform, k) || slices.Contains(ax.memory, k)
}

// fromDLPackArguments are the inputs of args that are from_dlpack's
// arguments, which drop_keywords leaves out: device and copy, and JAX's
// device given as a Sharding (sharding_devices). The others are facts of
// the consumer's process (torch's cuda_driver), which stay.
var fromDLPackArguments = []string{"device", "copy", "sharding_devices"}

// withoutArguments is args without from_dlpack's arguments; nil where
// nothing is left.
func withoutArguments(args engine.Input) engine.Input {
	var out engine.Input
	for k, v := range args {
		if !slices.Contains(fromDLPackArguments, k) {
			if out == nil {
				out = engine.Input{}
			}
			out[k] = v
		}
	}
	return out
}

// hosted is an array in host memory and its producer.
type hosted struct {
	p *Producer
	a Array
}

// hostArray is a on the host: p's own array in host memory with a's
// facts and the inputs that are not its place, or for a library whose
// host copy is NumPy's (cupy's x.get()) NumPy's; nil where p has none,
// or a holds no data (a torch tensor on the meta device).
func (r *remedies) hostArray(ctx context.Context, p *Producer, a Array) (*hosted, error) {
	for k, v := range remedyWords[p.device.Name()].dataless {
		if sameJSON(a.Input[k], v) {
			return nil, nil // nothing to copy
		}
	}
	if remedyWords[p.device.Name()].hostIsNumPy {
		np, b, err := r.numpyArray(ctx, p, a)
		if err != nil || np == nil {
			return nil, err
		}
		return &hosted{np, b}, nil
	}
	host, ok := r.hosts[p]
	if !ok {
		for _, cand := range p.Arrays {
			cpu, err := r.onHost(ctx, p, cand)
			if err != nil {
				return nil, err
			}
			if cpu && (host == nil || cand.unusual < host.unusual) {
				host = &cand
			}
		}
		r.hosts[p] = host
	}
	if host == nil {
		return nil, nil
	}
	b := *host
	b.Class, b.Facts, b.Input = a.Class, maps.Clone(a.Facts), maps.Clone(host.Input)
	for k, v := range a.Input {
		if !libraryAxes[p.device.Name()].isPlace(k) {
			b.Input[k] = v
		}
	}
	return &hosted{p, b}, nil
}

// onHost says whether p's __dlpack_device__ puts a on the CPU (kDLCPU).
func (r *remedies) onHost(ctx context.Context, p *Producer, a Array) (bool, error) {
	in, err := p.input(CallDevice, a, nil, nil)
	if err != nil {
		return false, err
	}
	d, err := p.device.Resolve(ctx, in)
	if err != nil {
		return false, fmt.Errorf("%s %s for the array %s %s: %w", p.Ref, CallDevice, a.Platform, a.Memory, err)
	}
	return d.Error == nil && d.DeviceTypeCode == kDLCPU, nil
}

// kDLCPU is DLPack's device type code of host memory.
const kDLCPU = 1

// numpyArray is a as NumPy's array (np.asarray(x), cupy's x.get()): the
// default numpy's host array with a's facts, less those p's library
// gives every array; nil where cat has no numpy or NumPy makes no array
// of a's class (bfloat16, a negated view).
func (r *remedies) numpyArray(ctx context.Context, p *Producer, a Array) (*Producer, Array, error) {
	if r.numpy == nil && !r.noNP {
		np, err := NewProducer(ctx, r.cat, "numpy")
		if err != nil {
			if ctx.Err() != nil {
				return nil, Array{}, err
			}
			r.noNP = true
		}
		r.numpy = np
	}
	if r.numpy == nil || !numpyMakes(a) {
		return nil, Array{}, nil
	}
	host, err := r.hostArray(ctx, r.numpy, Array{})
	if err != nil || host == nil {
		return nil, Array{}, err
	}
	b := host.a
	b.Class, b.Facts = a.Class, engine.Input{}
	for k, v := range a.Facts {
		if _, own := libraryFacts[p.device.Name()][k]; !own {
			b.Facts[k] = v
		}
	}
	if len(b.Facts) == 0 {
		b.Facts = nil
	}
	return r.numpy, b, nil
}

// numpyMakes says whether NumPy makes an array of a's facts: none of the
// classes whose makers leave numpy out has facts that a's all match.
func numpyMakes(a Array) bool {
	for _, c := range Classes {
		if len(c.Facts) == 0 || len(c.Makers) == 0 || slices.Contains(c.Makers, "numpy") {
			continue
		}
		matches := true
		for k, v := range c.Facts {
			matches = matches && sameJSON(a.Facts[k], v)
		}
		if matches {
			return false
		}
	}
	return true
}

// float32Holds says whether float32 holds every value of an array of
// facts exactly: a bool, an integer of up to 16 bits, a float of up to
// 32 (bfloat16 and the float8 codes too), one lane. A cast that would
// lose values (a complex's imaginary part, an int64's low bits) is no
// remedy.
func float32Holds(facts engine.Input) bool {
	code, _ := asInt(cmpOr(facts["dtype_code"], factDefaults["dtype_code"]))
	bits, _ := asInt(cmpOr(facts["dtype_bits"], factDefaults["dtype_bits"]))
	lanes, _ := asInt(cmpOr(facts["dtype_lanes"], factDefaults["dtype_lanes"]))
	switch {
	case lanes != 1:
		return false
	case code == kDLBool:
		return true
	case code == kDLInt || code == kDLUInt:
		return bits <= 16
	case code == kDLFloat || code == kDLBfloat:
		return bits <= 32
	}
	return code >= kDLFloat8First && code <= kDLFloat8Last
}

// The DLPack dtype codes float32Holds reads (rules/README.md, "Array
// facts").
const (
	kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6
	kDLFloat8First, kDLFloat8Last                 = 7, 14
)

// cmpOr is v, or def where v is nil (a fact left out).
func cmpOr(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

// withFact is a with fact k set to v.
func withFact(a Array, k string, v any) Array {
	a.Facts = maps.Clone(a.Facts)
	a.Facts[k] = v
	return a
}

// isFloat32 says whether facts are of a float32 array, the dtype every
// library reads (a fact left out is the default's).
func isFloat32(facts engine.Input) bool {
	for _, k := range []string{"dtype_code", "dtype_bits", "dtype_lanes"} {
		if v, ok := facts[k]; ok && !sameJSON(v, factDefaults[k]) {
			return false
		}
	}
	return true
}

// consumerLibrary is the library whose from_dlpack c answers: jax for
// jax-import.
func consumerLibrary(c *Consumer) string {
	if name := c.rs.Name(); name != jaxImport {
		return name
	}
	return "jax"
}
