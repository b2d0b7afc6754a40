package engine

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/decls"
	"go.yaml.in/yaml/v3"
)

// Cache keeps what Load makes of files and expressions, for a host that
// loads edit after edit (the browser playground loads on every
// keystroke): a Load with a Cache takes from it the YAML of every file
// whose text it parsed before, and the program of every expression it
// compiled before in the same declarations, and the environment of every
// value declared before on top of the same declarations, and the
// ParsedFile it decoded before, and makes only the rest.
// Options.Reuse skips a version whose files did not change; a Cache
// speeds up the version that did, where one rule of sixteen changed.
//
// What is taken from a Cache is what Load would make again: a file's
// YAML is keyed by its text; an expression's program by its text, the
// kinds its place allows, the cost limit, and a digest of everything its
// environment declares (every variable and constant with its type and
// value, every function overload, and the sizes the cost estimate
// assumes). Only what compiled without error is kept, so every error is
// found, and positioned, again; and a Load that fails forgets what it
// added, so that rules refused (for their size, say) leave nothing behind
// in a host that keeps its good rules. An entry that none of the last
// cacheKeep loads used is dropped. A Cache is safe for concurrent use:
// loads at once may tag an entry with each other's count, which costs at
// most an expression compiled again.
type Cache struct {
	mu    sync.Mutex
	loads uint64
	trees kept[[sha256.Size]byte, *yaml.Node] // never modified: Load only reads nodes
	progs kept[progKey, cachedProgram]
	// The environments values extend, by envDigest or extendDigest:
	// immutable and safe for concurrent use, as every cel.Env is.
	envs kept[[sha256.Size]byte, *cel.Env]
	// The last ParsedFile decoded: never modified (Load only looks
	// expressions up in it).
	parsed lastParsed
}

type lastParsed struct {
	text string
	x    *parsedIndex
}

// cacheKeep is how many loads an unused entry survives: the playground
// alternates between the rules as served and as edited, and between the
// versions a person looks at.
const cacheKeep = 8

type progKey struct {
	env  [sha256.Size]byte
	text string
	want string // the kinds allowed and the cost limit
}

type cachedProgram struct {
	ast *cel.Ast
	prg cel.Program // safe for concurrent use, as every cel.Program is
	// cost is what one evaluation can cost (exprCost), for MaxDecisionCost.
	cost uint64
}

// kept is one kind of what a Cache keeps, each entry with the count of
// the load that last used it. The Cache's mutex guards it.
type kept[K comparable, V any] map[K]*keptEntry[V]

type keptEntry[V any] struct {
	v V
	// used is the count of the last load that used the entry, added of
	// the one that made it.
	used, added uint64
}

// get returns k's entry, marking it used by load.
func (m kept[K, V]) get(k K, load uint64) (V, bool) {
	e, ok := m[k]
	if !ok {
		var zero V
		return zero, false
	}
	e.used = load
	return e.v, true
}

// put keeps v as k's entry, used by load.
func (m kept[K, V]) put(k K, v V, load uint64) { m[k] = &keptEntry[V]{v: v, used: load, added: load} }

// forget deletes what load added.
func (m kept[K, V]) forget(load uint64) {
	for k, e := range m {
		if e.added == load {
			delete(m, k)
		}
	}
}

// drop deletes what the last cacheKeep loads before load did not use.
func (m kept[K, V]) drop(load uint64) {
	for k, e := range m {
		if e.used+cacheKeep < load {
			delete(m, k)
		}
	}
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{trees: kept[[sha256.Size]byte, *yaml.Node]{}, progs: kept[progKey, cachedProgram]{}, envs: kept[[sha256.Size]byte, *cel.Env]{}}
}

// begin counts a load, drops what the last cacheKeep loads did not use,
// and returns the load's count.
func (c *Cache) begin() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loads++
	c.trees.drop(c.loads)
	c.progs.drop(c.loads)
	c.envs.drop(c.loads)
	return c.loads
}

