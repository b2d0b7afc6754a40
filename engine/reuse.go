package engine

import (
	"crypto/sha256"
	"fmt"
	"io"
	"path"
)

// Reusing a compiled version. A host that loads edit after edit (the
// browser playground loads on every keystroke) compiles again versions
// that did not change: the version an edited exchange imports, say.
// Options.Reuse hands Load the catalog it loaded before, and a version
// compiled from the same bytes, with the same options, importing versions
// that are themselves reused, is taken from it as it is. A RuleSet is
// immutable, so two catalogs can share one; they then share its memo too,
// which holds the same decisions either way.

// sourceKey identifies what a version is compiled from: the options that
// change a compiled version, its directory, and its four files as
// readSource read them (a file it refused is hashed as its error's code).
func sourceKey(files *readFiles, opts Options) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "root %q cost %d memo %d dir %q\n", opts.root(), opts.CostLimit, memoSize(opts.MemoSize), files.dir)
	for _, name := range []string{ManifestFile, DeviceTypesFile, RulesFile, TestsFile} {
		r := files.files[name]
		if r.err != nil {
			fmt.Fprintf(h, "%s unreadable %s\n", name, r.err.Code)
			continue
		}
		fmt.Fprintf(h, "%s %d\n", name, len(r.f.text))
		io.WriteString(h, r.f.text)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// reuse returns the version of l.opts.Reuse that dir compiles to as it is,
// or nil; one compiled with its tests serves a load that skips them, not
// the other way round. Its imports are loaded first, and must be the very rule sets
// the old version imports: a changed import is a changed version.
func (l *loader) reuse(dir string, key [sha256.Size]byte) *RuleSet {
	if l.opts.Reuse == nil {
		return nil
	}
	name, version := path.Split(dir)
	old, err := l.opts.Reuse.RuleSet(path.Clean(name) + "@" + version)
	if err != nil || old.source != key {
		return nil
	}
	if len(old.cases) == 0 && !l.opts.SkipTests {
		return nil // compiled without its tests (a version has some), which this load wants
	}
	for _, im := range old.imports {
		dep := path.Join(im.rs.name, im.rs.version)
		if _, ok := l.dirs[dep]; !ok || l.load(dep) != im.rs {
			return nil
		}
	}
	return old
}
