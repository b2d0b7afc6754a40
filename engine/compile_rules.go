package engine

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"go.yaml.in/yaml/v3"
)

// The ordered rules of rules.yaml and their outcomes.

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
		b.outcome = true
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
		b.outcome = false
		b.cost.ruleDone()
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
