package engine

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// MaxRuleFileSize is the largest rule file Load reads, in bytes. A file's
// size is checked before it is read; only regular files (or links to
// them) are read at all (readfile.go).
const MaxRuleFileSize = 1 << 20

// The files of one rule-set version directory, rules/<name>/<version>/.
const (
	ManifestFile    = "manifest.yaml"
	DeviceTypesFile = "device_types.yaml"
	RulesFile       = "rules.yaml"
	TestsFile       = "tests.yaml"
)

// Options configure Load. The zero value is the documented defaults.
type Options struct {
	// Root is the name the rules directory is shown by in positions, such as
	// "rules" (the default) for rules/jax/v3/rules.yaml:12:9.
	Root string
	// CostLimit bounds the CEL cost of one expression's evaluation; an
	// expression that exceeds it fails with CodeCostLimit, and one that
	// could build a string of more code points than it (a replace, join,
	// format or strings.quote on inputs at MaxStringLen) is refused at
	// load with CodeCostLimit. 0 means DefaultCostLimit.
	CostLimit uint64
	// MemoSize bounds how many decisions each rule set remembers. 0 means
	// DefaultMemoSize; a negative value turns memoisation off.
	MemoSize int
	// Reuse, when set, is a catalog loaded before: a version whose files
	// are byte for byte those Reuse compiled it from, with the same
	// options, and whose imports are reused too, is taken from Reuse
	// instead of compiled again (reuse.go). Hosts that load edit after
	// edit set it to the catalog before.
	Reuse *Catalog
	// Cache, when set, keeps the YAML of files and the programs of
	// expressions from one Load to the next (cache.go): hosts that load
	// edit after edit pass the same Cache each time. Without one, Load
	// keeps its own for that load alone: versions of one rules directory
	// share files and expressions, each then parsed and compiled once.
	Cache *Cache
	// Select, when set, names the versions to compile, as Catalog.RuleSet
	// takes them ("jax" for the newest jax, "exchange@v1", "jax==0.10.2"),
	// or "jax@*" for every version of jax, none if there is no jax: only those
	// and the versions they import are compiled, and only their errors
	// reported (select.go). A host that decides with one rule set starts
	// without compiling the rest.
	Select []string
	// SkipTests, when set, compiles each version without reading its
	// tests.yaml: its rule set decides exactly as it does with it, but
	// holds no cases, so Cases and Test return none, and an error in
	// tests.yaml goes unseen. It is for hosts that only decide, with rules
	// whose tests pass elsewhere (the module's lazy load, the C library's
	// embedded rules): tests.yaml is a third of the time to compile a
	// version.
	SkipTests bool
	// TrustParsed, when set, takes each expression that the ParsedFile at
	// the root of the rules directory holds parsed instead of parsing its
	// text (parsed.go). Set it only for rules as trusted as the binary
	// itself, the embedded rules.FS: the file is not text anyone reviews,
	// and an entry that gave a text another expression would change what
	// a rule means while Lint, Explain and the tests show the text.
	// Without it, a ParsedFile is not read and every text is parsed.
	TrustParsed bool

	parsed     *parsedIndex // the rules directory's ParsedFile, read by Load
	parsedSink *parsedSink  // WriteParsed's: collects what is parsed, reads no ParsedFile
	regexes    *regexLoad   // the matches patterns this Load compiled (cost_regex.go)
	budget     *loadBudget  // the nodes this Load compiled (budget.go)
}

// DefaultMemoSize is how many decisions a rule set remembers when
// Options.MemoSize is 0. A process sees a handful of distinct devices, so
// the memo is almost always hit; its bound is what keeps a stream of unique
// inputs (an attacker's, or a fuzzer's) from growing memory. Inputs whose
// key is longer than 512 bytes are never remembered.
const DefaultMemoSize = 4096

func memoSize(n int) int {
	if n == 0 {
		return DefaultMemoSize
	}
	return n // negative: off
}

// DefaultCostLimit is the CEL cost limit of one expression when
// Options.CostLimit is 0: about a thousand comparisons over inputs at
// MaxStringLen, far more than any rule here needs, far less than a runaway
// comprehension takes.
const DefaultCostLimit = 100_000

func (o Options) root() string {
	if o.Root == "" {
		return "rules"
	}
	return o.Root
}

// Catalog is every rule set version of a rules directory, compiled. It is
// immutable and safe for concurrent use.
type Catalog struct {
	sets map[string][]*RuleSet // by name, oldest version first
}

