package engine

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"go.yaml.in/yaml/v3"

	"github.com/dlroute/dlroute/internal/memo"
)

// builder compiles one version directory, collecting every error.
type builder struct {
	rs    *RuleSet
	opts  Options
	errs  ErrorList
	names map[string]Position // every name visible to CEL, for duplicates
	codes map[string]int64    // device type name -> code
	sizes sizeBounds          // for the static cost estimate
	imp   importFunc          // loads an imported version

	// envs holds the digest of each environment expressions compile in,
	// for Options.Cache; an environment not in it compiles uncached.
	envs map[*cel.Env][sha256.Size]byte
	// parserKey names the macros the parser of this version's
	// environments expands, for its ParsedFile (parsed.go): values extend
	// the environment with variables, never with macros.
	parserKey string

	inherited []string // device types that came from imports
}

// builtinNames are the names every rule set sees without declaring them.
var builtinNames = append([]string{"device_type_names"}, flagNames...)

// builtins declares the DLPack flags and device_type_names, a map from
// each device type code to its name: device_type_names[dl_device[0]].
func (b *builder) builtins() []cel.EnvOption {
	names := make(map[int64]string, len(b.rs.deviceTypes))
	for _, dt := range b.rs.deviceTypes {
		names[dt.Code] = dt.Name
	}
	return append(flagConstants(),
		cel.Constant("device_type_names", cel.MapType(cel.IntType, cel.StringType), types.DefaultTypeAdapter.NativeToValue(names)))
}

// loadVersion reads and compiles rules/<name>/<version>/. It returns a
// RuleSet only when the version has no error at all. imp loads a version
// the rules import, or says why it cannot.
func loadVersion(fsys fs.FS, dir string, opts Options, imp importFunc) (*RuleSet, ErrorList) {
	name, version := path.Split(dir)
	name = strings.TrimSuffix(name, "/")
	b := &builder{
		rs:    &RuleSet{name: name, version: version, ref: name + "@" + version, slots: map[string]int{}, deviceNames: map[int64]string{}},
		opts:  opts,
		names: map[string]Position{},
		codes: map[string]int64{},
		sizes: sizeBounds{inputs: map[string]*valueType{}, tables: map[string]tableSize{}},
		imp:   imp,
	}
	if _, ok := parseVersion(version); !ok {
		return nil, ErrorList{{Code: CodeBadVersion, Pos: &Position{File: path.Join(opts.root(), dir)},
			Message: fmt.Sprintf("version directory %q is not named v<N> or v<N>.<N>", version),
			Hint:    "name versions v1, v2, ...; the highest is the default"}}
	}
	files := map[string]*sourceFile{}
	var missingTypes *Error
	for _, fn := range []string{ManifestFile, DeviceTypesFile, RulesFile, TestsFile} {
		f, err := readSource(fsys, dir, fn, opts)
		if fn == DeviceTypesFile && err != nil && err.Code == CodeMissingFile {
			missingTypes = err // optional where the rules import a version
			continue
		}
		if err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		files[fn] = f
	}
	if len(b.errs) > 0 {
		return nil, b.errs
	}
	b.manifest(files[ManifestFile])
	root, err := b.opts.Cache.tree(files[RulesFile])
	if err != nil {
		b.add(err)
		return nil, b.errs
	}
	ruleFields := files[RulesFile].mapping(&b.errs, root, "rules.yaml", []string{"imports", "inputs", "tables", "values", "rules"})
	b.imports(files[RulesFile], lookup(ruleFields, "imports"))
	switch {
	case files[DeviceTypesFile] != nil:
		b.deviceTypes(files[DeviceTypesFile])
	case lookup(ruleFields, "imports") == nil:
		b.add(missingTypes)
	}
	if len(b.errs) == 0 {
		b.ruleFile(files[RulesFile], root, ruleFields)
	}
	if len(b.errs) == 0 && !opts.SkipTests {
		b.tests(files[TestsFile])
	}
	if len(b.errs) > 0 {
		return nil, b.errs
	}
	b.rs.costLimit = cmp.Or(opts.CostLimit, DefaultCostLimit)
	b.rs.memo = memo.New[Decision](memoSize(opts.MemoSize))
	return b.rs, nil
}

