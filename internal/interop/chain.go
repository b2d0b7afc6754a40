package interop

import (
	"context"
	"fmt"
	"slices"

	"github.com/dlroute/dlroute/engine"
)

// Decide decides one exchange: consumer c's from_dlpack(x, **args) for
// producer p's array a. args are from_dlpack's keyword arguments as c's
// inputs (copy, device), each one c declares; nil for from_dlpack(x).
//
// The calls are made as rules/README.md orders them: __dlpack_device__
// when the consumer's calls_dlpack_device says so (and its exception is
// what the user sees), the request, __dlpack__ with the request's
// keywords, the request again (attempt 2, 3, ...) after each TypeError
// (after any exception where the consumer declares failed_type) and
// __dlpack__ with its keywords, then from_dlpack on the capsule
// __dlpack__ decided: its device, and its kind where the decision names
// one. The capsule's DLPack version is left at the consumer's default.
// A request whose value request_fallback is true ends the asking: from_dlpack is
// asked with fallback true and no capsule (receiveWithout). A consumer
// that declares producer_type gets the producer's value python_type there,
// unless args give it.
//
// Every cell crosses by LaneDLPack, and its OtherLane is empty: no
// consumer's from_dlpack among the rule sets reads the C exchange API of
// a producer's type, even where the type exposes one (Producer.CExchange:
// torch 2.10 on, paddle 3.3); each calls __dlpack__ (rules/README.md, "The
// C exchange lane").
//
// An exception any rule set decides is an answer, in the cell. Decide
// returns an error only when a rule set cannot answer (an input it does
// not declare, a value the shape needs that it does not name, an
// evaluation error), naming the step.
func Decide(ctx context.Context, p *Producer, a Array, c *Consumer, args engine.Input) (Cell, error) {
	ch := &chain{ctx: ctx, p: p, a: a, c: c, cell: Cell{Producer: p.Ref, Consumer: c.Ref, Array: a, Checked: checkedOf(p, c), Lane: LaneDLPack}}
	for k := range args {
		if !declares(c.rs, k) {
			return Cell{}, &engine.Error{Code: engine.CodeUnknownField, Message: fmt.Sprintf("%s has no input %s: from_dlpack(x, %s=...) is not one of its arguments", c.Ref, k, k)}
		}
	}
	ch.args = args
	if err := ch.fillProducerType(); err != nil {
		return Cell{}, fmt.Errorf("%s into %s, the array %s %s: %w", p.Ref, c.Ref, a.Platform, a.Memory, err)
	}
	err := ch.run()
	if err != nil {
		return Cell{}, fmt.Errorf("%s into %s, the array %s %s: %w", p.Ref, c.Ref, a.Platform, a.Memory, err)
	}
	return ch.cell, nil
}

// chain is one exchange being decided.
type chain struct {
	ctx  context.Context
	p    *Producer
	a    Array
	c    *Consumer
	args engine.Input
	cell Cell
	// producerType is the producer's python_type where the consumer
	// declares producer_type and from_dlpack's arguments do not give it.
	producerType string
}

// The names by which a consumer goes on without a capsule, and by which
// it names the producer's type (rules/README.md, "Libraries on both
// sides").
const (
	// requestFallback is a request's value: true where from_dlpack calls
	// __dlpack__ no more and imports x another way; fallbackInput the
	// import's input that says it was asked so.
	requestFallback = "request_fallback"
	fallbackInput   = "fallback"
	// producerTypeInput is the consumer's input naming the producer's
	// Python type; typeNameValue the producer's value stating it.
	producerTypeInput = "producer_type"
	typeNameValue     = "python_type"
)

