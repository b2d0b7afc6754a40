package interop

import (
	"fmt"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// remedyWords are how each library's users write the fixes, by library:
// the calls on its own array and its from_dlpack. They are the second
// thing this package holds of each library by name, beside libraryAxes;
// a library or a fix not named here is written in plain words
// (plainFixes).
var remedyWords = map[string]libraryWords{
	"numpy": {fromDLPack: "np.from_dlpack", fixes: map[string]string{
		RemedyContiguous: "np.ascontiguousarray(x)", RemedyWriteable: "x.copy()", RemedyCast: "x.astype(np.float32)", RemedyHostCopy: "x.copy()"}},
	"torch": {fromDLPack: "torch.from_dlpack", dataless: engine.Input{"device_type": "meta"}, fixes: map[string]string{
		RemedyDetach: "x.detach()", RemedyResolveNeg: "x.resolve_neg()", RemedyResolveConj: "x.resolve_conj()",
		RemedyDense: "x.to_dense()", RemedyContiguous: "x.contiguous()", RemedyWriteable: "x.clone()",
		RemedyCast: "x.to(torch.float32)", RemedyHostCopy: "x.cpu()"}},
	"cupy": {fromDLPack: "cupy.from_dlpack", hostIsNumPy: true, fixes: map[string]string{
		RemedyContiguous: "cupy.ascontiguousarray(x)", RemedyCast: "x.astype(cupy.float32)", RemedyHostCopy: "x.get()"}},
	"jax": {fromDLPack: "jax.numpy.from_dlpack", fixes: map[string]string{
		RemedyCast: "x.astype(jnp.float32)", RemedyHostCopy: `jax.device_put(x, jax.devices("cpu")[0])`}},
	"pyarrow":     {fromDLPack: "pa.Array.from_dlpack", fixes: map[string]string{RemedyCast: "x.cast(pa.float32())"}},
	"tensorflow":  {fromDLPack: "tf.experimental.dlpack.from_dlpack", takesCapsule: true, fixes: map[string]string{RemedyCast: "tf.cast(x, tf.float32)"}},
	"paddle":      {fromDLPack: "paddle.from_dlpack", fixes: map[string]string{RemedyDetach: "x.detach()", RemedyContiguous: "x.contiguous()", RemedyCast: "x.astype(paddle.float32)", RemedyHostCopy: "x.cpu()"}},
	"onnxruntime": {fromDLPack: "onnxruntime.OrtValue.from_dlpack"},
	"mlx":         {fromDLPack: "mx.from_dlpack", fixes: map[string]string{RemedyCast: "x.astype(mx.float32)"}},
	"warp":        {fromDLPack: "wp.from_dlpack", fixes: map[string]string{RemedyContiguous: "x.contiguous()", RemedyHostCopy: `x.to("cpu")`}},
	"array-api-strict": {fromDLPack: "array_api_strict.from_dlpack", fixes: map[string]string{
		RemedyCast: "array_api_strict.astype(x, array_api_strict.float32)"}},
}

// libraryWords are one library's words for the fixes.
type libraryWords struct {
	fromDLPack string            // its from_dlpack, as its users call it
	fixes      map[string]string // a fix of its array, by kind, on x
	// takesCapsule: its from_dlpack takes x.__dlpack__(), not x
	// (tf.experimental.dlpack.from_dlpack).
	takesCapsule bool
	// hostIsNumPy: its host copy is a NumPy array (cupy's x.get()).
	hostIsNumPy bool
	// dataless are inputs whose value says the array holds no data, so
	// that no copy of it holds any: torch's meta device.
	dataless engine.Input
}

// plainFixes are the fixes of an array of a library remedyWords does not
// spell.
var plainFixes = map[string]string{
	RemedyDetach:      "detach it from autograd first",
	RemedyDense:       "make the sparse array dense first",
	RemedyWriteable:   "copy it into a writeable array first",
	RemedyResolveNeg:  "resolve the negated view first (a copy)",
	RemedyResolveConj: "resolve the conjugated view first (a copy)",
	RemedyContiguous:  "make the array C-contiguous first",
	RemedyCast:        "cast the array to float32 first",
	RemedyHostCopy:    "copy it to host memory first",
}

// producerFix is the fix of kind to an array of library lib, in its
// words.
func producerFix(lib, kind string) string {
	if s, ok := remedyWords[lib].fixes[kind]; ok {
		return s
	}
	return plainFixes[kind]
}

// consumerCall is library lib's from_dlpack of the array x names, with
// args (device, then copy) in Python's words.
func consumerCall(lib, x string, args engine.Input) string {
	w, ok := remedyWords[lib]
	fn := w.fromDLPack
	if !ok {
		fn = lib + "'s from_dlpack"
	}
	if w.takesCapsule {
		x += ".__dlpack__()"
	}
	parts := []string{x}
	for _, k := range []string{"device", "copy"} {
		if v, ok := args[k]; ok {
			parts = append(parts, k+"="+pythonValue(v))
		}
	}
	return fn + "(" + strings.Join(parts, ", ") + ")"
}

// pythonValue is an argument's value as Python writes it.
func pythonValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pythonValue(e)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v)
}
