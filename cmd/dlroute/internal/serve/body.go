package serve

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/dlroute/dlroute/engine"
)

// inputOverhead is what each input of a batch costs beyond its bytes, as
// the budget counts it: its place in the list of inputs (a slice header)
// and its allocation's rounding, so that a batch of 10,000 "{}" claims
// what it holds.
const inputOverhead = 32

// body is a request body as read: one input, or a batch's inputs, each a
// copy of its bytes, or what to answer instead once the ref is known
// (refused: the body is no JSON array, or a batch is over MaxBatch).
type body struct {
	single  []byte
	inputs  []json.RawMessage
	batch   bool
	refused *refusal
}

// refusal is a request answered with no decision.
type refusal struct {
	status int
	e      requestError
}

// readBody reads r's body, claiming its bytes from c, and working on them
// only in its turn t (turnReader). One input is
// read whole; an array is decoded as it arrives, element by element, so
// the body is never held twice (once as read, once as inputs) and only a
// window of it is buffered. The error is a refusal to answer at once: a
// body over MaxBody (413), past the budget (503) or cut off (400).
func (h *handler) readBody(w http.ResponseWriter, r *http.Request, c *claim, t *turn) (body, *refusal) {
	limited := http.MaxBytesReader(w, r.Body, h.cfg.MaxBody)
	br := bufio.NewReader(&claimedBody{r: &turnReader{ctx: r.Context(), r: limited, t: t}, c: c})
	var space []byte
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return body{single: space}, nil
		}
		if err != nil {
			return body{}, h.readRefusal(err)
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			br.UnreadByte()
			if b == '[' {
				return h.readBatch(br, c)
			}
			break
		}
		space = append(space, b)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return body{}, h.readRefusal(err)
	}
	return body{single: append(space, rest...)}, nil
}

// readBatch decodes an array of inputs. A batch over MaxBatch is still
// read to its end, its inputs past the limit dropped, so that a body that
// is no JSON array is said to be one whatever its length.
func (h *handler) readBatch(r io.Reader, c *claim) (body, *refusal) {
	dec := json.NewDecoder(r)
	out := body{batch: true}
	dec.Token() // '[', which readBody saw
	var n int
	var dropped json.RawMessage
	for dec.More() {
		in := &dropped
		if n < h.cfg.MaxBatch {
			out.inputs = append(out.inputs, nil)
			in = &out.inputs[n]
		}
		if err := dec.Decode(in); err != nil {
			return h.batchError(out, err)
		}
		if tooDeep(*in) {
			return h.batchError(out, errTooDeep)
		}
		if n < h.cfg.MaxBatch && !c.takeBody(inputOverhead) {
			return body{}, h.readRefusal(errBusy)
		}
		n++
	}
	if _, err := dec.Token(); err != nil { // ']'
		return h.batchError(out, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errAfterArray
		}
		return h.batchError(out, err)
	}
	if n > h.cfg.MaxBatch {
		out.inputs = nil
		out.refused = &refusal{http.StatusRequestEntityTooLarge, requestError{Code: string(engine.CodeTooLong),
			Message: fmt.Sprintf("the batch has %d inputs; the limit is %d", n, h.cfg.MaxBatch), Hint: "send fewer inputs per request"}}
	}
	return out, nil
}

var (
	errAfterArray = errors.New("invalid data after the array")
	errTooDeep    = fmt.Errorf("an input nests %d deep or more, past encoding/json's limit", maxDepth)
)

// maxDepth is encoding/json's limit on nesting. An input of a batch is
// held to it with the array around it, as json.Unmarshal of the whole
// body held it: decoding each input alone would allow one level more.
const maxDepth = 10_000

// tooDeep reports whether input, valid JSON, nests maxDepth deep or more.
func tooDeep(input []byte) bool {
	if len(input) < 2*maxDepth {
		return false // too short to nest so deep: each level takes two bytes
	}
	depth, inString := 0, false
	for i := 0; i < len(input); i++ {
		switch c := input[i]; {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth >= maxDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// batchError is the answer to a batch whose decoding failed: a JSON error,
// answered once the ref is known, or a refusal to answer at once.
func (h *handler) batchError(out body, err error) (body, *refusal) {
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("unexpected end of JSON input")
	case !errors.As(err, &syntax) && err != errAfterArray && err != errTooDeep:
		return body{}, h.readRefusal(err)
	}
	out.inputs = nil
	out.refused = &refusal{http.StatusBadRequest, requestError{Code: string(engine.CodeJSON),
		Message: "the body is neither a JSON object nor an array of them: " + err.Error()}}
	return out, nil
}

// readRefusal is the answer to a body that could not be read.
func (h *handler) readRefusal(err error) *refusal {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &refusal{http.StatusRequestEntityTooLarge, requestError{Code: string(engine.CodeTooLong),
			Message: fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit), Hint: "send fewer inputs per request"}}
	case errors.Is(err, errBusy):
		return busy("the bodies and answers of the requests in flight")
	}
	return &refusal{http.StatusBadRequest, requestError{Code: "read_error", Message: err.Error()}}
}

// busy is the refusal of a request that would pass the budget of bytes
// in flight (HandlerConfig.MaxInFlight) with what.
func busy(what string) *refusal {
	return &refusal{http.StatusServiceUnavailable, requestError{Code: string(CodeBusy),
		Message: what + " would pass the server's budget of request bytes in memory at once",
		Hint:    "retry after the Retry-After header's seconds, or send fewer inputs per request"}}
}