// failed forgets what load, which failed, added.
func (c *Cache) failed(load uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trees.forget(load)
	c.progs.forget(load)
	c.envs.forget(load)
}

// decodeParsed is decodeParsed (parsed.go) of a ParsedFile's text, taken
// from the Cache when the last load that read one read the same text: a
// host that sends the served rules' ParsedFile with every edit (the
// playground) decodes it once. The text is compared, not hashed: a
// comparison costs less than a digest of the file. Only the last one is
// kept, until a load decodes another.
func (c *Cache) decodeParsed(text string) (*parsedIndex, string) {
	if c == nil {
		return decodeParsed([]byte(text))
	}
	c.mu.Lock()
	last := c.parsed
	c.mu.Unlock()
	if last.x != nil && last.text == text {
		return last.x, ""
	}
	x, bad := decodeParsed([]byte(text))
	if bad == "" {
		c.mu.Lock()
		c.parsed = lastParsed{text: text, x: x}
		c.mu.Unlock()
	}
	return x, bad
}

// tree returns f's YAML root, parsing it only when no load parsed the
// same text before.
func (c *Cache) tree(f *sourceFile) (*yaml.Node, *Error) {
	if c == nil {
		return f.parseYAML()
	}
	key := sha256.Sum256([]byte(f.text))
	c.mu.Lock()
	root, ok := c.trees.get(key, c.loads)
	c.mu.Unlock()
	if ok {
		return root, nil
	}
	root, err := f.parseYAML()
	if err == nil {
		c.mu.Lock()
		c.trees.put(key, root, c.loads)
		c.mu.Unlock()
	}
	return root, err
}

// program returns what compiled key before, if anything did.
func (c *Cache) program(key progKey) (cachedProgram, bool) {
	if c == nil {
		return cachedProgram{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progs.get(key, c.loads)
}

func (c *Cache) keep(key progKey, p cachedProgram) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progs.put(key, p, c.loads)
}

// env returns the environment of digest d that a load made before, if any.
func (c *Cache) env(d [sha256.Size]byte) (*cel.Env, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.envs.get(d, c.loads)
}

func (c *Cache) keepEnv(d [sha256.Size]byte, env *cel.Env) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.envs.put(d, env, c.loads)
}

// envDigest is a digest of everything env declares and of the sizes the
// cost estimate assumes: two environments with the same digest compile an
// expression to the same program.
func envDigest(env *cel.Env, sizes *sizeBounds) [sha256.Size]byte {
	h := sha256.New()
	vars := env.Variables()
	slices.SortFunc(vars, func(a, b *decls.VariableDecl) int { return strings.Compare(a.Name(), b.Name()) })
	for _, v := range vars {
		fmt.Fprintf(h, "var %s %s", v.Name(), v.Type())
		if val := v.Value(); val != nil {
			fmt.Fprintf(h, " = %#v", val.Value())
		}
		h.Write([]byte{'\n'})
	}
	fns := env.Functions()
	names := make([]string, 0, len(fns))
	for name := range fns {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(h, "fn %s", name)
		for _, o := range fns[name].OverloadDecls() {
			fmt.Fprintf(h, " %s", o.ID())
		}
		h.Write([]byte{'\n'})
	}
	fmt.Fprintf(h, "sizes %#v\n", sizes.tables)
	inputs := make([]string, 0, len(sizes.inputs))
	for name, t := range sizes.inputs {
		inputs = append(inputs, name+" "+t.text)
	}
	slices.Sort(inputs)
	fmt.Fprintf(h, "inputs %q\n", inputs)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// extendDigest is the digest of an environment d extended by one
// variable.
func extendDigest(d [sha256.Size]byte, name string, t *cel.Type) [sha256.Size]byte {
	return sha256.Sum256(fmt.Appendf(d[:], "\nvar %s %s", name, t))
}
