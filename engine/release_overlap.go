package engine

import (
	"fmt"
	"path"
	"slices"

	"go.yaml.in/yaml/v3"
)

// releaseOverlaps returns an error for each pair of versions of one rule
// set whose mirrors.releases share a release: "jax==0.11.0" would name
// both, and Catalog.Lookup can answer it with neither. It is refused at
// load, so that lint, every host and the gate refuse it alike, rather than
// every request for a release in the overlap. The error is at the newer
// version's mirrors.releases and names the older one and its range.
func (l *loader) releaseOverlaps(sets map[string][]*RuleSet) ErrorList {
	var errs ErrorList
	for _, list := range sets {
		list = slices.SortedFunc(slices.Values(list), func(a, b *RuleSet) int { return compareVersions(a.version, b.version) })
		for j, newer := range list {
			r := newer.manifest.Mirrors.Releases
			if r == nil {
				continue
			}
			for _, older := range list[:j] {
				o := older.manifest.Mirrors.Releases
				if o == nil || !overlap(*o, *r) {
					continue
				}
				e := l.releasesError(newer)
				e.Message = fmt.Sprintf("releases %s overlap %s's, %s: %s==%s would name both", r, older.Ref(), o, newer.name, laterFirst(*o, *r))
				e.Hint = fmt.Sprintf("%s covers %s: a release is claimed by one version; move this range's first past %s's last, or end %s's range before this one's first",
					older.Ref(), o, older.Ref(), older.Ref())
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// overlap reports whether two ranges, whose ends parse, share a release.
func overlap(a, b ReleaseRange) bool {
	aFirst, _ := parseRelease(a.First)
	bFirst, _ := parseRelease(b.First)
	return compareReleases(aFirst, b.last()) <= 0 && compareReleases(bFirst, a.last()) <= 0
}

// laterFirst is the later of the two ranges' firsts: the first release
// both claim.
func laterFirst(a, b ReleaseRange) string {
	aFirst, _ := parseRelease(a.First)
	bFirst, _ := parseRelease(b.First)
	if compareReleases(aFirst, bFirst) >= 0 {
		return a.First
	}
	return b.First
}

// releasesError is an Error at rs's manifest's key mirrors.releases, with the
// line's text. The RuleSet keeps no positions of its manifest, so the
// manifest is read again (through the Cache, when Load has one): only
// when an overlap is found. A manifest that no longer reads as it did is
// pointed at as a whole.
func (l *loader) releasesError(rs *RuleSet) *Error {
	dir := path.Join(rs.name, rs.version)
	f, err := readSource(l.fsys, dir, ManifestFile, l.opts)
	if err != nil {
		return &Error{Code: CodeOverlapping, Pos: &Position{File: path.Join(l.opts.root(), dir, ManifestFile)}}
	}
	var at *yaml.Node
	if root, err := l.opts.Cache.tree(f); err == nil {
		_, mirrors := mappingEntry(root, "mirrors")
		at, _ = mappingEntry(mirrors, "releases")
	}
	return f.errNode(CodeOverlapping, at, "")
}

// mappingEntry is the key and the value of key in mapping n, or nils.
func mappingEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}
