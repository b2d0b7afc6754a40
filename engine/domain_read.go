package engine

import (
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
)

// probes is what the rules test one input against.
type probes struct {
	named  []any           // values compared with the input itself
	elems  map[int64][]any // values compared with each element read of a list input
	sized  bool            // the rules take the input's size
	opaque bool            // a test the reader does not follow mentions it
}

// domainReader reads the tests of one rule set's expressions: comparisons
// (==, !=, <, <=, >, >=), `in`, and the string tests contains, startsWith
// and endsWith. Each operand of a test is a subject (an input, an alias of
// one, or an element input[N]), a probe (a literal, a device-type constant,
// a list of those, or a table column read through a comprehension
// variable: m.marker in gpu_markers.filter(m, ...)), or opaque.
type domainReader struct {
	rs      *RuleSet
	aliases map[string][]string // value name -> what it may stand for: a bare name, or a conditional's branches
	inputs  map[string]*probes
	tested  []any // every probe value of every test, for the fallback
}

func readDomain(rs *RuleSet) *domainReader {
	r := &domainReader{rs: rs, aliases: map[string][]string{}, inputs: map[string]*probes{}}
	for _, in := range rs.inputs {
		r.inputs[in.Name] = &probes{elems: map[int64][]any{}}
	}
	for _, v := range rs.values {
		if v.ast == nil {
			continue // an import's decision
		}
		e := v.ast.NativeRep().Expr()
		if names := aliasOf(e); len(names) > 0 {
			r.aliases[v.name] = names
		}
		r.walk(e, nil)
	}
	for _, rl := range rs.rules {
		exprs := []compiled{rl.when}
		if o := rl.device; o != nil {
			exprs = append(exprs, o.typ, o.id, o.copy, o.capsule, o.flags)
		}
		if rl.raise != nil {
			exprs = append(exprs, rl.raise.message)
		}
		for _, c := range exprs {
			if c.ast != nil { // an optional field left out
				r.walk(c.ast.NativeRep().Expr(), nil)
			}
		}
	}
	return r
}

// aliasOf is what a value's expression may be, name for name: a bare
// name (kind: memory_kind), or the names among a conditional's branches
// (target: dl_device != null ? dl_device : source), so that tests of the
// value are tests of those names.
func aliasOf(e ast.Expr) []string {
	switch e.Kind() {
	case ast.IdentKind:
		return []string{e.AsIdent()}
	case ast.CallKind:
		if c := e.AsCall(); c.FunctionName() == operators.Conditional && len(c.Args()) == 3 {
			return append(aliasOf(c.Args()[1]), aliasOf(c.Args()[2])...)
		}
	}
	return nil
}

// resolve follows value aliases to the inputs or tables a name may stand
// for; a name that is no alias stands for itself.
func (r *domainReader) resolve(name string) []string {
	var out []string
	seen := map[string]bool{}
	var follow func(string)
	follow = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		to, ok := r.aliases[n]
		if !ok {
			out = append(out, n)
			return
		}
		for _, t := range to {
			follow(t)
		}
	}
	follow(name)
	return out
}

