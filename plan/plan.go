package plan

// Magic starts every plan's bytes.
const Magic = "DLPLAN"

// FormatVersion is the version of the encoding after Magic. Decode
// refuses any other: a plan is rebuilt from its rules, never migrated.
// Version 2 added the rules' and values' positions, for explain traces.
const FormatVersion = 2

// Plan is one rule-set version's decision, compiled. It is immutable
// once built or decoded, and Decide is safe from many goroutines.
type Plan struct {
	// Ref is "name@version", as decisions name their rule set.
	Ref string
	// StepLimit bounds the nodes one decision evaluates, imports
	// included; past it Decide answers CodeCostLimit.
	StepLimit uint64
	// Inputs are the declared inputs, imports' first, in file order.
	Inputs []Input
	// DeviceTypes name the device-type codes an outcome may give.
	DeviceTypes []DeviceType
	// Values are the named values, computed the first time read.
	Values []Value
	// Rules are tried in order; the first whose When holds decides.
	Rules []Rule
	// Exprs are the top-level expressions, each the root of a tree in
	// Nodes.
	Exprs []Expr
	// Nodes are every expression's nodes; a node's Args index Nodes.
	Nodes []Node
	// Imports are the versions this one imports, each a whole plan.
	Imports []*Plan
	// Locals is how many comprehension variables the expressions use:
	// slots after the inputs' and the values'.
	Locals int

	// strs are the plan's short string constants, each boxed once: an
	// input's string equal to one is read as that value, with none of a
	// string's two allocations. Decode fills it; a plan without it
	// decides alike.
	strs []any
}

// DeviceType is one entry of the device-type table.
type DeviceType struct {
	Name string
	Code int64
}

// Kind is the kind of a declared type.
type Kind uint8

// The kinds of declared types, as rules.yaml writes them.
const (
	KindString Kind = iota + 1
	KindInt
	KindUint
	KindDouble
	KindBool
	KindDyn
	KindList
	KindMap
)

// Type is a declared input type: "string", "int?", "list(int)",
// "map(string, dyn)".
type Type struct {
	Kind     Kind
	Elem     *Type // list element, map value
	Nullable bool
	Text     string // as written, for messages
}

// Input is one declared input.
type Input struct {
	Name     string
	Type     *Type
	Required bool
	// Default is a JSON value (nil, bool, int64, float64, string, []any,
	// map[string]any) when not Required. Decode reads an object into
	// the evaluator's own form, the one its input reader gives.
	Default any
}

// Value is a named value: an expression (Expr >= 0) or, Import >= 0,
// the decision of Imports[Import] for the same input.
type Value struct {
	Name   string
	Expr   int
	Import int
	// Pos is where an explanation places the value: its expression's
	// start, or an import's declaration.
	Pos Position
}

// Rule is one rule: a condition and an outcome, a device (Type, ID and
// the optional Copy, Capsule, Flags) or an exception (Raise, Message).
// Expression fields index Exprs; -1 is absent.
type Rule struct {
	ID                   string
	Pos                  Position // the rule's place in the rule file, for explanations
	When                 int
	Raise                string // the exception type, such as BufferError; "" for a device
	Message              int
	Type, DeviceID       int
	Copy, Capsule, Flags int
}

// Expr is one top-level expression: its root node and where it is.
type Expr struct {
	Root int
	Pos  Position
	// Source is the line of the file at Pos, without its newline.
	Source string
}

// Op is what a node does.
type Op uint8

// The operations of nodes.
const (
	OpConst  Op = iota + 1 // Const
	OpSlot                 // an input, value or comprehension variable: Slot
	OpCall                 // Func of Args
	OpAnd                  // Args[0] && Args[1] && ...
	OpOr                   // Args[0] || Args[1] || ...
	OpCond                 // Args[0] ? Args[1] : Args[2]
	OpEq                   // Args[0] == Args[1]
	OpNe                   // Args[0] != Args[1]
	OpIndex                // Args[0][Args[1]]
	OpSelect               // Args[0].Const (a string)
	OpList                 // [Args...]
	OpMap                  // {Args[0]: Args[1], ...}
	OpFold                 // a comprehension: range, init, condition, step, result; Slot the element, Slot2 the accumulator
	opEnd
)

// Func is a function a call node applies.
type Func uint8

// The functions plans call: the CEL the shipped rule sets use.
const (
	FuncNot              Func = iota + 1 // !x
	FuncNotStrictlyFalse                 // the loop condition of all and exists
	FuncAdd                              // x + y: strings and lists
	FuncMultiply                         // x * y
	FuncLess                             // x < y
	FuncLessEquals                       // x <= y
	FuncGreater                          // x > y
	FuncGreaterEquals                    // x >= y
	FuncIn                               // x in list, x in map
	FuncSize                             // size(x), x.size()
	FuncInt                              // int(x)
	FuncString                           // string(x)
	FuncDyn                              // dyn(x)
	FuncContains                         // s.contains(t)
	FuncStartsWith                       // s.startsWith(t)
	FuncEndsWith                         // s.endsWith(t)
	FuncIndexOf                          // s.indexOf(t)
	FuncSplit                            // s.split(t)
	funcEnd
)

// funcNames are the CEL names of the functions, as cel-go's messages
// name them.
var funcNames = [...]string{
	FuncNot: "!_", FuncNotStrictlyFalse: "@not_strictly_false", FuncAdd: "_+_", FuncMultiply: "_*_",
	FuncLess: "_<_", FuncLessEquals: "_<=_", FuncGreater: "_>_", FuncGreaterEquals: "_>=_",
	FuncIn: "@in", FuncSize: "size", FuncInt: "int", FuncString: "string", FuncDyn: "dyn",
	FuncContains: "contains", FuncStartsWith: "startsWith", FuncEndsWith: "endsWith",
	FuncIndexOf: "indexOf", FuncSplit: "split",
}

// String is the function's CEL name.
func (f Func) String() string {
	if f > 0 && f < funcEnd {
		return funcNames[f]
	}
	return "unknown"
}

// FuncNamed is the function with a CEL name, or 0.
func FuncNamed(name string) Func {
	for f := Func(1); f < funcEnd; f++ {
		if funcNames[f] == name {
			return f
		}
	}
	return 0
}

// Node is one node of an expression tree.
type Node struct {
	Op    Op
	Func  Func  // OpCall
	Args  []int // children, by index in Nodes
	Const any   // OpConst: the value; OpSelect: the field name
	Slot  int   // OpSlot; OpFold: the element variable
	Slot2 int   // OpFold: the accumulator
	// Line and Column are where the node starts in the rule file.
	Line, Column int
}

// Position is a place in a rule file, as the engine reports it.
type Position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}
