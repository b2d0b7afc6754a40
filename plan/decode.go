package plan

import (
	"math"
)

// MaxDepth bounds how deeply Decode nests imports and values: far above
// any rule set (the shipped ones import one level and nest values a few
// deep), low enough that bad bytes cannot exhaust the stack.
const MaxDepth = 64

// MaxExprDepth bounds how deeply a plan's expression trees nest: four
// times cel-go's parser's recursion limit (250), which bounds every
// expression a rule set compiles, so no plan the engine builds comes
// near it; a forged plan nested deeper would exhaust an evaluator's
// stack (in Go, ending the process).
const MaxExprDepth = 1000

// Decode reads a plan that MarshalBinary wrote. Bytes that are not a
// plan, or a plan of another FormatVersion, or one whose references do
// not hold together, are an *Error with CodeBadPlan; Decode never panics.
func Decode(data []byte) (*Plan, error) {
	if !hasPrefix(string(data), Magic) {
		return nil, badPlan("does not start with %q", Magic)
	}
	r := &reader{b: data[len(Magic):]}
	if v := r.uint(); r.err == nil && v != FormatVersion {
		return nil, &Error{Code: CodeBadPlan, Message: sprintf("plan format version %d; this evaluator reads version %d", v, FormatVersion),
			Hint: "build the plan again from its rules with this version of dlroute"}
	}
	n := r.count()
	r.table = make([]string, 0, n)
	for range n {
		l := r.count()
		if r.err != nil {
			break
		}
		r.table = append(r.table, string(r.b[:l]))
		r.b = r.b[l:]
	}
	p := r.plan(0)
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the plan", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}

func badPlan(format string, args ...any) *Error {
	return &Error{Code: CodeBadPlan, Message: "not a valid plan: " + sprintf(format, args...)}
}

type reader struct {
	b     []byte
	table []string
	err   *Error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = badPlan(format, args...)
	}
	r.b = nil
}

