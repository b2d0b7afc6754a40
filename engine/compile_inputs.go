package engine

import (
	"regexp"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"go.yaml.in/yaml/v3"
)

// The declarations of rules.yaml: its inputs, tables and values.

func (b *builder) inputs(f *sourceFile, n *yaml.Node) []cel.EnvOption {
	var opts []cel.EnvOption
	for _, fl := range f.mapping(&b.errs, n, "inputs", nil) {
		if !b.declare(f, fl.key, "input") {
			continue
		}
		in := input{InputDecl: InputDecl{Name: fl.key.Value, Required: true}, pos: f.position(f.offset(fl.key.Line, fl.key.Column))}
		typeNode, defNode := fl.value, (*yaml.Node)(nil)
		if fl.value.Kind == yaml.MappingNode {
			spec := f.mapping(&b.errs, fl.value, "input "+in.Name, []string{"type", "default", "doc"})
			typeNode = f.required(&b.errs, spec, fl.value, "type", "input "+in.Name)
			defNode = lookup(spec, "default")
			if d := lookup(spec, "doc"); d != nil {
				in.Doc, _ = f.scalar(&b.errs, d, "doc")
			}
		}
		if typeNode == nil {
			continue
		}
		text, ok := f.scalar(&b.errs, typeNode, "the type of "+in.Name)
		if !ok {
			continue
		}
		t, err := parseType(text, false)
		if err != nil {
			b.add(f.errNode(CodeBadType, typeNode, "input %s: %v", in.Name, err))
			continue
		}
		in.typ, in.Type = t, t.text
		if defNode != nil {
			in.Required = false
			in.Default = yamlValue(f, &b.errs, defNode)
			if _, err := t.check(nil, in.Default); err != nil {
				b.add(f.errNode(CodeWrongType, defNode, "the default of %s %v", in.Name, err))
			}
		}
		b.slot(in.Name)
		b.sizes.inputs[in.Name] = t
		b.rs.inputs = append(b.rs.inputs, in)
		opts = append(opts, cel.Variable(in.Name, t.celType()))
	}
	return opts
}

// tables compiles named tables of data: ordered rows of typed columns,
// seen by CEL as a list of maps.
func (b *builder) tables(f *sourceFile, n *yaml.Node) []cel.EnvOption {
	var opts []cel.EnvOption
	for _, fl := range f.mapping(&b.errs, n, "tables", nil) {
		if !b.declare(f, fl.key, "table") {
			continue
		}
		name := fl.key.Value
		spec := f.mapping(&b.errs, fl.value, "table "+name, []string{"doc", "columns", "rows"})
		colNode := f.required(&b.errs, spec, fl.value, "columns", "table "+name)
		rowNode := f.required(&b.errs, spec, fl.value, "rows", "table "+name)
		if colNode == nil || rowNode == nil {
			continue
		}
		var cols []string
		colTypes := map[string]*valueType{}
		for _, c := range f.mapping(&b.errs, colNode, "columns", nil) {
			text, ok := f.scalar(&b.errs, c.value, "the type of column "+c.key.Value)
			if !ok {
				continue
			}
			t, err := parseType(text, true)
			if err != nil {
				b.add(f.errNode(CodeBadType, c.value, "column %s: %v", c.key.Value, err))
				continue
			}
			cols = append(cols, c.key.Value)
			colTypes[c.key.Value] = t
		}
		if rowNode.Kind != yaml.SequenceNode {
			b.add(f.errNode(CodeSchema, rowNode, "rows of table %s must be a list", name))
			continue
		}
		rows := make([]any, 0, len(rowNode.Content))
		for _, r := range rowNode.Content {
			rows = append(rows, b.row(f, name, r, cols, colTypes))
		}
		elem := cel.DynType
		if t := commonType(cols, colTypes); t != nil {
			elem = t.celType()
		}
		b.slot(name)
		b.sizes.tables[name] = measureTable(rows, len(cols))
		b.rs.tables = append(b.rs.tables, table{name: name, val: types.DefaultTypeAdapter.NativeToValue(rows)})
		opts = append(opts, cel.Variable(name, cel.ListType(cel.MapType(cel.StringType, elem))))
	}
	return opts
}

