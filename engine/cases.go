package engine

import (
	"context"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Case is one test case of a rule-set version, from its tests.yaml: an
// input and the decision it must get.
type Case struct {
	Name  string   `json:"name"`
	Pos   Position `json:"position"`
	Input Input    `json:"input"`
	Want  Want     `json:"want"`
}

// Want is what a case expects. Exactly one of DeviceType and Error is set;
// Rule, when set, must be the rule that decides. With a device, Copy,
// Capsule and Flags are checked when set; a case that wants a copy says
// copy: true, and one that sets flags lists every flag.
type Want struct {
	DeviceType string     `json:"device_type,omitempty"`
	DeviceID   *int64     `json:"device_id,omitempty"`
	Copy       *bool      `json:"copy,omitempty"`
	Capsule    string     `json:"capsule,omitempty"`
	Flags      *Flags     `json:"flags,omitempty"`
	Error      *Exception `json:"error,omitempty"`
	Rule       string     `json:"rule,omitempty"`
}

// Matches reports whether a decision is what the case wants.
func (w Want) Matches(d Decision) bool {
	if w.Rule != "" && w.Rule != d.Rule {
		return false
	}
	if w.Error != nil {
		return d.Error != nil && *d.Error == *w.Error
	}
	return d.Error == nil && d.DeviceType == w.DeviceType && (w.DeviceID == nil || *w.DeviceID == d.DeviceID) &&
		(w.Copy == nil || *w.Copy == d.Copy) && (w.Capsule == "" || w.Capsule == d.Capsule) && (w.Flags == nil || *w.Flags == d.Flags)
}

// String is the want in the decision's JSON shape, for messages.
func (w Want) String() string {
	s := fmt.Sprintf(`{"device_type":%q`, w.DeviceType)
	if w.DeviceID != nil {
		s += fmt.Sprintf(`,"device_id":%d`, *w.DeviceID)
	}
	if w.Copy != nil {
		s += fmt.Sprintf(`,"copy":%t`, *w.Copy)
	}
	if w.Capsule != "" {
		s += fmt.Sprintf(`,"capsule":%q`, w.Capsule)
	}
	if w.Flags != nil {
		flags, _ := w.Flags.MarshalJSON()
		s += `,"flags":` + string(flags)
	}
	if w.Error != nil {
		s = fmt.Sprintf(`{"error":{"type":%q,"message":%q}`, w.Error.Type, w.Error.Message)
	}
	if w.Rule != "" {
		s += fmt.Sprintf(`,"rule":%q`, w.Rule)
	}
	return s + "}"
}

// Cases returns the version's test cases, in file order; none when it
// was loaded with Options.SkipTests (a version always has some).
func (rs *RuleSet) Cases() []Case { return append([]Case(nil), rs.cases...) }

// CaseResult is the outcome of running one Case.
type CaseResult struct {
	Case
	Got  Decision `json:"got"`
	Err  error    `json:"-"` // the evaluation failed; Got is empty
	Pass bool     `json:"pass"`
}

// Test runs every case of the version, in order: none when it was loaded
// with Options.SkipTests.
func (rs *RuleSet) Test(ctx context.Context) []CaseResult {
	out := make([]CaseResult, len(rs.cases))
	for i, c := range rs.cases {
		d, err := rs.Resolve(ctx, c.Input)
		out[i] = CaseResult{Case: c, Got: d, Err: err, Pass: err == nil && c.Want.Matches(d)}
	}
	return out
}

// tests reads tests.yaml: a list of cases, each with a name, an input that
// must be valid for the rule set, and a want.
func (b *builder) tests(f *sourceFile) {
	root, err := b.opts.Cache.tree(f)
	if err != nil {
		b.add(err)
		return
	}
	fields := f.mapping(&b.errs, root, "tests.yaml", []string{"cases"})
	list := f.required(&b.errs, fields, root, "cases", "tests.yaml")
	if list == nil {
		return
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		b.add(f.errNode(CodeSchema, list, "cases must be a non-empty list"))
		return
	}
	names := map[string]bool{}
	for _, cn := range list.Content {
		cf := f.mapping(&b.errs, cn, "a case", []string{"name", "input", "want"})
		if cf == nil {
			continue
		}
		c := Case{Pos: f.position(f.offset(cn.Line, cn.Column))}
		if n := f.required(&b.errs, cf, cn, "name", "a case"); n != nil {
			c.Name, _ = f.scalar(&b.errs, n, "name")
			if names[c.Name] {
				b.add(f.errNode(CodeDuplicate, n, "case name %q is used twice", c.Name))
			}
			names[c.Name] = true
		}
		if n := f.required(&b.errs, cf, cn, "input", "case "+c.Name); n != nil {
			if n.Kind != yaml.MappingNode {
				b.add(f.errNode(CodeSchema, n, "the input of case %s must be a mapping", c.Name))
			} else if in, ok := yamlValue(f, &b.errs, n).(map[string]any); ok {
				c.Input = in
				_, err := b.rs.check(nil, c.Input)
				if err == nil {
					err = b.rs.checkUTF8(c.Input)
				}
				if err != nil {
					e := f.errNode(CodeWrongType, n, "case %s: %v", c.Name, err)
					if ee, ok := err.(*Error); ok {
						e.Code, e.Hint = ee.Code, ee.Hint
					}
					b.add(e)
				}
			}
		}
		if n := f.required(&b.errs, cf, cn, "want", "case "+c.Name); n != nil {
			c.Want = b.want(f, n, c.Name)
		}
		b.rs.cases = append(b.rs.cases, c)
	}
}

func (b *builder) want(f *sourceFile, n *yaml.Node, name string) Want {
	var w Want
	fields := f.mapping(&b.errs, n, "want", []string{"device_type", "device_id", "copy", "capsule", "flags", "error", "rule"})
	if r := lookup(fields, "rule"); r != nil {
		w.Rule, _ = f.scalar(&b.errs, r, "rule")
		if !contains(b.rs.RuleIDs(), w.Rule) {
			b.add(f.errNode(CodeSchema, r, "case %s wants rule %q, which %s does not have", name, w.Rule, RulesFile))
		}
	}
	dt, en := lookup(fields, "device_type"), lookup(fields, "error")
	switch {
	case dt != nil && en == nil:
		w.DeviceType, _ = f.scalar(&b.errs, dt, "device_type")
		if _, ok := b.codes[w.DeviceType]; !ok {
			b.add(f.errNode(CodeUnknownDevice, dt, "case %s wants unknown device type %q", name, w.DeviceType))
		}
		if id := lookup(fields, "device_id"); id != nil {
			var v int64
			if err := id.Decode(&v); err != nil || id.Tag != "!!int" {
				b.add(f.errNode(CodeSchema, id, "device_id must be an int, not %s", kindName(id)))
			}
			w.DeviceID = &v
		}
		b.wantExport(f, fields, &w)
	case en != nil && dt == nil:
		ef := f.mapping(&b.errs, en, "error", []string{"type", "message"})
		w.Error = &Exception{}
		if t := f.required(&b.errs, ef, en, "type", "error"); t != nil {
			w.Error.Type, _ = f.scalar(&b.errs, t, "type")
		}
		if m := f.required(&b.errs, ef, en, "message", "error"); m != nil {
			w.Error.Message, _ = f.scalar(&b.errs, m, "message")
		}
	default:
		b.add(f.errNode(CodeSchema, n, "case %s must want either device_type (and device_id) or error", name))
	}
	return w
}

// wantExport reads what a case wants of an export: copy, capsule, flags.
func (b *builder) wantExport(f *sourceFile, fields []field, w *Want) {
	if n := lookup(fields, "copy"); n != nil {
		var v bool
		if err := n.Decode(&v); err != nil || n.Tag != "!!bool" {
			b.add(f.errNode(CodeSchema, n, "copy must be true or false, not %s", kindName(n)))
		}
		w.Copy = &v
	}
	if n := lookup(fields, "capsule"); n != nil {
		w.Capsule, _ = f.scalar(&b.errs, n, "capsule")
		if w.Capsule != CapsuleUnversioned && w.Capsule != CapsuleVersioned {
			b.add(f.errNode(CodeSchema, n, "capsule must be %s or %s", CapsuleUnversioned, CapsuleVersioned))
		}
	}
	if n := lookup(fields, "flags"); n != nil {
		var names []string
		if err := n.Decode(&names); err != nil || n.Kind != yaml.SequenceNode {
			b.add(f.errNode(CodeSchema, n, "flags must be a list of flag names, such as [DLPACK_FLAG_BITMASK_IS_COPIED]"))
			return
		}
		flags, err := parseFlags(names)
		if err != nil {
			b.add(f.errNode(CodeSchema, n, "%v", err))
		}
		w.Flags = &flags
	}
}
