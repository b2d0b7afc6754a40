package engine

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"go.yaml.in/yaml/v3"
)

// importFunc loads the version a rules file imports, "name@version", or
// says why it cannot; follows is set when the reason is the import's own
// errors.
type importFunc func(ref string) (rs *RuleSet, why string, follows bool)

// imported is a version this one imports under an alias. The importer
// takes the import's inputs and device types as its own, and sees the
// import's decision for the same input as the value named by the alias:
//
//	imports:
//	  jax: jax@v3     # jax.device_type, jax.device_id, jax.error, jax.rule
//
// so a rule set that builds on JAX's device resolution reuses it, marker
// table and all, instead of copying it.
type imported struct {
	alias string
	rs    *RuleSet
	pos   Position // of the import's ref in rules.yaml
}

// imports reads the imports section: alias -> "name@version". Each import
// is compiled first; its device types become this version's.
func (b *builder) imports(f *sourceFile, n *yaml.Node) {
	if n == nil {
		return
	}
	for _, fl := range f.mapping(&b.errs, n, "imports", nil) {
		ref, ok := f.scalar(&b.errs, fl.value, "import "+fl.key.Value)
		if !ok || !b.declare(f, fl.key, "import") {
			continue
		}
		rs, why, follows := b.imp(ref)
		if rs == nil {
			e := f.errNode(CodeImport, fl.value, "%s", why)
			if follows {
				// The import's own errors say what to fix; Load leaves
				// this one out of the list (sortErrors).
				e.follows, e.knockOn = true, true
			} else {
				e.Hint = "imports name a version of another rule set in the same directory, such as jax@v3"
			}
			b.add(e)
			continue
		}
		b.importCost(f, fl.value, rs)
		at := f.position(f.offset(fl.value.Line, fl.value.Column))
		b.rs.imports = append(b.rs.imports, imported{alias: fl.key.Value, rs: rs, pos: at})
		for _, dt := range rs.deviceTypes {
			if code, seen := b.codes[dt.Name]; seen {
				if code != dt.Code {
					b.add(f.errNode(CodeImport, fl.value, "%s says %s is %d; another import says %d", ref, dt.Name, dt.Code, code))
				}
				continue
			}
			if prev, dup := b.rs.deviceNames[dt.Code]; dup {
				b.add(f.errNode(CodeImport, fl.value, "%s says code %d is %s; another import says %s", ref, dt.Code, dt.Name, prev))
				continue
			}
			b.names[dt.Name] = at
			b.inherited = append(b.inherited, dt.Name)
			b.codes[dt.Name] = dt.Code
			b.rs.deviceNames[dt.Code] = dt.Name
			b.rs.deviceTypes = append(b.rs.deviceTypes, dt)
		}
	}
}

// inheritedType reports whether a device type came from an import.
func (b *builder) inheritedType(name string) bool {
	for _, n := range b.inherited {
		if n == name {
			return true
		}
	}
	return false
}

// importedInputs declares the imports' inputs as this version's own, the
// first inputs it has. Two imports may share an input of the same type and
// default.
func (b *builder) importedInputs() []cel.EnvOption {
	var opts []cel.EnvOption
	for _, im := range b.rs.imports {
		for _, in := range im.rs.inputs {
			if i := b.inputIndex(in.Name); i >= 0 {
				have := b.rs.inputs[i]
				if have.Type != in.Type || fmt.Sprint(have.Default) != fmt.Sprint(in.Default) {
					b.add(&Error{Code: CodeImport, Pos: &in.pos, Message: fmt.Sprintf("input %s of %s is %s (default %v), but another import has it as %s (default %v)",
						in.Name, im.rs.ref, in.Type, in.Default, have.Type, have.Default)})
				}
				continue
			}
			b.names[in.Name] = in.pos
			b.slot(in.Name)
			b.sizes.inputs[in.Name] = in.typ
			b.rs.inputs = append(b.rs.inputs, in)
			opts = append(opts, cel.Variable(in.Name, in.typ.celType()))
		}
	}
	return opts
}

func (b *builder) inputIndex(name string) int {
	for i, in := range b.rs.inputs {
		if in.Name == name {
			return i
		}
	}
	return -1
}

// importedDecisions declares each import's alias as a value: the import's
// decision, a map(string, dyn) of decisionFields.
func (b *builder) importedDecisions() []cel.EnvOption {
	var opts []cel.EnvOption
	for _, im := range b.rs.imports {
		b.slot(im.alias)
		b.rs.values = append(b.rs.values, value{name: im.alias, imp: im.rs, pos: im.pos})
		opts = append(opts, cel.Variable(im.alias, cel.MapType(cel.StringType, cel.DynType)))
	}
	return opts
}

// importInput is the part of in that the import declares.
func importInput(rs *RuleSet, in Input) Input {
	sub := make(Input, len(rs.inputs))
	for _, decl := range rs.inputs {
		if v, ok := in[decl.Name]; ok {
			sub[decl.Name] = v
		}
	}
	return sub
}

// decisionValue is a decision as rules see an import's: device_type and
// device_id (null for an exception), copy, error ({type, message} or
// null), rule and ruleset.
func decisionValue(d Decision) ref.Val {
	m := map[string]any{"device_type": nil, "device_id": nil, "copy": d.Copy, "error": nil, "rule": d.Rule, "ruleset": d.RuleSet}
	if d.Error != nil {
		m["error"] = map[string]any{"type": d.Error.Type, "message": d.Error.Message}
	} else {
		m["device_type"], m["device_id"] = d.DeviceTypeCode, d.DeviceID
	}
	return types.DefaultTypeAdapter.NativeToValue(m)
}