// fillProducerType sets ch.producerType from the value python_type of the
// rule set that answers the producer's __dlpack__, where the consumer
// declares producer_type, the arguments leave it out and the producer
// states one; otherwise the consumer's default (its placeholder) stays.
func (ch *chain) fillProducerType() error {
	if _, given := ch.args[producerTypeInput]; given || !declares(ch.c.rs, producerTypeInput) {
		return nil
	}
	v, ok, err := ch.p.exportValue(ch.ctx, ch.a, typeNameValue)
	if err != nil || !ok {
		return err
	}
	s, isString := v.(string)
	if !isString || s == "" {
		return fmt.Errorf("%s's value %s is %v; want the type's name, such as 'torch.Tensor'", ch.p.ruleSet(CallExport).Ref(), typeNameValue, v)
	}
	ch.producerType = s
	return nil
}

func (ch *chain) run() error {
	req, x, err := ch.request(1, "", "", nil)
	if err != nil {
		return err
	}
	calls, err := boolValue(x, "calls_dlpack_device")
	if err != nil {
		return err
	}
	if calls {
		d, err := ch.produce(CallDevice, 1, nil, nil)
		if err != nil || d.Error != nil {
			return err
		}
		if declares(ch.c.rs, "producer_device") {
			if req, x, err = ch.request(1, "", "", []any{d.DeviceTypeCode, d.DeviceID}); err != nil {
				return err
			}
		}
	}
	export, err := ch.ask(req, x)
	if err != nil || export == nil {
		return err
	}
	// A consumer tries again after a TypeError; one that declares
	// failed_type is asked after any exception, and says: again (MLX:
	// after a BufferError too), its own exception, or, where its request
	// names the value request_fallback, that it goes on without __dlpack__ (MLX:
	// torch's own to_dlpack).
	for attempt := 2; export.Error != nil && declares(ch.c.rs, "attempt") &&
		(isTypeError(export.Error.Type) || declares(ch.c.rs, "failed_type")); attempt++ {
		if attempt > MaxAttempts {
			return fmt.Errorf("%s %s: still trying after %d attempts; a request that does not try again raises", ch.c.Ref, CallRequest, MaxAttempts)
		}
		var prod []any
		if v, ok := req.Input["producer_device"]; ok {
			prod = v.([]any)
		}
		if req, x, err = ch.request(attempt, export.Error.Type, export.Error.Message, prod); err != nil {
			return err
		}
		fallback, err := fallsBack(x)
		if err != nil {
			return err
		}
		if fallback {
			return ch.receiveWithout(req, *export.Error)
		}
		if export, err = ch.ask(req, x); err != nil || export == nil {
			return err
		}
	}
	if export.Error != nil {
		return nil
	}
	return ch.receive(*export, req)
}

// typeErrors are the exception types rule sets raise that are TypeError
// or a subclass of it, which a consumer that catches TypeError catches
// too: pyarrow's ArrowTypeError.
var typeErrors = []string{"TypeError", "ArrowTypeError"}

func isTypeError(t string) bool { return slices.Contains(typeErrors, t) }

// MaxAttempts bounds the requests of one exchange: a consumer tries again
// after each TypeError of __dlpack__ until its request rules raise (torch
// 2.10 makes four attempts, numpy and cupy two), and a rule set that never
// stops is an error, not a hang.
const MaxAttempts = 8

// request asks the consumer what its from_dlpack passes to __dlpack__ on
// attempt, after the exception of type failedType and message failed the
// previous attempt raised ("" on the first), with the producer's device
// where it asked for it; the step is recorded by ask, once the producer's
// device is known.
func (ch *chain) request(attempt int, failedType, failed string, producerDevice []any) (Step, engine.Explanation, error) {
	in := ch.consumerInput(CallRequest, false)
	if declares(ch.c.rs, "attempt") {
		in["attempt"] = attempt
	}
	if failed != "" && declares(ch.c.rs, "failed_message") {
		in["failed_message"] = failed
	}
	if failedType != "" && declares(ch.c.rs, "failed_type") {
		in["failed_type"] = failedType
	}
	if producerDevice != nil {
		in["producer_device"] = producerDevice
	}
	x, err := ch.c.memo.explain(ch.ctx, ch.c.rs, in)
	if err != nil {
		return Step{}, x, fmt.Errorf("%s %s: %w", ch.c.Ref, CallRequest, err)
	}
	// A rule that lets the producer's TypeError reach the user (its
	// message, re-raised) raises the producer's exception, of its class.
	if e := x.Decision.Error; e != nil && e.Type == "TypeError" && failedType != "TypeError" &&
		isTypeError(failedType) && e.Message == failed {
		reraised := *e
		reraised.Type = failedType
		x.Decision.Error = &reraised
	}
	return Step{Call: CallRequest, Attempt: attempt, Input: in, Decision: x.Decision}, x, nil
}