func (b *builder) add(e *Error) { b.errs = append(b.errs, e) }

// declare records a name visible to CEL, refusing duplicates across inputs,
// tables, values and device types.
func (b *builder) declare(f *sourceFile, key *yaml.Node, what string) bool {
	if !isIdent(key.Value) {
		b.add(f.errNode(CodeSchema, key, "%s name %q is not a CEL identifier", what, key.Value))
		return false
	}
	if contains(builtinNames, key.Value) {
		b.add(f.errNode(CodeDuplicate, key, "%s name %q is built in; choose another", what, key.Value))
		return false
	}
	if prev, dup := b.names[key.Value]; dup {
		e := f.errNode(CodeDuplicate, key, "%s name %q is already declared at %s", what, key.Value, prev)
		b.add(e)
		return false
	}
	b.names[key.Value] = f.position(f.offset(key.Line, key.Column))
	return true
}

func (b *builder) manifest(f *sourceFile) {
	root, err := b.opts.Cache.tree(f)
	if err != nil {
		b.add(err)
		return
	}
	fields := f.mapping(&b.errs, root, "the manifest", []string{"name", "version", "description", "mirrors"})
	m := &b.rs.manifest
	str := func(fields []field, parent *yaml.Node, key string, dst *string, required bool) {
		n := lookup(fields, key)
		if n == nil {
			if required {
				b.add(f.errNode(CodeSchema, parent, "the manifest needs %q", key))
			}
			return
		}
		*dst, _ = f.scalar(&b.errs, n, key)
	}
	str(fields, root, "name", &m.Name, true)
	str(fields, root, "version", &m.Version, true)
	str(fields, root, "description", &m.Description, true)
	if n := lookup(fields, "name"); n != nil && m.Name != b.rs.name {
		b.add(f.errNode(CodeSchema, n, "the manifest names %q but its directory is %q", m.Name, b.rs.name))
	}
	if n := lookup(fields, "version"); n != nil && m.Version != b.rs.version {
		b.add(f.errNode(CodeSchema, n, "the manifest says version %q but its directory is %q", m.Version, b.rs.version))
	}
	up := f.required(&b.errs, fields, root, "mirrors", "the manifest")
	if up == nil {
		return
	}
	ufields := f.mapping(&b.errs, up, "mirrors", []string{"project", "commit", "date", "files", "note", "commits", "releases"})
	str(ufields, up, "project", &m.Mirrors.Project, true)
	str(ufields, up, "commit", &m.Mirrors.Commit, false)
	str(ufields, up, "date", &m.Mirrors.Date, false)
	str(ufields, up, "note", &m.Mirrors.Note, false)
	if n := lookup(ufields, "commits"); n != nil {
		r := &CommitRange{}
		rf := f.mapping(&b.errs, n, "commits", []string{"from", "to"})
		str(rf, n, "from", &r.From, true)
		str(rf, n, "to", &r.To, false)
		m.Mirrors.Commits = r
	}
	if n := lookup(ufields, "releases"); n != nil {
		m.Mirrors.Releases = b.releaseRange(f, n)
	}
	if n := lookup(ufields, "files"); n != nil {
		if n.Kind != yaml.SequenceNode {
			b.add(f.errNode(CodeSchema, n, "files must be a list"))
			return
		}
		for _, item := range n.Content {
			if s, ok := f.scalar(&b.errs, item, "a file"); ok {
				m.Mirrors.Files = append(m.Mirrors.Files, s)
			}
		}
	}
}

