package engine

import (
	"slices"
	"strings"
)

// selected is the version directories Load compiles: every one, or those
// Options.Select names (a bare name is its newest version; a name or
// version that is not there selects nothing, and Catalog.RuleSet then
// says so). Imports are compiled as they are met.
func (l *loader) selected() ([]string, ErrorList) {
	if len(l.opts.Select) == 0 {
		return l.order, nil
	}
	var out []string
	var errs ErrorList
	for _, ref := range l.opts.Select {
		dirs, ok := l.dirsOf(ref)
		if !ok {
			errs = append(errs, l.noRuleSet(ref))
		}
		for _, dir := range dirs {
			if !slices.Contains(out, dir) {
				out = append(out, dir)
			}
		}
	}
	return out, errs
}

// noRuleSet is Catalog.RuleSet's error for a ref that names no version
// directory, with the same hint as if every version had been compiled.
func (l *loader) noRuleSet(ref string) *Error {
	name, version, _ := strings.Cut(ref, "@")
	name, _, _ = strings.Cut(name, ReleaseRef)
	var names, versions []string
	for _, dir := range l.order {
		n, v, _ := strings.Cut(dir, "/")
		if _, ok := parseVersion(v); !ok {
			continue
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
		if n == name {
			versions = append(versions, v)
		}
	}
	slices.Sort(names)
	slices.SortFunc(versions, compareVersions)
	return noRuleSet(name, version, names, versions)
}

// dirsOf is the version directories to compile for ref: dirOf's one, or
// every version of the name for "jax@*" and for a release ref
// ("jax==0.10.2"), since which one covers the release is in their
// manifests.
func (l *loader) dirsOf(ref string) ([]string, bool) {
	name, _, byRelease := strings.Cut(ref, ReleaseRef)
	n, every := strings.CutSuffix(ref, "@*")
	if every {
		name, byRelease = n, true
	}
	if !byRelease {
		if dir, ok := l.dirOf(ref); ok {
			return []string{dir}, true
		}
		return nil, false
	}
	var dirs []string
	for _, dir := range l.order {
		n, v, _ := strings.Cut(dir, "/")
		if _, ok := parseVersion(v); ok && n == name {
			dirs = append(dirs, dir)
		}
	}
	return dirs, len(dirs) > 0 || every // "@*" of a name that is not there is none of it
}

// dirOf is the version directory of ref: name/version, or for a bare name
// the directory of its newest version.
func (l *loader) dirOf(ref string) (string, bool) {
	name, version, pinned := strings.Cut(ref, "@")
	if pinned {
		dir := name + "/" + version
		_, ok := l.dirs[dir]
		return dir, ok
	}
	newest := ""
	for _, dir := range l.order {
		n, v, _ := strings.Cut(dir, "/")
		if n != name {
			continue
		}
		if _, ok := parseVersion(v); !ok {
			continue
		}
		if newest == "" || compareVersions(v, newest[len(name)+1:]) > 0 {
			newest = dir
		}
	}
	return newest, newest != ""
}