// row checks one table row: every column, no other key, device types by
// name. A nullable column may be left out.
func (b *builder) row(f *sourceFile, table string, r *yaml.Node, cols []string, colTypes map[string]*valueType) map[string]any {
	out := map[string]any{}
	cells := f.mapping(&b.errs, r, "a row of "+table, cols)
	for _, c := range cols {
		t, cell := colTypes[c], lookup(cells, c)
		if cell == nil {
			if !t.nullable {
				b.add(f.errNode(CodeSchema, r, "this row of %s has no %q", table, c))
			}
			out[c] = nil
			continue
		}
		v := yamlValue(f, &b.errs, cell)
		if t.kind == kindDeviceType && v != nil {
			name, _ := v.(string)
			code, ok := b.codes[name]
			if !ok {
				e := f.errNode(CodeUnknownDevice, cell, "unknown device type %s in column %s", kindName(cell), c)
				e.Hint = "device types are declared in " + DeviceTypesFile
				b.add(e)
				continue
			}
			v = code
		}
		if _, err := t.check(nil, v); err != nil {
			b.add(f.errNode(CodeWrongType, cell, "column %s %v", c, err))
			continue
		}
		out[c] = v
	}
	return out
}

func measureTable(rows []any, cols int) tableSize {
	t := tableSize{rows: uint64(len(rows)), cols: uint64(cols)}
	for _, r := range rows {
		for _, v := range r.(map[string]any) {
			if s, ok := v.(string); ok {
				t.maxCell = max(t.maxCell, uint64(len(s)))
			}
		}
	}
	return t
}

// commonType is the one type of every column, or nil when they differ or
// any may be null (CEL then sees the cells as dyn).
func commonType(cols []string, colTypes map[string]*valueType) *valueType {
	var t *valueType
	for _, c := range cols {
		ct := colTypes[c]
		if ct.nullable || t != nil && ct.celType().String() != t.celType().String() {
			return nil
		}
		t = ct
	}
	return t
}

// values compiles the named intermediate values in order; each sees the ones
// before it. It returns the environment the rules see.
func (b *builder) values(f *sourceFile, env *cel.Env, n *yaml.Node) *cel.Env {
	for _, fl := range f.mapping(&b.errs, n, "values", nil) {
		if !b.declare(f, fl.key, "value") {
			continue
		}
		src, ok := f.scalar(&b.errs, fl.value, "value "+fl.key.Value)
		if !ok {
			continue
		}
		c, ast := b.compile(env, expression{f, fl.value, src}, "value "+fl.key.Value, nil, "")
		if ast == nil {
			// Declared as dyn, so that what reads it is still checked
			// without an "undeclared reference" for each use.
			if next, err := b.extend(env, fl.key.Value, cel.DynType); err == nil {
				env = next
			}
			continue
		}
		if !b.spendValue(f, fl.key) {
			continue
		}
		next, err := b.extend(env, fl.key.Value, ast.OutputType())
		if err != nil {
			b.add(f.errNode(CodeCELType, fl.key, "%v", err))
			continue
		}
		env = next
		b.slot(fl.key.Value)
		b.rs.values = append(b.rs.values, value{name: fl.key.Value, compiled: c})
	}
	return env
}

// extend declares one more variable, keeping the environment's digest
// for Options.Cache, and taking the environment from the Cache where a
// load made the same one before (cel-go's Extend configures a whole
// environment again: a quarter of a load whose programs are all cached).
func (b *builder) extend(env *cel.Env, name string, t *cel.Type) (*cel.Env, error) {
	d, ok := b.envs[env]
	if !ok {
		return env.Extend(cel.Variable(name, t))
	}
	nd := extendDigest(d, name, t)
	if next, ok := b.opts.Cache.env(nd); ok {
		b.envs[next] = nd
		return next, nil
	}
	next, err := env.Extend(cel.Variable(name, t))
	if err == nil {
		b.envs[next] = nd
		b.opts.Cache.keepEnv(nd, next)
	}
	return next, err
}

var ruleID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
var exceptionName = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*$`)
