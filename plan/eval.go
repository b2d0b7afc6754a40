package plan

import "math/bits"

// The outcome fields the engine checks (engine.CapsuleUnversioned and
// engine.CapsuleVersioned, engine's flag names).
const (
	capsuleUnversioned = "dltensor"
	capsuleVersioned   = "dltensor_versioned"
	deviceTypesFile    = "device_types.yaml"
)

var flagNames = []string{
	"DLPACK_FLAG_BITMASK_READ_ONLY",
	"DLPACK_FLAG_BITMASK_IS_COPIED",
	"DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
}

// Decision is what a plan decided: the engine's engine.Decision.
type Decision struct {
	DeviceType     string
	DeviceTypeCode int64
	DeviceID       int64
	Copy           bool
	Capsule        string
	Flags          uint64
	// ErrorType and ErrorMessage are the exception raised instead of a
	// device; ErrorType is "" for a device.
	ErrorType, ErrorMessage string
	Rule                    string
	RuleSet                 string
}

// Decide decides one JSON input object (a line of `dlroute resolve
// --json` without its newline) and returns the decision's JSON, byte for
// byte what engine.RuleSet.ResolveJSON returns for it. An input the plan
// refuses is an *Error whose Code.Input() is true; an evaluation that
// could not decide is any other *Error.
func (p *Plan) Decide(line []byte) ([]byte, error) {
	out, err := p.AppendDecide(make([]byte, 0, 192), line)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendDecide is Decide appending the decision's JSON to dst, for a
// host that reuses one buffer for every answer (the decision module,
// whose allocations are its costliest steps). On an error it returns
// dst unchanged.
func (p *Plan) AppendDecide(dst, line []byte) ([]byte, error) {
	s := takeScratch()
	in, err := p.decodeInput(line, s.fields[:0])
	if err != nil {
		s.giveBack()
		return dst, err
	}
	d, err := p.initFrame(&s.frame, in, nil, p.StepLimit, nil).decide()
	if err != nil {
		s.giveBack()
		return dst, err
	}
	dst = d.AppendJSON(dst)
	s.giveBack()
	return dst, nil
}

// frame is one evaluation: the slots of inputs, values and comprehension
// variables, and the first failure that stops it.
type frame struct {
	p     *Plan
	in    object
	slots []any
	done  []any   // non-nil: a value's slot holds its result
	steps *uint64 // shared with the imports' evaluations
	count uint64  // the steps, where the frame starts the count
	limit uint64  // the most steps, counted in *steps
	fatal *Error  // a value that failed, or the budget spent
	spent *evalError
	trace *tracer // nil unless explaining
	room  [24]any // the slots and marks of most plans
}

// newFrame binds a checked input's values, or their defaults; values
// are left to be computed when read. It counts its steps in *steps, or
// in its own count where steps is nil.
func (p *Plan) newFrame(in object, steps *uint64, limit uint64, trace *tracer) *frame {
	return p.initFrame(new(frame), in, steps, limit, trace)
}

// initFrame is newFrame in f, a zero frame (a new one, or a scratch's
// given back), whose fields it sets one by one: zeroing the frame again
// would clear its room twice.
func (p *Plan) initFrame(f *frame, in object, steps *uint64, limit uint64, trace *tracer) *frame {
	// One allocation for the frame, the slots and the values' marks
	// where they fit in it: each is one of a decision's costliest steps
	// in WebAssembly.
	f.p, f.in, f.steps, f.limit, f.trace = p, in, steps, limit, trace
	n := len(p.Inputs) + len(p.Values) + p.Locals
	room := f.room[:]
	if n+len(p.Values) > len(room) {
		room = make([]any, n+len(p.Values))
	}
	f.slots, f.done = room[:n:n], room[n:n+len(p.Values)]
	if steps == nil {
		f.steps = &f.count
	}
	for i, decl := range p.Inputs {
		v, ok := in.get(decl.Name)
		if !ok {
			v = decl.Default
		}
		f.slots[i] = decl.Type.celValue(v)
	}
	return f
}

// decide runs the rules in order.
func (f *frame) decide() (Decision, *Error) {
	p := f.p
	for i := range p.Rules {
		r := &p.Rules[i]
		ok, err := f.evalKind(r.When, "bool", "a bool")
		if f.trace != nil {
			f.trace.rule(r, ok == true, err)
		}
		if err != nil {
			return Decision{}, err
		}
		if ok != true {
			continue
		}
		d := Decision{Rule: r.ID, RuleSet: p.Ref}
		if r.Raise != "" {
			msg, err := f.evalKind(r.Message, "string", "a string")
			if err != nil {
				return Decision{}, err
			}
			d.ErrorType, d.ErrorMessage = r.Raise, msg.(string)
			return d, nil
		}
		code, err := f.evalKind(r.Type, "int", "a device type code")
		if err != nil {
			return Decision{}, err
		}
		d.DeviceTypeCode = code.(int64)
		name, known := p.deviceName(d.DeviceTypeCode)
		if !known {
			return Decision{}, p.exprError(r.Type, CodeBadOutcome, sprintf("rule %s: device type code %d is not in %s", r.ID, d.DeviceTypeCode, deviceTypesFile))
		}
		d.DeviceType = name
		id, err := f.evalKind(r.DeviceID, "int", "an int")
		if err != nil {
			return Decision{}, err
		}
		d.DeviceID = id.(int64)
		if err := f.exportFields(r, &d); err != nil {
			return Decision{}, err
		}
		return d, nil
	}
	return Decision{}, &Error{Code: CodeNoMatch, Message: sprintf("no rule of %s matched", p.Ref),
		Hint: "end the rules with a catch-all rule (when: true)"}
}

func (p *Plan) deviceName(code int64) (string, bool) {
	for _, dt := range p.DeviceTypes {
		if dt.Code == code {
			return dt.Name, true
		}
	}
	return "", false
}

// exprError is an error at the start of expression x.
//
//go:noinline
func (p *Plan) exprError(x int, code Code, msg string) *Error {
	e := &p.Exprs[x]
	pos := e.Pos
	return &Error{Code: code, Message: msg, Pos: &pos, Source: e.Source}
}

func (f *frame) exportFields(r *Rule, d *Decision) *Error {
	if r.Copy >= 0 {
		v, err := f.evalKind(r.Copy, "bool", "a bool")
		if err != nil {
			return err
		}
		d.Copy = v == true
	}
	if r.Capsule >= 0 {
		v, err := f.evalKind(r.Capsule, "string", "a string")
		if err != nil {
			return err
		}
		d.Capsule = v.(string)
		if d.Capsule != capsuleUnversioned && d.Capsule != capsuleVersioned {
			return f.p.exprError(r.Capsule, CodeBadOutcome, sprintf("rule %s: capsule %q is not %s or %s", r.ID, d.Capsule, capsuleUnversioned, capsuleVersioned))
		}
	}
	if r.Flags >= 0 {
		v, err := f.evalExpr(r.Flags)
		if err != nil {
			return err
		}
		list, ok := v.([]any)
		if !ok {
			return f.p.exprError(r.Flags, CodeBadOutcome, sprintf("evaluated to %s; want a list of flags", typeName(v)))
		}
		for _, elem := range list {
			bit, ok := elem.(int64)
			if !ok || bit <= 0 || bit&(bit-1) != 0 || bits.TrailingZeros64(uint64(bit)) >= len(flagNames) {
				return f.p.exprError(r.Flags, CodeBadOutcome, sprintf("rule %s: %s is not a DLPACK_FLAG_BITMASK_* flag", r.ID, formatValue(elem)))
			}
			d.Flags |= uint64(bit)
		}
		if d.Flags != 0 && d.Capsule != capsuleVersioned {
			return f.p.exprError(r.Flags, CodeBadOutcome, sprintf("rule %s: flags %s need a %s capsule; an unversioned one has no flags", r.ID, flagsString(d.Flags), capsuleVersioned))
		}
	}
	return nil
}

// evalKind evaluates an expression and checks its run-time type.
func (f *frame) evalKind(x int, want, desc string) (any, *Error) {
	v, err := f.evalExpr(x)
	if err != nil {
		return nil, err
	}
	if typeName(v) != want {
		return nil, f.p.exprError(x, CodeBadOutcome, sprintf("evaluated to %s (%s); want %s", typeName(v), formatValue(v), desc))
	}
	return v, nil
}

// evalExpr evaluates a top-level expression: an error value it ends with
// is an *Error at its start, and a value that failed inside it, or a
// budget spent, is that failure.
func (f *frame) evalExpr(x int) (any, *Error) {
	v := f.eval(f.p.Exprs[x].Root)
	if f.fatal != nil {
		return nil, f.fatal
	}
	if f.spent != nil {
		return nil, f.p.exprError(x, CodeCostLimit, f.spent.msg)
	}
	if e, ok := v.(*evalError); ok {
		return nil, f.p.exprError(x, CodeEval, e.msg)
	}
	return v, nil
}

// spentMessage is cel-go's message for an expression stopped at its cost
// limit, which the step budget stands in for.
const spentMessage = "operation cancelled: actual cost limit exceeded"

// eval evaluates one node as cel-go's interpreter does: arguments left
// to right, an error argument ends a call, && and || absorb an error when
// the other side decides.
func (f *frame) eval(n int) any {
	if f.spent != nil {
		return f.spent
	}
	*f.steps++
	if *f.steps > f.limit {
		f.spent = &evalError{msg: spentMessage, cost: true}
		return f.spent
	}
	node := &f.p.Nodes[n]
	switch node.Op {
	case OpConst:
		return node.Const
	case OpSlot:
		return f.slot(node.Slot)
	case OpAnd, OpOr:
		return f.logical(node)
	case OpCond:
		c := f.eval(node.Args[0])
		b, ok := c.(bool)
		if !ok {
			return maybeNoOverload(c)
		}
		if b {
			return f.eval(node.Args[1])
		}
		return f.eval(node.Args[2])
	case OpEq, OpNe:
		a := f.eval(node.Args[0])
		if isError(a) {
			return a
		}
		b := f.eval(node.Args[1])
		if isError(b) {
			return b
		}
		return equal(a, b) == (node.Op == OpEq)
	case OpIndex:
		obj := f.eval(node.Args[0])
		if isError(obj) {
			return obj
		}
		idx := f.eval(node.Args[1])
		if isError(idx) {
			return idx
		}
		return index(obj, idx)
	case OpSelect:
		obj := f.eval(node.Args[0])
		if isError(obj) {
			return obj
		}
		return index(obj, node.Const)
	case OpList:
		out := make([]any, len(node.Args))
		for i, a := range node.Args {
			v := f.eval(a)
			if isError(v) {
				return v
			}
			out[i] = v
		}
		return out
	case OpMap:
		m := &Map{}
		for i := 0; i+1 < len(node.Args); i += 2 {
			k := f.eval(node.Args[i])
			if isError(k) {
				return k
			}
			v := f.eval(node.Args[i+1])
			if isError(v) {
				return v
			}
			m.Keys, m.Vals = append(m.Keys, k), append(m.Vals, v)
		}
		return m
	case OpFold:
		return f.fold(node)
	case OpCall:
		return f.call(node)
	}
	return errorf("unknown operation %d", node.Op)
}

// logical is && and ||: the first operand equal to the short-circuit
// value decides; otherwise the first error, or a non-bool's "no such
// overload", is the result.
func (f *frame) logical(node *Node) any {
	stop := node.Op == OpOr
	var err any
	for _, a := range node.Args {
		v := f.eval(a)
		b, ok := v.(bool)
		if ok && b == stop {
			return stop
		}
		if !ok && err == nil {
			err = maybeNoOverload(v)
		}
	}
	if err != nil {
		return err
	}
	return !stop
}

func maybeNoOverload(v any) any {
	if isError(v) {
		return v
	}
	return noOverload
}

// slot reads an input, a comprehension variable, or a value, computed
// the first time it is read.
func (f *frame) slot(s int) any {
	i := s - len(f.p.Inputs)
	if i < 0 || i >= len(f.p.Values) || f.done[i] != nil {
		return f.slots[s]
	}
	val := &f.p.Values[i]
	var out any
	var err *Error
	if val.Import >= 0 {
		out, err = f.importDecision(i, val)
	} else {
		out, err = f.evalExpr(val.Expr)
	}
	if f.trace != nil {
		f.trace.value(i, out, err)
	}
	if err != nil {
		if f.fatal == nil {
			f.fatal = err
		}
		return errorf("value %s failed", val.Name)
	}
	f.slots[s], f.done[i] = out, true // any non-nil mark
	return out
}

// importDecision decides the input with an imported plan, and gives its
// decision as the engine's rules see one. Explaining, it explains the
// import's decision too, as the engine does.
func (f *frame) importDecision(i int, val *Value) (any, *Error) {
	// The import reads its own inputs from the same object: they are
	// the importer's too, checked with it.
	imp := f.p.Imports[val.Import]
	var d Decision
	var err *Error
	if f.trace != nil {
		var x *explanation
		x, err = imp.explain(f.in, f.steps, f.limit)
		d, f.trace.values[i].imp = x.decision, x
	} else {
		// The import's steps are the importer's: its StepLimit counts
		// them (the engine adds an import's cost bound to its
		// importer's), and the import's own limit would stop it early
		// when the importer had already spent steps before reading it.
		d, err = imp.newFrame(f.in, f.steps, f.limit, nil).decide()
	}
	if err != nil {
		e := *err
		e.Message = sprintf("import %s (%s): %s", val.Name, imp.Ref, err.Error())
		return nil, &e
	}
	m := &Map{Keys: []any{"device_type", "device_id", "copy", "error", "rule", "ruleset"}}
	var typ, id, exc any
	if d.ErrorType != "" {
		exc = &Map{Keys: []any{"type", "message"}, Vals: []any{d.ErrorType, d.ErrorMessage}}
	} else {
		typ, id = d.DeviceTypeCode, d.DeviceID
	}
	m.Vals = []any{typ, id, d.Copy, exc, d.Rule, d.RuleSet}
	return m, nil
}

// fold evaluates a comprehension: over a list's elements or a map's
// keys, while the condition holds.
func (f *frame) fold(node *Node) any {
	r := f.eval(node.Args[0])
	if isError(r) {
		return r
	}
	var items []any
	switch x := r.(type) {
	case []any:
		items = x
	case *Map:
		items = x.Keys
	case string:
		if x != "" { // cel-go skips the loop over anything empty
			return errorf("got '%s', expected iterable type", goValueType(r))
		}
	default:
		return errorf("got '%s', expected iterable type", goValueType(r))
	}
	f.slots[node.Slot2] = f.eval(node.Args[1])
	for _, item := range items {
		f.slots[node.Slot] = item
		if c := f.eval(node.Args[2]); c != true {
			break
		}
		f.slots[node.Slot2] = f.eval(node.Args[3])
	}
	return f.eval(node.Args[4])
}

// goValueType is the Go type cel-go names in an iteration error.
//
//go:noinline
func goValueType(v any) string {
	switch v.(type) {
	case nil:
		return "types.Null"
	case bool:
		return "types.Bool"
	case int64:
		return "types.Int"
	case uint64:
		return "types.Uint"
	case float64:
		return "types.Double"
	case string:
		return "types.String"
	}
	return "unknown"
}

// index is obj[idx] and obj.field. A key of no key type is refused
// first, as cel-go refuses to make a qualifier of it, naming the Go type
// cel-go holds it in: that of a list or a map from an input or a
// literal (a list or map computed otherwise is named the same here,
// where cel-go's type may differ).
func index(obj, idx any) any {
	switch idx.(type) {
	case nil:
		return &evalError{msg: "invalid qualifier type: types.Null"}
	case []any:
		return &evalError{msg: "invalid qualifier type: *types.sliceList[cel.dev/cel-go/common/types/ref.Val]"}
	case *Map:
		return &evalError{msg: "invalid qualifier type: *types.nativeMap[cel.dev/cel-go/common/types/ref.Val,cel.dev/cel-go/common/types/ref.Val]"}
	}
	switch x := obj.(type) {
	case *Map:
		if v, ok := x.find(idx); ok {
			return v
		}
		return errorf("no such key: %s", formatValue(idx))
	case []any:
		var i int64
		switch k := idx.(type) {
		case int64:
			i = k
		case uint64:
			if k > 1<<62 {
				return errorf("index out of bounds: %s", formatValue(idx))
			}
			i = int64(k)
		case float64:
			if k != float64(int64(k)) {
				return errorf("unsupported index value %s in list", formatValue(idx))
			}
			i = int64(k)
		default:
			return errorf("unsupported index type '%s' in list", typeName(idx))
		}
		if i < 0 || i >= int64(len(x)) {
			return errorf("index out of bounds: %s", formatValue(idx))
		}
		return x[i]
	}
	return errorf("no such key: %s", formatValue(idx))
}

func flagsString(f uint64) string {
	s := ""
	for f != 0 {
		bit := bits.TrailingZeros64(f)
		if s != "" {
			s += "|"
		}
		if bit < len(flagNames) {
			s += flagNames[bit]
		} else {
			s += sprintf("bit %d", bit)
		}
		f &^= 1 << bit
	}
	return s
}
