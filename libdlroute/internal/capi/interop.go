package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/interop"
)

// InteropRequest is dlroute_interop_json's input: one exchange, producer's
// array into consumer's from_dlpack(x, **kwargs).
type InteropRequest struct {
	// Producer and Consumer are rule-set refs: numpy, torch@v1, jax==0.10.2.
	Producer string `json:"producer"`
	Consumer string `json:"consumer"`
	// Array is the producer's inputs that describe the array
	// (interop.Producer.ArrayOf); absent or {}: the ordinary array.
	Array json.RawMessage `json:"array,omitempty"`
	// Kwargs are from_dlpack's keyword arguments as the consumer's inputs,
	// such as {"copy": true}; one left out is not passed.
	Kwargs json.RawMessage `json:"kwargs,omitempty"`
}

// MatrixRequest is dlroute_interop_matrix_json's input, `dlroute interop
// --producer P --consumer C` with kwargs for --copy, or with catch
// `dlroute interop --catch --producer P --consumer C --json`.
type MatrixRequest struct {
	Producers []string        `json:"producers,omitempty"` // empty: every library's default version
	Consumers []string        `json:"consumers,omitempty"` // empty: every library's default version
	Kwargs    json.RawMessage `json:"kwargs,omitempty"`
	// Catch asks for the portable catch set of each producer into each
	// consumer (interop.CatchSet), one line each, instead of the cells:
	// library names (every version) or refs (that one), both lists
	// given, no kwargs (every copy argument is decided).
	Catch bool `json:"catch,omitempty"`
}

// InteropJSON decides one exchange of the rules h: the cell, written
// exactly as `dlroute interop --json` writes that cell, without the
// newline (StatusOK; an exception in the cell is an answer). Otherwise an
// error object: StatusInputError for a request that is not an
// InteropRequest, or an array or argument the rule sets do not declare
// or of the wrong type; StatusNoRuleSet (engine.CodeNoRuleSet) for a ref
// the rules lack, or one that is no library on its side (exchange,
// jax-export; jax as a consumer), with the libraries as the hint;
// StatusEvalError for an exchange the rules cannot decide (a step names
// the call); StatusLoadError when the embedded rules fail to compile.
func InteropJSON(ctx context.Context, h uint64, request []byte) ([]byte, Status) {
	var req InteropRequest
	if err := decodeRequest(request, &req); err != nil {
		return interopError(err)
	}
	if req.Producer == "" || req.Consumer == "" {
		return interopError(&engine.Error{Code: engine.CodeMissingField, Message: "the request names no producer or no consumer",
			Hint: `{"producer":"jax","consumer":"torch","array":{...},"kwargs":{"copy":true}}`})
	}
	array, err := inputField(req.Array, "array")
	if err != nil {
		return interopError(err)
	}
	kwargs, err := inputField(req.Kwargs, "kwargs")
	if err != nil {
		return interopError(err)
	}
	cat, out, st := catalogOf(h, req.Producer, req.Consumer, remedyRef)
	if st != StatusOK {
		return out, st
	}
	ctx, cancel := bounded(ctx) // once compiled: the deadline is evaluation's
	defer cancel()
	c, err := interop.NewConsumer(cat, req.Consumer)
	if err != nil {
		return libraryError(h, err)
	}
	p, err := interop.NewProducer(ctx, cat, req.Producer)
	if err != nil {
		return libraryError(h, err)
	}
	a, err := p.ArrayOf(ctx, array)
	if err != nil {
		return interopError(err)
	}
	cell, err := interop.Decide(ctx, p, a, c, argsOf(kwargs))
	if err != nil {
		return interopError(err)
	}
	if cell.Remedy, err = interop.FindRemedy(ctx, cat, p, a, c, argsOf(kwargs), cell); err != nil {
		return interopError(err)
	}
	return bytes.TrimSuffix(cellJSON(nil, cell), []byte("\n")), StatusOK
}

// remedyRef is the rule set a remedy asks beside the exchange's own:
// NumPy, the producer of np.asarray(x) and of CuPy's x.get().
const remedyRef = "numpy"