// Load reads a rules directory (rules/<name>/<version>/ with the four files
// of each version), type-checks every expression, and compiles it. It
// refuses the whole directory on any error: the result is an ErrorList of
// every error found, each with its position, and no Catalog.
func Load(fsys fs.FS, opts Options) (*Catalog, error) {
	var errs ErrorList
	if opts.Cache == nil {
		opts.Cache = NewCache()
	}
	load := opts.Cache.begin()
	opts.regexes = &regexLoad{}
	opts.budget = &loadBudget{}
	c := &Catalog{sets: map[string][]*RuleSet{}}
	names, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, ErrorList{{Code: CodeRead, Message: fmt.Sprintf("reading %s: %v", opts.root(), err), err: err}}
	}
	if opts.TrustParsed && opts.parsedSink == nil {
		var perr *Error
		if opts.parsed, perr = readParsed(fsys, opts); perr != nil {
			return nil, ErrorList{perr}
		}
	}
	l := &loader{fsys: fsys, opts: opts, dirs: map[string]*loading{}}
	for _, set := range names {
		if !set.IsDir() || strings.HasPrefix(set.Name(), ".") {
			continue
		}
		if e := checkSetName(set.Name(), opts); e != nil {
			errs = append(errs, e)
			continue
		}
		versions, err := fs.ReadDir(fsys, set.Name())
		if err != nil {
			errs = append(errs, &Error{Code: CodeRead, Message: err.Error(), err: err})
			continue
		}
		for _, v := range versions {
			if v.IsDir() && !strings.HasPrefix(v.Name(), ".") {
				dir := path.Join(set.Name(), v.Name())
				l.dirs[dir] = &loading{}
				l.order = append(l.order, dir)
			}
		}
	}
	selected, notThere := l.selected()
	if len(notThere) > 0 {
		return nil, notThere
	}
	for _, dir := range selected {
		l.load(dir)
	}
	for _, dir := range l.order {
		st := l.dirs[dir]
		if !st.started {
			continue // not selected, nor imported by a version that is
		}
		errs = append(errs, st.errs...)
		if st.rs != nil {
			c.sets[st.rs.name] = append(c.sets[st.rs.name], st.rs)
		}
	}
	errs = append(errs, l.releaseOverlaps(c.sets)...)
	if len(errs) > 0 {
		opts.Cache.failed(load)
		return nil, sortErrors(errs)
	}
	if len(c.sets) == 0 {
		return nil, ErrorList{{Code: CodeNoRuleSet, Message: fmt.Sprintf("%s holds no rule set (want %s/<name>/<version>/%s)", opts.root(), opts.root(), RulesFile),
			Hint: "point --rules at the directory that holds the rule-set folders, such as rules/"}}
	}
	for _, list := range c.sets {
		slices.SortFunc(list, func(a, b *RuleSet) int { return compareVersions(a.version, b.version) })
	}
	return c, nil
}

// loader compiles the versions of one rules directory, each once, an
// imported version before the version that imports it.
type loader struct {
	fsys  fs.FS
	opts  Options
	dirs  map[string]*loading // by "name/version"
	order []string
}

type loading struct {
	started, done bool
	rs            *RuleSet
	errs          ErrorList
}

// load compiles dir once, and returns the rule set (nil on errors, which
// Load collects).
func (l *loader) load(dir string) *RuleSet {
	st := l.dirs[dir]
	if st.started {
		return st.rs
	}
	st.started = true
	files := readVersion(l.fsys, dir, l.opts)
	key := sourceKey(files, l.opts)
	// A version reused counts as it did compiled; one that would take
	// the load past its budget is compiled, to be refused where it does.
	if rs := l.reuse(dir, key); rs != nil && l.opts.budget.fits(rs.nodes) {
		l.opts.budget.nodes += rs.nodes
		st.rs, st.done = rs, true
		return rs
	}
	st.rs, st.errs = loadVersion(files, dir, l.opts, l.importer(dir))
	causesFirst(st.errs)
	if st.rs != nil {
		st.rs.source = key
	}
	st.done = true
	return st.rs
}

// importer resolves the imports of dir: "name@version", loaded first.
func (l *loader) importer(from string) importFunc {
	return func(ref string) (*RuleSet, string, bool) {
		name, version, pinned := strings.Cut(ref, "@")
		if !pinned || name == "" || version == "" {
			return nil, fmt.Sprintf("import %q must name a version, such as %s@v1: a new version of the import must not change this one behind its back", ref, cmp.Or(name, "jax")), false
		}
		dir := path.Join(name, version)
		st, ok := l.dirs[dir]
		switch {
		case !ok:
			return nil, fmt.Sprintf("import %s: there is no %s/%s in %s", ref, name, version, l.opts.root()), false
		case dir == from || st.started && !st.done:
			return nil, fmt.Sprintf("import %s: a cycle of imports", ref), false
		}
		rs := l.load(dir)
		if rs == nil {
			return nil, fmt.Sprintf("import %s does not load; see its errors", ref), true
		}
		return rs, "", false
	}
}