func (r *reader) uint() uint64 {
	v, n := uvarint(r.b)
	if n <= 0 {
		r.fail("truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int64 {
	v, n := varint(r.b)
	if n <= 0 {
		r.fail("truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length, which cannot be more than the bytes left.
func (r *reader) count() int {
	v := r.uint()
	if v > uint64(len(r.b)) {
		r.fail("a count of %d with %d bytes left", v, len(r.b))
		return 0
	}
	return int(v)
}

// index reads an index below n.
func (r *reader) index(n int, what string) int {
	v := r.uint()
	if v >= uint64(n) {
		r.fail("%s %d out of range", what, v)
		return 0
	}
	return int(v)
}

// ref reads an index below n, or -1.
func (r *reader) ref(n int, what string) int {
	v := r.int()
	if v < -1 || v >= int64(n) {
		r.fail("%s %d out of range", what, v)
		return -1
	}
	return int(v)
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) str() string {
	i := r.index(len(r.table), "string")
	if r.err != nil {
		return ""
	}
	return r.table[i]
}

func (r *reader) plan(depth int) *Plan {
	if depth > MaxDepth {
		r.fail("imports nest deeper than %d", MaxDepth)
		return nil
	}
	p := &Plan{Ref: r.str(), StepLimit: r.uint(), Locals: r.count()}
	values := r.count()
	p.Inputs = make([]Input, r.count())
	for i := range p.Inputs {
		in := &p.Inputs[i]
		in.Name, in.Type = r.str(), r.typ(0)
		if in.Required = r.byte() == 1; !in.Required {
			in.Default = r.value(0)
		}
	}
	p.DeviceTypes = make([]DeviceType, r.count())
	for i := range p.DeviceTypes {
		p.DeviceTypes[i] = DeviceType{Name: r.str(), Code: r.int()}
	}
	p.Exprs = make([]Expr, r.count())
	for i := range p.Exprs {
		p.Exprs[i] = Expr{Root: int(r.uint()), Pos: r.pos(), Source: r.str()}
	}
	p.Nodes = make([]Node, r.count())
	slots := len(p.Inputs) + values + p.Locals
	nest := make([]int32, len(p.Nodes)) // children come first: a node's depth is known from its arguments'
	for i := range p.Nodes {
		n := &p.Nodes[i]
		n.Op, n.Func = Op(r.byte()), Func(r.byte())
		n.Args = make([]int, r.count())
		for k := range n.Args {
			n.Args[k] = r.index(i, "argument") // children come first
		}
		switch n.Op {
		case OpConst, OpSelect:
			n.Const = r.value(0)
		case OpSlot:
			n.Slot = r.index(slots, "slot")
		case OpFold:
			n.Slot, n.Slot2 = r.index(slots, "slot"), r.index(slots, "slot")
		}
		n.Line, n.Column = int(r.uint()), int(r.uint())
		if r.err == nil && !n.valid() {
			r.fail("node %d: operation %d with %d arguments", i, n.Op, len(n.Args))
		}
		for _, a := range n.Args {
			nest[i] = max(nest[i], nest[a]+1)
		}
		if r.err == nil && nest[i] >= MaxExprDepth { // nest counts the levels below node i
			r.fail("node %d nests deeper than %d", i, MaxExprDepth)
		}
	}
	p.strs = shortStrings(p.Nodes)
	for i := range p.Exprs {
		if p.Exprs[i].Root >= len(p.Nodes) {
			r.fail("expression %d: root out of range", i)
		}
	}
	if n := r.count(); n != values && r.err == nil {
		r.fail("%d values, %d declared", n, values)
	}
	p.Values = make([]Value, values)
	for i := range p.Values {
		p.Values[i] = Value{Name: r.str(), Expr: r.ref(len(p.Exprs), "expression"), Import: int(r.int()), Pos: r.pos()}
	}
	p.Rules = make([]Rule, r.count())
	for i := range p.Rules {
		rl := &p.Rules[i]
		rl.ID, rl.Pos, rl.Raise = r.str(), r.pos(), r.str()
		for _, x := range []*int{&rl.When, &rl.Message, &rl.Type, &rl.DeviceID, &rl.Copy, &rl.Capsule, &rl.Flags} {
			*x = r.ref(len(p.Exprs), "expression")
		}
		if r.err == nil && (rl.When < 0 || rl.Raise != "" && rl.Message < 0 || rl.Raise == "" && (rl.Type < 0 || rl.DeviceID < 0)) {
			r.fail("rule %s lacks an expression", rl.ID)
		}
	}
	p.Imports = make([]*Plan, r.count())
	for i := range p.Imports {
		p.Imports[i] = r.plan(depth + 1)
	}
	for _, v := range p.Values {
		if r.err == nil && (v.Import < -1 || v.Import >= len(p.Imports) || (v.Import < 0) == (v.Expr < 0)) {
			r.fail("value %s is neither an expression nor an import", v.Name)
		}
	}
	if r.err == nil {
		if name := p.circularValue(); name != "" {
			r.fail("value %s reads itself", name)
		}
	}
	return p
}

// circularValue is the name of a value whose expression reads itself,
// directly or through other values, or "". The engine builds no such
// plan (values that read each other in a circle do not compile), but a
// forged one would recurse until the evaluator's stack ran out, which
// in Go ends the process.
func (p *Plan) circularValue() string {
	n := len(p.Values)
	reads := make([][]int, n) // the values each value's expression reads
	seen := make([]int, len(p.Nodes))
	for i, v := range p.Values {
		if v.Expr < 0 {
			continue
		}
		stack := []int{p.Exprs[v.Expr].Root}
		for len(stack) > 0 {
			k := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[k] == i+1 {
				continue
			}
			seen[k] = i + 1
			node := &p.Nodes[k]
			if s := node.Slot - len(p.Inputs); node.Op == OpSlot && s >= 0 && s < n {
				reads[i] = append(reads[i], s)
			}
			stack = append(stack, node.Args...)
		}
	}
	// A depth-first walk without recursion: 1 marks a value on the
	// current path, 2 one whose reads are all done.
	state := make([]byte, n)
	type step struct{ value, next int }
	for start := range n {
		if state[start] != 0 {
			continue
		}
		state[start] = 1
		path := []step{{start, 0}}
		for len(path) > 0 {
			top := &path[len(path)-1]
			if top.next == len(reads[top.value]) {
				state[top.value] = 2
				path = path[:len(path)-1]
				continue
			}
			next := reads[top.value][top.next]
			top.next++
			switch state[next] {
			case 1:
				return p.Values[next].Name
			case 0:
				state[next] = 1
				path = append(path, step{next, 0})
			}
		}
	}
	return ""
}

// valid checks a node's arity.
func (n *Node) valid() bool {
	a := len(n.Args)
	switch n.Op {
	case OpConst, OpSlot:
		return a == 0
	case OpAnd, OpOr:
		return a >= 2
	case OpCond:
		return a == 3
	case OpEq, OpNe, OpIndex:
		return a == 2
	case OpSelect:
		_, ok := n.Const.(string)
		return a == 1 && ok
	case OpList:
		return true
	case OpMap:
		return a%2 == 0
	case OpFold:
		return a == 5
	case OpCall:
		switch n.Func {
		case FuncAdd, FuncMultiply, FuncLess, FuncLessEquals, FuncGreater, FuncGreaterEquals, FuncIn,
			FuncContains, FuncStartsWith, FuncEndsWith, FuncIndexOf, FuncSplit:
			return a == 2
		case FuncNot, FuncNotStrictlyFalse, FuncSize, FuncInt, FuncString, FuncDyn:
			return a == 1
		}
	}
	return false
}

func (r *reader) pos() Position {
	return Position{File: r.str(), Line: int(r.uint()), Column: int(r.uint())}
}

func (r *reader) typ(depth int) *Type {
	if depth > MaxDepth {
		r.fail("a type nests deeper than %d", MaxDepth)
		return &Type{}
	}
	t := &Type{Kind: Kind(r.byte()), Nullable: r.byte() == 1, Text: r.str()}
	switch {
	case t.Kind == KindList || t.Kind == KindMap:
		t.Elem = r.typ(depth + 1)
	case t.Kind < KindString || t.Kind > KindMap:
		r.fail("unknown type kind %d", t.Kind)
	}
	return t
}

func (r *reader) value(depth int) any {
	if depth > MaxDepth {
		r.fail("a value nests deeper than %d", MaxDepth)
		return nil
	}
	switch tag := r.byte(); tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		return r.int()
	case tagUint:
		return r.uint()
	case tagDouble:
		if len(r.b) < 8 {
			r.fail("truncated")
			return nil
		}
		f := math.Float64frombits(uint64LE(r.b))
		r.b = r.b[8:]
		return f
	case tagString:
		return r.str()
	case tagList:
		out := make([]any, r.count())
		for i := range out {
			out[i] = r.value(depth + 1)
		}
		return out
	case tagMap:
		m := &Map{}
		for range r.count() {
			m.Keys = append(m.Keys, r.value(depth+1))
			m.Vals = append(m.Vals, r.value(depth+1))
		}
		return m
	case tagObject: // its keys sorted and each once, as MarshalBinary writes them
		var o object
		for range r.count() {
			k := r.str()
			o = append(o, field{k, r.value(depth + 1)})
		}
		return o
	default:
		r.fail("unknown value tag %d", tag)
	}
	return nil
}

// maxShortString is the longest constant shortStrings keeps: the words an
// input is compared with ('gpu', 'pinned_host'), not messages.
const maxShortString = 32

// shortStrings are the distinct string constants of nodes of at most
// maxShortString bytes, boxed as the nodes hold them.
func shortStrings(nodes []Node) []any {
	var out []any
	for i := range nodes {
		s, ok := nodes[i].Const.(string)
		if nodes[i].Op != OpConst || !ok || len(s) > maxShortString || s == "" {
			continue
		}
		seen := false
		for _, v := range out {
			seen = seen || v.(string) == s
		}
		if !seen {
			out = append(out, nodes[i].Const)
		}
	}
	return out
}