// ask records the request and, unless it raised, calls __dlpack__ with
// its keywords. It returns the producer's decision, or nil where the
// request raised.
func (ch *chain) ask(req Step, x engine.Explanation) (*engine.Decision, error) {
	if req.Decision.Error != nil {
		ch.cell.Steps = append(ch.cell.Steps, req)
		ch.finish(req.Decision)
		return nil, nil
	}
	keywords, kwargs, err := requestKeywords(x)
	if err != nil {
		return nil, fmt.Errorf("%s %s attempt %d: %w", ch.c.Ref, CallRequest, req.Attempt, err)
	}
	req.Keywords, req.Kwargs = keywords, kwargs
	ch.cell.Steps = append(ch.cell.Steps, req)
	d, err := ch.produce(CallExport, req.Attempt, keywords, kwargs)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// produce asks the producer call, records the step, and finishes the cell
// where it raised.
func (ch *chain) produce(call string, attempt int, keywords []string, kwargs map[string]any) (engine.Decision, error) {
	in, err := ch.p.input(call, ch.a, keywords, kwargs)
	if err != nil {
		return engine.Decision{}, err
	}
	d, err := ch.p.ruleSet(call).Resolve(ch.ctx, in)
	if err != nil {
		return d, fmt.Errorf("%s %s: %w", ch.p.ruleSet(call).Ref(), call, err)
	}
	ch.cell.Steps = append(ch.cell.Steps, Step{Call: call, Attempt: attempt, Input: in, Decision: d})
	if d.Error != nil {
		ch.finish(d)
	}
	return d, nil
}

// receive asks the consumer's from_dlpack what it makes of the capsule
// export describes, got on req's attempt (torch 2.10 clones what a later
// attempt got without copy=True), with the producer's device where the
// request asked for it (JAX places the array by it, not by the
// capsule's), and finishes the cell.
func (ch *chain) receive(export engine.Decision, req Step) error {
	attempt := req.Attempt
	in := ch.consumerInput(CallImport, export.Copy)
	in["capsule_device"] = []any{export.DeviceTypeCode, export.DeviceID}
	if v, ok := req.Input["producer_device"]; ok {
		in["producer_device"] = v
	}
	if declares(ch.c.rs, "attempt") {
		in["attempt"] = attempt
	}
	if export.Capsule != "" && declares(ch.c.rs, "capsule") {
		in["capsule"] = export.Capsule
	}
	if declares(ch.c.rs, "capsule_flags") {
		in["capsule_flags"] = int64(export.Flags)
	}
	d, err := ch.c.rs.Resolve(ch.ctx, in)
	if err != nil {
		return fmt.Errorf("%s %s: %w", ch.c.Ref, CallImport, err)
	}
	ch.cell.Steps = append(ch.cell.Steps, Step{Call: CallImport, Attempt: attempt, Input: in, Decision: d})
	ch.finish(d)
	if d.Error == nil {
		ch.cell.Outcome = copies(export.Copy, d.Copy)
	}
	return nil
}

// fallsBack says whether request x, which did not raise, goes on
// without __dlpack__: its value request_fallback, false where the rule
// set names none.
func fallsBack(x engine.Explanation) (bool, error) {
	if x.Decision.Error != nil || !slices.ContainsFunc(x.Trace.Values, func(v engine.ValueStep) bool { return v.Name == requestFallback }) {
		return false, nil
	}
	return boolValue(x, requestFallback)
}

// receiveWithout records req, a request that goes on without
// __dlpack__ after the producer's exception failed, and asks the
// consumer's from_dlpack what it makes of x another way (nanobind's
// buffer protocol or the framework's own to_dlpack, in MLX), with
// fallback true, the exception's type and message, the producer's device
// (x.__dlpack_device__()'s answer, where the consumer declares
// producer_device) and no capsule: the array's own facts (nothing was
// copied). It finishes the cell: the
// import's exception, or a copy by the consumer (ConsumerCopy) or
// none (InPlace) as its copy says.
func (ch *chain) receiveWithout(req Step, failed engine.Exception) error {
	ch.cell.Steps = append(ch.cell.Steps, req)
	if !declares(ch.c.rs, fallbackInput) {
		return fmt.Errorf("%s %s attempt %d: the request falls back, but from_dlpack declares no input %s", ch.c.Ref, CallRequest, req.Attempt, fallbackInput)
	}
	in := ch.consumerInput(CallImport, false)
	in[fallbackInput] = true
	if declares(ch.c.rs, "attempt") {
		in["attempt"] = req.Attempt
	}
	if declares(ch.c.rs, "failed_type") {
		in["failed_type"] = failed.Type
	}
	if declares(ch.c.rs, "failed_message") {
		in["failed_message"] = failed.Message
	}
	if declares(ch.c.rs, "producer_device") {
		// where the array is, as x.__dlpack_device__() says (a fact the
		// other way reads, not a call the consumer makes)
		pin, err := ch.p.input(CallDevice, ch.a, nil, nil)
		if err != nil {
			return err
		}
		dev, err := ch.p.ruleSet(CallDevice).Resolve(ch.ctx, pin)
		if err != nil {
			return fmt.Errorf("%s %s: %w", ch.p.ruleSet(CallDevice).Ref(), CallDevice, err)
		}
		if dev.Error == nil {
			in["producer_device"] = []any{dev.DeviceTypeCode, dev.DeviceID}
		}
	}
	d, err := ch.c.rs.Resolve(ch.ctx, in)
	if err != nil {
		return fmt.Errorf("%s %s: %w", ch.c.Ref, CallImport, err)
	}
	ch.cell.Steps = append(ch.cell.Steps, Step{Call: CallImport, Attempt: req.Attempt, Input: in, Decision: d})
	ch.finish(d)
	if d.Error == nil {
		ch.cell.Outcome = copies(false, d.Copy)
	}
	return nil
}

// finish sets the cell from the decision that ends it so far: a
// TypeError that the consumer answers by trying again is ended by a later
// one.
func (ch *chain) finish(d engine.Decision) {
	ch.cell.Outcome, ch.cell.Error, ch.cell.Device = "", nil, nil
	if d.Error != nil {
		ch.cell.Outcome, ch.cell.Error = Raises, d.Error
		return
	}
	ch.cell.Device = &Device{Type: d.DeviceType, Code: d.DeviceTypeCode, ID: d.DeviceID}
}

func copies(producer, consumer bool) Outcome {
	switch {
	case producer && consumer:
		return BothCopy
	case producer:
		return ProducerCopy
	case consumer:
		return ConsumerCopy
	}
	return InPlace
}

// consumerInput is the consumer's input for call, with from_dlpack's
// arguments.
//
// The array's facts are the capsule's, as the producer made it: a copy
// by the producer (afterCopy) is contiguous and writeable. Where the rule
// set reads keywords, they are from_dlpack's, in its signature's order: a
// keyword passed as None (an args value of nil) is passed, which a release
// that refuses the keyword tells apart from one not passed.
func (ch *chain) consumerInput(call string, afterCopy bool) engine.Input {
	in := engine.Input{"call": call}
	withFacts(in, ch.c.rs, ch.a, afterCopy)
	if ch.producerType != "" {
		in[producerTypeInput] = ch.producerType
	}
	for k, v := range ch.args {
		in[k] = v
	}
	if declares(ch.c.rs, "keywords") {
		var kw []any
		for _, k := range []string{"device", "copy"} {
			if _, ok := ch.args[k]; ok {
				kw = append(kw, k)
			}
		}
		if kw != nil {
			in["keywords"] = kw
		}
	}
	return in
}