// InteropMatrixJSON decides the matrix of the rules h and writes every
// cell as `dlroute interop --json` does: one line each, newline-ended, a
// producer's rows in order and each row's consumers in order. Statuses as
// InteropJSON's.
func InteropMatrixJSON(ctx context.Context, h uint64, request []byte) ([]byte, Status) {
	var req MatrixRequest
	if err := decodeRequest(request, &req); err != nil {
		return interopError(err)
	}
	kwargs, err := inputField(req.Kwargs, "kwargs")
	if err != nil {
		return interopError(err)
	}
	if req.Catch {
		return catchJSON(ctx, h, req, kwargs)
	}
	var cat *engine.Catalog
	var out []byte
	var st Status
	if len(req.Producers) == 0 || len(req.Consumers) == 0 {
		cat, out, st = catalogOf(h) // every library
	} else {
		cat, out, st = catalogOf(h, slices.Concat(req.Producers, req.Consumers, []string{remedyRef})...)
	}
	if st != StatusOK {
		return out, st
	}
	ctx, cancel := bounded(ctx) // once compiled: the deadline is evaluation's
	defer cancel()
	m, err := interop.Options{Producers: req.Producers, Consumers: req.Consumers, Args: argsOf(kwargs)}.Decide(ctx, cat)
	if err != nil {
		return libraryError(h, err)
	}
	var buf []byte
	for _, row := range m.Rows {
		for _, cell := range row.Cells {
			buf = cellJSON(buf, cell)
		}
	}
	return buf, StatusOK
}

// catchJSON answers a MatrixRequest with catch: each producer's catch
// set into each consumer, one line each, as `dlroute interop --catch
// --json` writes them.
func catchJSON(ctx context.Context, h uint64, req MatrixRequest, kwargs engine.Input) ([]byte, Status) {
	const hint = `{"producers":["numpy"],"consumers":["torch"],"catch":true}`
	if len(req.Producers) == 0 || len(req.Consumers) == 0 {
		return interopError(&engine.Error{Code: engine.CodeMissingField, Message: "a catch request names no producer or no consumer", Hint: hint})
	}
	if kwargs != nil {
		return interopError(&engine.Error{Code: engine.CodeUnknownField, Message: "a catch request decides from_dlpack(x) and copy=True and copy=False; it takes no kwargs", Hint: hint})
	}
	var sel []string // every version of a library named, the version of a ref
	for _, ref := range slices.Concat(req.Producers, req.Consumers) {
		if !strings.ContainsAny(ref, "@=") {
			ref += "@*"
		}
		sel = append(sel, ref)
	}
	cat, out, st := catalogOf(h, sel...)
	if st != StatusOK {
		return out, st
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var buf []byte
	for _, p := range req.Producers {
		for _, c := range req.Consumers {
			set, err := interop.CatchSet(ctx, cat, p, c)
			if err != nil {
				return libraryError(h, err)
			}
			buf = cellJSON(buf, set)
		}
	}
	return buf, StatusOK
}

// cellJSON appends the cell (or a catch set) as cmd/dlroute's writeJSON
// writes it: HTML left unescaped (the seed's "<unknown>" as it is), a
// newline after.
func cellJSON(buf []byte, cell any) []byte {
	b := bytes.NewBuffer(buf)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cell); err != nil {
		enc.Encode(map[string]string{"code": "internal", "message": err.Error()})
	}
	return b.Bytes()
}

