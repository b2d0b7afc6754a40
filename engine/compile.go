package engine

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path"
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

	cost    decisionCost // the bound on one decision's cost so far
	outcome bool         // compiling a rule's outcome: one of them is evaluated
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
	b.rs.decisionCost = b.cost.total()
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

// ruleFile compiles rules.yaml: imports' inputs, inputs, tables, imports'
// decisions, values, then rules, each seeing the names declared before it.
func (b *builder) ruleFile(f *sourceFile, root *yaml.Node, fields []field) {
	opts := []cel.EnvOption{
		// Versions pinned so that a cel-go upgrade adds no function to a
		// rule set behind its back; see engine/RATIONALE.md.
		// Version 5 adds no function to 4: it costs what the strings
		// functions read and build, and caps format's precision at 100
		// (see stringGrowth and engine/RATIONALE.md).
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
		if p, ok := b.opts.Cache.program(key); ok {
			if !b.spendNodes(e, p.ast, what) || !b.spendCost(e, p.cost, what) {
				return c, nil
			}
			c.ast, c.prg = p.ast, p.prg
			return c, p.ast
		}
	}
	if b.opts.budget.over {
		return c, nil // the load is refused: compile nothing more
	}
	ast, iss := b.parse(env, e.text)
	code := CodeCELSyntax
	if iss.Err() == nil {
		if !b.spendNodes(e, ast, what) {
			return c, nil
		}
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
	cost := exprCost(est, err, limit)
	if !b.spendCost(e, cost, what) {
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
		b.opts.Cache.keep(key, cachedProgram{ast: ast, prg: prg, cost: cost})
	}
	return c, ast
}
