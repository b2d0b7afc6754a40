package engine

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The manifest and the device-type table of a version.

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