// releaseRange reads mirrors.releases at n: first and last, release
// numbers in order, and checked, each release in [first, last] with how it
// was checked; last must be one of them, since a range ends at the newest
// release checked against its real code.
func (b *builder) releaseRange(f *sourceFile, n *yaml.Node) *ReleaseRange {
	r := &ReleaseRange{}
	fields := f.mapping(&b.errs, n, "releases", []string{"first", "last", "checked"})
	if fields == nil {
		return r
	}
	end := func(key string, dst *string) []int {
		v := lookup(fields, key)
		if v == nil {
			return nil
		}
		s, ok := f.scalar(&b.errs, v, "releases: "+key)
		if !ok {
			return nil
		}
		*dst = s
		rel, err := parseRelease(s)
		if err != nil {
			b.add(f.errNode(CodeSchema, v, "releases: %s: %v", key, err))
		}
		return rel
	}
	if lookup(fields, "first") == nil {
		b.add(f.errNode(CodeSchema, n, "releases needs %q", "first"))
	}
	first := end("first", &r.First)
	if lookup(fields, "last") == nil {
		e := f.errNode(CodeSchema, n, "releases has no last: a range ends at the newest release checked against its real code, never open-ended (\"and later\")")
		e.Hint = `add last: "X.Y.Z", the newest release checked, and list it in checked: {"X.Y.Z": run} (run by python -m dlroute check) or source (read from its source only)`
		b.add(e)
	}
	last := end("last", &r.Last)
	if first != nil && last != nil && compareReleases(first, last) > 0 {
		b.add(f.errNode(CodeSchema, lookup(fields, "last"), "releases: first %s comes after last %s", r.First, r.Last))
	}
	checked := lookup(fields, "checked")
	if checked == nil {
		e := f.errNode(CodeSchema, n, "releases needs \"checked\": each release checked against its real code, and how")
		e.Hint = `checked: {"X.Y.Z": run} for a release run by python -m dlroute check, source for one read from its source only`
		b.add(e)
		return r
	}
	r.Checked = map[string]Check{}
	for _, fl := range f.mapping(&b.errs, checked, "releases: checked", nil) {
		rel, err := parseRelease(fl.key.Value)
		switch {
		case err != nil:
			b.add(f.errNode(CodeSchema, fl.key, "releases: checked: %v", err))
		case first != nil && last != nil && !r.covers(rel):
			e := f.errNode(CodeSchema, fl.key, "releases: checked: %s is outside the range %s", fl.key.Value, r)
			e.Hint = "a release checked is one the range claims: widen first or last, or list it under the version whose range holds it"
			b.add(e)
		}
		how, ok := f.scalar(&b.errs, fl.value, "how "+fl.key.Value+" was checked")
		if !ok {
			continue
		}
		if Check(how) != CheckRun && Check(how) != CheckSource {
			e := f.errNode(CodeSchema, fl.value, "releases: checked: %s was checked %q; how is run or source", fl.key.Value, how)
			e.Hint = "run: run here by python -m dlroute check against the real release; source: read from its source only"
			b.add(e)
			continue
		}
		r.Checked[fl.key.Value] = Check(how)
	}
	if v := lookup(fields, "last"); v != nil && r.Last != "" {
		if _, ok := r.Checked[r.Last]; !ok && !hasKey(checked, r.Last) {
			e := f.errNode(CodeSchema, v, "releases: last %s is not in checked: the newest release claimed must be one checked against its real code", r.Last)
			e.Hint = fmt.Sprintf(`add "%s": run (or source) under checked, or end the range at the newest release that was checked`, r.Last)
			b.add(e)
		}
	}
	return r
}