// causesFirst marks the errors of a file whose values were cut short by
// MaxYAMLAliasNodes or MaxYAMLDepth as following from it: a value cut
// short fails the checks after it too (an unknown input, a wrong type),
// and the limit is what to show first.
func causesFirst(errs ErrorList) {
	cut := map[string]bool{}
	for _, e := range errs {
		if (e.Code == CodeYAMLAliases || e.Code == CodeYAMLDepth) && e.Pos != nil {
			cut[e.Pos.File] = true
		}
	}
	for _, e := range errs {
		if e.Pos != nil && cut[e.Pos.File] && e.Code != CodeYAMLAliases && e.Code != CodeYAMLDepth {
			e.follows = true
		}
	}
}

// sortErrors puts the causes first and then orders by file and position.
// It leaves out the error of a version whose import does not load, which
// the import's own errors explain: one mistake in jax@v3 is one error, not
// one more for each version that imports it. When nothing else is left (it
// cannot be, but a list that says nothing would let a broken directory
// through), the list stays whole.
func sortErrors(errs ErrorList) ErrorList {
	causes := slices.DeleteFunc(slices.Clone(errs), func(e *Error) bool { return e.knockOn })
	if len(causes) > 0 {
		errs = causes
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		var pa, pb Position
		if a.Pos != nil {
			pa = *a.Pos
		}
		if b.Pos != nil {
			pb = *b.Pos
		}
		return cmp.Or(compareBool(a.follows, b.follows), cmp.Compare(pa.File, pb.File), cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Column, pb.Column))
	})
	return errs
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// parseVersion splits "v3" or "v1.2" into numbers.
func parseVersion(s string) ([]int, bool) {
	rest, ok := strings.CutPrefix(s, "v")
	if !ok || rest == "" {
		return nil, false
	}
	var out []int
	for _, part := range strings.Split(rest, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || strconv.Itoa(n) != part {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

func compareVersions(a, b string) int {
	va, _ := parseVersion(a)
	vb, _ := parseVersion(b)
	return slices.Compare(va, vb)
}

// RuleSets returns every loaded version, by name and then oldest first.
func (c *Catalog) RuleSets() []*RuleSet {
	var out []*RuleSet
	for _, name := range slices.Sorted(maps.Keys(c.sets)) {
		out = append(out, c.sets[name]...)
	}
	return out
}

// RuleSet returns the rule set named by ref: "jax" for its newest version,
// "jax@v2" for one version, or "jax==0.10.2" for the version whose
// manifest's mirrors.releases covers that release of what it mirrors. The
// error has CodeNoRuleSet and says which names and versions exist, or
// which versions are nearest to a release that none covers. A release no
// version was checked against, which Lookup answers with a warning, is
// refused here (CodeUncheckedRelease, the warning's message): a caller
// that cannot pass the warning on does not answer without it.
func (c *Catalog) RuleSet(ref string) (*RuleSet, error) {
	rs, w, err := c.Lookup(ref)
	if err != nil {
		return nil, err
	}
	if w != nil {
		return nil, w.Refusal()
	}
	return rs, nil
}

// Lookup is RuleSet, but for a release ref that no version was checked
// against it answers with a version and a warning that says what was
// checked, rather than refusing: a release newer than every version's
// range gets the version with the newest range; a pre-release or
// development build ("1.13.0a0+gitunknown", "2.16.0.dev20261201+cpu") is
// read as the release it is a build of. A release in a gap between
// ranges, or older than all of them, is still an error naming the
// nearest. The warning is nil for every other ref.
func (c *Catalog) Lookup(ref string) (*RuleSet, *ReleaseWarning, error) {
	if name, release, ok := strings.Cut(ref, ReleaseRef); ok {
		list := c.sets[name]
		if len(list) == 0 {
			return nil, nil, noRuleSet(name, "", slices.Sorted(maps.Keys(c.sets)), nil)
		}
		rs, w, err := byRelease(name, release, list)
		if err != nil {
			return nil, nil, err
		}
		return rs, w, nil
	}
	rs, err := c.byVersion(ref)
	return rs, nil, err
}

// byVersion is RuleSet for a ref that is a name or name@version.
func (c *Catalog) byVersion(ref string) (*RuleSet, error) {
	name, version, pinned := strings.Cut(ref, "@")
	list := c.sets[name]
	if len(list) == 0 {
		return nil, noRuleSet(name, version, slices.Sorted(maps.Keys(c.sets)), nil)
	}
	if !pinned {
		return list[len(list)-1], nil
	}
	var have []string
	for _, rs := range list {
		if rs.version == version {
			return rs, nil
		}
		have = append(have, rs.version)
	}
	return nil, noRuleSet(name, version, nil, have)
}

// noRuleSet is the error of a ref that names nothing loaded: no rule set
// called name (names are those loaded), or none of its versions (have,
// in order) is version.
func noRuleSet(name, version string, names, have []string) *Error {
	if len(have) == 0 {
		return &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("no rule set %q", name), Hint: "loaded: " + strings.Join(names, ", ")}
	}
	return &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s has no version %q", name, version),
		Hint: "versions: " + strings.Join(have, ", ")}
}