// subjects are the inputs among names.
func (r *domainReader) subjects(names []string) []string {
	var out []string
	for _, n := range names {
		if r.inputs[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// scope maps a comprehension's variables to the table they range over, or
// to "" for a variable that ranges over anything else.
type scope map[string]string

func (s scope) with(vars map[string]string) scope {
	out := make(scope, len(s)+len(vars))
	for k, v := range s {
		out[k] = v
	}
	for k, v := range vars {
		out[k] = v
	}
	return out
}

var orderings = map[string]bool{
	operators.Less: true, operators.LessEquals: true, operators.Greater: true, operators.GreaterEquals: true,
}

func (r *domainReader) walk(e ast.Expr, sc scope) {
	switch e.Kind() {
	case ast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch fn := c.FunctionName(); {
		case len(args) == 2 && (fn == operators.Equals || fn == operators.NotEquals || orderings[fn]):
			r.test(args[0], args[1], fn, sc)
		case len(args) == 2 && fn == operators.In:
			r.test(args[0], args[1], fn, sc)
		case c.IsMemberFunction() && len(args) == 1 && (fn == overloads.Contains || fn == overloads.StartsWith || fn == overloads.EndsWith):
			r.test(c.Target(), args[0], fn, sc)
		case fn == operators.Index || fn == operators.OptIndex:
			if op := r.operand(e, sc); op.index >= 0 {
				for _, subj := range op.subjects {
					p := r.inputs[subj] // an element read, tested or not, is in every list
					p.elems[op.index] = append(p.elems[op.index], op.values...)
				}
			}
		case fn == overloads.Size:
			subject := c.Target()
			if !c.IsMemberFunction() && len(args) == 1 {
				subject = args[0]
			}
			if op := r.operand(subject, sc); op.index < 0 {
				for _, subj := range op.subjects {
					r.inputs[subj].sized = true
				}
			}
		}
		if c.IsMemberFunction() {
			r.walk(c.Target(), sc)
		}
		for _, a := range args {
			r.walk(a, sc)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		r.walk(c.IterRange(), sc)
		r.walk(c.AccuInit(), sc)
		vars := map[string]string{c.IterVar(): r.tableOf(c.IterRange(), sc), c.AccuVar(): ""}
		if c.HasIterVar2() {
			vars[c.IterVar()], vars[c.IterVar2()] = "", ""
		}
		inner := sc.with(vars)
		r.walk(c.LoopCondition(), inner)
		r.walk(c.LoopStep(), inner)
		r.walk(c.Result(), inner)
	case ast.SelectKind:
		r.walk(e.AsSelect().Operand(), sc)
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			r.walk(el, sc)
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			r.walk(en.AsMapEntry().Key(), sc)
			r.walk(en.AsMapEntry().Value(), sc)
		}
	}
}

// tableOf is the table an expression names, through aliases, or "".
func (r *domainReader) tableOf(e ast.Expr, sc scope) string {
	if e.Kind() != ast.IdentKind {
		return ""
	}
	if _, shadowed := sc[e.AsIdent()]; shadowed {
		return ""
	}
	for _, name := range r.resolve(e.AsIdent()) {
		for _, t := range r.rs.tables {
			if t.name == name {
				return name
			}
		}
	}
	return ""
}

// operand is one side of a test.
type operand struct {
	subjects []string // the inputs tested (more than one through a conditional)
	index    int64    // the list element tested, or -1
	values   []any    // a probe's values
	mentions []string // an opaque operand's inputs, named directly
}

func (r *domainReader) operand(e ast.Expr, sc scope) operand {
	op := operand{index: -1}
	switch e.Kind() {
	case ast.IdentKind:
		if _, local := sc[e.AsIdent()]; local {
			return op
		}
		names := r.resolve(e.AsIdent())
		op.subjects = r.subjects(names)
		if code, ok := r.rs.deviceCode(names[0]); ok && len(names) == 1 {
			op.values = []any{code}
		}
		return op
	case ast.LiteralKind:
		if v, ok := literal(e); ok {
			op.values = []any{v}
		}
		return op
	case ast.SelectKind:
		if s := e.AsSelect(); !s.IsTestOnly() {
			if op.values = r.cells(s.Operand(), s.FieldName(), sc); op.values != nil {
				return op
			}
		}
	case ast.CallKind:
		c := e.AsCall()
		if args := c.Args(); (c.FunctionName() == operators.Index || c.FunctionName() == operators.OptIndex) && len(args) == 2 {
			key, _ := literal(args[1])
			if col, ok := key.(string); ok {
				if op.values = r.cells(args[0], col, sc); op.values != nil {
					return op // m['marker']
				}
			}
			list := r.operand(args[0], sc)
			if n, ok := key.(int64); ok && len(list.subjects) > 0 && list.index < 0 && n >= 0 && n < MaxListLen {
				list.index = n
				return list // dl_device[0]
			}
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			p := r.operand(el, sc)
			if p.values == nil {
				return operand{index: -1, mentions: r.mentions(e, sc, nil)}
			}
			op.values = append(op.values, p.values...)
		}
		return op
	}
	op.mentions = r.mentions(e, sc, nil)
	return op
}

// cells is a table column read through a comprehension variable that
// ranges over the table (m.marker), or nil.
func (r *domainReader) cells(row ast.Expr, col string, sc scope) []any {
	if row.Kind() != ast.IdentKind || sc[row.AsIdent()] == "" {
		return nil
	}
	return r.rs.column(sc[row.AsIdent()], col)
}

// test records what a comparison or string test names for its subject; a
// probe compared with an opaque expression marks the inputs that
// expression names for the fallback.
func (r *domainReader) test(x, y ast.Expr, fn string, sc scope) {
	ox, oy := r.operand(x, sc), r.operand(y, sc)
	for side, pair := range [2][2]operand{{ox, oy}, {oy, ox}} {
		subj, probe := pair[0], pair[1]
		if probe.values == nil {
			continue
		}
		r.tested = append(r.tested, probe.values...)
		if len(subj.subjects) == 0 {
			for _, name := range subj.mentions {
				r.inputs[name].opaque = true
			}
			continue
		}
		for _, name := range subj.subjects {
			p := r.inputs[name]
			for _, v := range probe.values {
				vs := []any{v}
				if orderings[fn] {
					vs = sides(fn, side == 0, v)
				}
				if subj.index >= 0 {
					p.elems[subj.index] = append(p.elems[subj.index], vs...)
				} else {
					p.named = append(p.named, vs...)
				}
			}
		}
	}
}

// mentions lists the inputs an expression names directly or through an
// alias. A value that computes from an input is not looked through: its
// own tests were read where it is defined.
func (r *domainReader) mentions(e ast.Expr, sc scope, out []string) []string {
	switch e.Kind() {
	case ast.IdentKind:
		if _, local := sc[e.AsIdent()]; !local {
			out = append(out, r.subjects(r.resolve(e.AsIdent()))...)
		}
	case ast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			out = r.mentions(c.Target(), sc, out)
		}
		for _, a := range c.Args() {
			out = r.mentions(a, sc, out)
		}
	case ast.SelectKind:
		out = r.mentions(e.AsSelect().Operand(), sc, out)
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			out = r.mentions(el, sc, out)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		inner := sc.with(map[string]string{c.IterVar(): "", c.IterVar2(): "", c.AccuVar(): ""})
		out = r.mentions(c.IterRange(), sc, out)
		out = r.mentions(c.AccuInit(), sc, out)
		for _, part := range []ast.Expr{c.LoopCondition(), c.LoopStep(), c.Result()} {
			out = r.mentions(part, inner, out)
		}
	}
	return out
}

// literal converts a CEL literal to the Go value inputs take; null is not
// a probe (nullable inputs always get null).
func literal(e ast.Expr) (any, bool) {
	if e.Kind() != ast.LiteralKind {
		return nil, false
	}
	switch v := e.AsLiteral().(type) {
	case types.String:
		return string(v), true
	case types.Int:
		return int64(v), true
	case types.Uint:
		if int64(v) >= 0 {
			return int64(v), true
		}
	case types.Double:
		return float64(v), true
	case types.Bool:
		return bool(v), true
	}
	return nil, false
}

// sides are the two values either side of the boundary an ordering draws
// at a number: shards > 1 gives 1 (false) and 2 (true); stream < -1 gives
// -2 and -1. subjectLeft says whether the input is the left operand.
func sides(fn string, subjectLeft bool, v any) []any {
	if !subjectLeft { // n < x is x > n
		fn = map[string]string{operators.Less: operators.Greater, operators.LessEquals: operators.GreaterEquals,
			operators.Greater: operators.Less, operators.GreaterEquals: operators.LessEquals}[fn]
	}
	below := fn == operators.Less || fn == operators.GreaterEquals // the boundary is just below n
	switch n := v.(type) {
	case int64:
		if n > -1<<62 && n < 1<<62 {
			if below {
				return []any{n - 1, n}
			}
			return []any{n, n + 1}
		}
	case float64:
		if below {
			return []any{n - 1, n}
		}
		return []any{n, n + 1}
	}
	return []any{v}
}

// deviceCode is the code of a device-type constant.
func (rs *RuleSet) deviceCode(name string) (int64, bool) {
	for _, dt := range rs.deviceTypes {
		if dt.Name == name {
			return dt.Code, true
		}
	}
	return 0, false
}

// column is every non-null cell of a table's column, in row order; device
// types are their codes.
func (rs *RuleSet) column(table, col string) []any {
	var out []any
	for _, t := range rs.tables {
		if t.name != table {
			continue
		}
		rows, _ := t.val.Value().([]any)
		for _, row := range rows {
			if cell, _ := row.(map[string]any)[col]; cell != nil {
				out = append(out, cell)
			}
		}
	}
	return out
}