// hasKey reports whether mapping n has key, spelt as written.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func (b *builder) deviceTypes(f *sourceFile) {
	root, err := b.opts.Cache.tree(f)
	if err != nil {
		b.add(err)
		return
	}
	fields := f.mapping(&b.errs, root, "device_types.yaml", []string{"device_types"})
	table := f.required(&b.errs, fields, root, "device_types", "device_types.yaml")
	if table == nil {
		return
	}
	for _, fl := range f.mapping(&b.errs, table, "device_types", nil) {
		var code int64
		if err := fl.value.Decode(&code); err != nil || fl.value.Tag != "!!int" || code < 0 {
			b.add(f.errNode(CodeSchema, fl.value, "the code of %s must be a non-negative int, not %s", fl.key.Value, kindName(fl.value)))
			continue
		}
		if inherited, ok := b.codes[fl.key.Value]; ok && b.inheritedType(fl.key.Value) {
			if inherited != code {
				b.add(f.errNode(CodeDuplicate, fl.value, "%s is %d in the imported rules; here %d", fl.key.Value, inherited, code))
			}
			continue // the same entry as the import's
		}
		if prev, dup := b.rs.deviceNames[code]; dup {
			b.add(f.errNode(CodeDuplicate, fl.value, "code %d is already %s", code, prev))
			continue
		}
		if !b.declare(f, fl.key, "device type") {
			continue
		}
		b.codes[fl.key.Value] = code
		b.rs.deviceNames[code] = fl.key.Value
		b.rs.deviceTypes = append(b.rs.deviceTypes, DeviceType{Name: fl.key.Value, Code: code})
	}
	if len(b.rs.deviceTypes) == 0 {
		b.add(f.errNode(CodeSchema, table, "device_types is empty"))
	}
}

// ruleFile compiles rules.yaml: imports' inputs, inputs, tables, imports'
// decisions, values, then rules, each seeing the names declared before it.
func (b *builder) ruleFile(f *sourceFile, root *yaml.Node, fields []field) {
	opts := []cel.EnvOption{
		// Versions pinned so that a cel-go upgrade adds no function to a
		// rule set behind its back; see RATIONALE.md.
		// Version 5 adds no function to 4: it costs what the strings
		// functions read and build, and caps format's precision at 100
		// (see stringGrowth and RATIONALE.md).
		ext.Strings(ext.StringsVersion(5)),
		cel.OptionalTypes(cel.OptionalTypesVersion(2)),
	}
	for _, dt := range b.rs.deviceTypes {
		opts = append(opts, cel.Constant(dt.Name, cel.IntType, types.Int(dt.Code)))
	}
	opts = append(opts, b.builtins()...)
	opts = append(opts, b.importedInputs()...)
	switch n := lookup(fields, "inputs"); {
	case n != nil:
		opts = append(opts, b.inputs(f, n)...)
	case len(b.rs.imports) == 0: // an importing version may add none
		f.required(&b.errs, fields, root, "inputs", "rules.yaml")
	}
	if len(b.errs) > 0 {
		return // every expression would fail on the inputs it cannot see
	}
	if n := lookup(fields, "tables"); n != nil {
		opts = append(opts, b.tables(f, n)...)
	}
	opts = append(opts, b.importedDecisions()...)
	env, cerr := cel.NewEnv(opts...)
	if cerr != nil {
		b.add(f.errNode(CodeCELType, root, "%v", cerr))
		return
	}
	if b.opts.Cache != nil {
		b.envs = map[*cel.Env][sha256.Size]byte{env: envDigest(env, &b.sizes)}
	}
	if b.opts.parsed != nil || b.opts.parsedSink != nil {
		b.parserKey = parserKey(env)
	}
	if n := lookup(fields, "values"); n != nil {
		env = b.values(f, env, n)
	}
	if n := f.required(&b.errs, fields, root, "rules", "rules.yaml"); n != nil && env != nil {
		b.rules(f, env, n)
	}
}

func (b *builder) slot(name string) {
	b.rs.slots[name] = len(b.rs.slots)
}

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