// catalogOf is a catalog of the rules h that holds refs, as producers
// and consumers need them: jax pairs with jax-export by release, so every
// version of jax-export comes too. The embedded rules compile those
// alone, reusing what the last compile made, as RuleSet does; no refs:
// every version. A ref the rules lack is StatusNoRuleSet.
func catalogOf(h uint64, refs ...string) (*engine.Catalog, []byte, Status) {
	o, ok := rulesOf(h)
	if !ok {
		return nil, nil, StatusBadHandle
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, nil, StatusBadHandle
	}
	if o.catalog != nil || len(refs) == 0 {
		cat, err := o.whole()
		if err != nil {
			return nil, errorsJSON(err), StatusLoadError
		}
		return cat, nil, StatusOK
	}
	sel := append(slices.Clone(refs), "jax-export@*", "jax-import@*")
	cat, err := engine.Load(o.fsys, engine.Options{Select: sel, Reuse: o.last, Cache: loads, TrustParsed: true}) // the embedded rules
	if err != nil {
		if noRuleSet(err) {
			return nil, errorJSON(err), StatusNoRuleSet
		}
		return nil, errorsJSON(err), StatusLoadError
	}
	o.last = cat
	return cat, nil, StatusOK
}

// noRuleSet says whether every error in err is a ref the rules lack.
func noRuleSet(err error) bool {
	list := engine.Errors(err)
	return len(list) > 0 && !slices.ContainsFunc(list, func(e *engine.Error) bool { return e.Code != engine.CodeNoRuleSet })
}

// decodeRequest reads one JSON object into req, refusing what ResolveJSON
// refuses of a line (too long, not UTF-8, not one object) and a field
// req does not have.
func decodeRequest(data []byte, req any) error {
	if len(data) > contract.MaxLineLen {
		return contract.TooLong()
	}
	if !utf8.Valid(data) {
		return &engine.Error{Code: engine.CodeInvalidUTF8, Message: "the request is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		code := engine.CodeJSON
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			code = engine.CodeUnknownField
		}
		return &engine.Error{Code: code, Message: "the request: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &engine.Error{Code: engine.CodeJSON, Message: fmt.Sprintf("unexpected data after the request's JSON object (at byte %d)", dec.InputOffset())}
	}
	return nil
}

// inputField decodes a request's object of inputs, numbers kept exact as
// engine.RuleSet.DecodeInput keeps them; nil when absent.
func inputField(raw json.RawMessage, name string) (engine.Input, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var in engine.Input
	if err := dec.Decode(&in); err != nil {
		return nil, &engine.Error{Code: engine.CodeWrongType, Message: fmt.Sprintf("the request's %s is %s; want a JSON object", name, raw)}
	}
	return in, nil
}

// argsOf is from_dlpack's arguments for interop.Decide: nil for none, as
// `dlroute interop` without --copy.
func argsOf(kwargs engine.Input) engine.Input {
	if len(kwargs) == 0 {
		return nil
	}
	return kwargs
}

// libraryError is the answer to a ref that names no rule set, or one that
// is no library on its side: no rule set of that side by that name, with
// the libraries the rules hold as the hint, as `dlroute interop` gives it.
func libraryError(h uint64, err error) ([]byte, Status) {
	if refused := (*interop.RefusedError)(nil); errors.As(err, &refused) {
		var p, c []string
		if cat, _, st := catalogOf(h); st == StatusOK {
			p, c = interop.Libraries(cat)
		}
		data, _ := json.Marshal(&engine.Error{Code: engine.CodeNoRuleSet, Message: refused.Error(),
			Hint: fmt.Sprintf("producers: %s; consumers: %s (each NAME, NAME@VERSION or NAME==RELEASE)", strings.Join(p, ", "), strings.Join(c, ", "))})
		return data, StatusNoRuleSet
	}
	if noRuleSet(err) {
		return errorJSON(err), StatusNoRuleSet
	}
	return interopError(err)
}

// interopError is err as one error object: the engine error inside it,
// its message led by what the chain says of where it failed (the cell,
// the step), and its status.
func interopError(err error) ([]byte, Status) {
	var inner *engine.Error
	if !errors.As(err, &inner) {
		data, _ := json.Marshal(&engine.Error{Code: engine.CodeEval, Message: err.Error()})
		return data, StatusEvalError
	}
	e := *inner
	e.Message = strings.TrimSuffix(err.Error(), inner.Error()) + inner.Message
	data, _ := json.Marshal(&e)
	if e.Code.Input() {
		return data, StatusInputError
	}
	return data, StatusEvalError
}