func (b *builder) rules(f *sourceFile, env *cel.Env, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		b.add(f.errNode(CodeSchema, n, "rules must be a non-empty list"))
		return
	}
	ids := map[string]Position{}
	for _, rn := range n.Content {
		fields := f.mapping(&b.errs, rn, "a rule", []string{"id", "doc", "when", "device", "copy", "capsule", "flags", "error"})
		if fields == nil {
			continue
		}
		r := rule{pos: f.position(f.offset(rn.Line, rn.Column))}
		if idn := f.required(&b.errs, fields, rn, "id", "a rule"); idn != nil {
			r.id, _ = f.scalar(&b.errs, idn, "id")
			switch prev, dup := ids[r.id]; {
			case !ruleID.MatchString(r.id):
				b.add(f.errNode(CodeSchema, idn, "rule id %q must be letters, digits, '_', '-' or '.'", r.id))
			case dup:
				b.add(f.errNode(CodeDuplicate, idn, "rule id %q is already used at %s", r.id, prev))
			}
			ids[r.id] = f.position(f.offset(idn.Line, idn.Column))
		}
		what := "rule " + r.id
		if wn := f.required(&b.errs, fields, rn, "when", what); wn != nil {
			if src, ok := f.scalar(&b.errs, wn, "when"); ok {
				r.when, _ = b.compile(env, expression{f, wn, src}, what+": when", kinds(types.BoolKind), "a bool")
			}
		}
		dn, en := lookup(fields, "device"), lookup(fields, "error")
		switch {
		case dn != nil && en != nil:
			b.add(f.errNode(CodeSchema, en, "%s has both device and error; an outcome is one of them", what))
		case dn != nil:
			r.device = b.deviceOutcome(f, env, dn, what)
			b.exportFields(f, env, fields, r.device, what)
		case en != nil:
			r.raise = b.raiseOutcome(f, env, en, what)
			for _, k := range []string{"copy", "capsule", "flags"} {
				if n := lookup(fields, k); n != nil {
					b.add(f.errNode(CodeSchema, n, "%s raises an error; %s goes with a device", what, k))
				}
			}
		default:
			b.add(f.errNode(CodeSchema, rn, "%s needs an outcome: device: {type, id} or error: {type, message}", what))
		}
		b.rs.rules = append(b.rs.rules, r)
	}
}

func (b *builder) deviceOutcome(f *sourceFile, env *cel.Env, n *yaml.Node, what string) *deviceOutcome {
	fields := f.mapping(&b.errs, n, "device", []string{"type", "id"})
	out := &deviceOutcome{}
	if tn := f.required(&b.errs, fields, n, "type", what+": device"); tn != nil {
		if src, ok := f.scalar(&b.errs, tn, "device type"); ok {
			out.typ, _ = b.compile(env, expression{f, tn, src}, what+": device type", kinds(types.IntKind), "a device type (an int code)")
		}
	}
	if idn := f.required(&b.errs, fields, n, "id", what+": device"); idn != nil {
		if src, ok := f.scalar(&b.errs, idn, "device id"); ok {
			out.id, _ = b.compile(env, expression{f, idn, src}, what+": device id", kinds(types.IntKind), "an int")
		}
	}
	return out
}

// exportFields compiles what a device outcome may add: copy (a bool),
// capsule (a string: dltensor or dltensor_versioned) and flags (a list of
// DLPACK_FLAG_BITMASK_* constants).
func (b *builder) exportFields(f *sourceFile, env *cel.Env, fields []field, out *deviceOutcome, what string) {
	opt := func(key string, dst *compiled, want []types.Kind, desc string) {
		if n := lookup(fields, key); n != nil {
			if src, ok := f.scalar(&b.errs, n, key); ok {
				*dst, _ = b.compile(env, expression{f, n, src}, what+": "+key, want, desc)
			}
		}
	}
	opt("copy", &out.copy, kinds(types.BoolKind), "a bool")
	opt("capsule", &out.capsule, kinds(types.StringKind), "a string, dltensor or dltensor_versioned")
	opt("flags", &out.flags, kinds(types.ListKind), "a list of DLPACK_FLAG_BITMASK_* constants")
}

func (b *builder) raiseOutcome(f *sourceFile, env *cel.Env, n *yaml.Node, what string) *raiseOutcome {
	fields := f.mapping(&b.errs, n, "error", []string{"type", "message"})
	out := &raiseOutcome{}
	if tn := f.required(&b.errs, fields, n, "type", what+": error"); tn != nil {
		out.typ, _ = f.scalar(&b.errs, tn, "error type")
		if !exceptionName.MatchString(out.typ) {
			b.add(f.errNode(CodeSchema, tn, "error type %q must be an exception class name such as BufferError", out.typ))
		}
	}
	if mn := f.required(&b.errs, fields, n, "message", what+": error"); mn != nil {
		if src, ok := f.scalar(&b.errs, mn, "message"); ok {
			out.message, _ = b.compile(env, expression{f, mn, src}, what+": message", kinds(types.StringKind), "a string")
		}
	}
	return out
}

func kinds(k types.Kind) []types.Kind { return []types.Kind{k, types.DynKind} }

// parse parses text, or takes it parsed from the rules directory's
// ParsedFile.
func (b *builder) parse(env *cel.Env, text string) (*cel.Ast, *cel.Issues) {
	if ast, ok := b.opts.parsed.get(b.parserKey, text); ok {
		return ast, nil
	}
	ast, iss := env.Parse(text)
	if iss.Err() == nil {
		b.opts.parsedSink.add(b.parserKey, text, ast)
	}
	return ast, iss
}

// earliest is whichever of two errors in one expression comes first in
// it, or the one that is not nil: a matches' refusal and a string's.
// Each is the first of its kind in estimate order, innermost first, so a
// call refused for what an argument builds names the argument.
func earliest(a, b *Error) *Error {
	if a == nil || b == nil || a.Pos == nil || b.Pos == nil {
		return cmp.Or(a, b)
	}
	if cmp.Or(cmp.Compare(b.Pos.Line, a.Pos.Line), cmp.Compare(b.Pos.Column, a.Pos.Column)) < 0 {
		return b
	}
	return a
}

// compile parses, type-checks and plans one expression. want lists the
// output kinds allowed (nil: any); dyn is checked again at run time.
func (b *builder) compile(env *cel.Env, e expression, what string, want []types.Kind, wantDesc string) (compiled, *cel.Ast) {
	c := compiled{expr: e}
	limit := cmp.Or(b.opts.CostLimit, DefaultCostLimit)
	d, cacheable := b.envs[env]
	key := progKey{env: d, text: e.text, want: fmt.Sprint(want, limit)}
	if cacheable {
		if ast, prg, ok := b.opts.Cache.program(key); ok {
			c.ast, c.prg = ast, prg
			return c, ast
		}
	}
	ast, iss := b.parse(env, e.text)
	code := CodeCELSyntax
	if iss.Err() == nil {
		ast, iss = env.Check(ast)
		code = CodeCELType
	}
	if iss.Err() != nil {
		for _, ce := range iss.Errors() {
			b.add(e.errAt(code, ce.Location.Line(), ce.Location.Column(), "%s: %s", what, ce.Message))
		}
		return c, nil
	}
	if want != nil {
		ok := false
		for _, k := range want {
			ok = ok || ast.OutputType().Kind() == k
		}
		if !ok {
			errCode := CodeWrongOutcomeType
			if want[0] == types.BoolKind {
				errCode = CodeNotBool
			}
			b.add(e.errAt(errCode, 1, 0, "%s is %s; want %s", what, ast.OutputType(), wantDesc))
			return c, nil
		}
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	growth := &stringGrowth{limit: limit, checked: ast.NativeRep()}
	regex := &regexCost{limit: limit, checked: ast.NativeRep(), load: b.opts.regexes}
	est, err := env.EstimateCost(ast, &b.sizes, append(growth.options(), regex.options()...)...)
	if rerr := earliest(regex.err(e, what), growth.err(e, what)); rerr != nil {
		b.add(rerr)
		return c, nil
	}
	if err != nil || est.Max > limit {
		opts = append(opts, cel.CostLimit(limit), cel.CostTracking(resultCharge{regex: regex}))
	}
	long := (err != nil || est.Max > InterruptAbove) && loops(ast)
	if long {
		opts = append(opts, cel.InterruptCheckFrequency(interruptEvery))
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		b.add(e.errAt(CodeCELType, 1, 0, "%s: %v", what, err))
		return c, nil
	}
	if long {
		prg = interruptible{prg}
	}
	c.ast, c.prg = ast, prg
	if cacheable {
		b.opts.Cache.keep(key, ast, prg)
	}
	return c, ast
}
