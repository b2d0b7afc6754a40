package engine

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io/fs"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
)

// Expressions that arrive parsed. What cel-go's parser makes of an
// expression depends on its text, on the macros it expands and on
// cel-go's parser, and on nothing else: a rules directory may carry, as
// ParsedFile at its root, the parsed form of its expressions, which Load
// takes instead of parsing the text again when all three match. In the
// WebAssembly module, where cel-go's parser starts cold in every
// instance, parsing was half the time to compile a version (wasm/RATIONALE.md,
// "Why do the embedded rules arrive parsed?"). An expression the file
// does not hold, or holds for other macros or another cel-go, is parsed
// from its text as before; the file WriteParsed makes never changes what
// a rule means, only how fast it is read. The file is not text anyone
// reviews: one that gave a text another expression would change a rule
// behind the text that Lint, Explain and the tests show, so Load reads
// it only where Options.TrustParsed says it is as trusted as the binary
// (the embedded rules), and parses a directory from elsewhere from its
// text.

// ParsedFile is the file at the root of a rules directory that holds its
// expressions parsed (WriteParsed). It is optional.
const ParsedFile = "parsed.bin"

// parsedMagic begins a ParsedFile: the format and its version. A line
// follows with the cel-go that parsed the expressions and the macros it
// expanded, then each expression: its text and the bytes of its
// exprpb.ParsedExpr, each after its length as a uvarint.
const parsedMagic = "dlroute parsed expressions 1\n"

// parsedIndex is a ParsedFile read: each expression's parsed form, by
// the parser key and text, as the bytes of an exprpb.ParsedExpr, which
// are unmarshalled only for an expression a load compiles. A nil index
// holds nothing.
type parsedIndex struct {
	cel     string            // the cel-go that parsed them (celVersion)
	key     string            // parserKey of every entry
	entries map[string][]byte // by text
}

// get returns text's parsed form in the parser of key, if the index holds
// it: a fresh AST each time, since cel-go's checker rewrites the tree it
// checks.
func (x *parsedIndex) get(key, text string) (*cel.Ast, bool) {
	if x == nil || x.key != key {
		return nil, false
	}
	data, ok := x.entries[text]
	if !ok {
		return nil, false
	}
	var pe exprpb.ParsedExpr
	if proto.Unmarshal(data, &pe) != nil {
		return nil, false // parsed from the text instead
	}
	return cel.ParsedExprToAstWithSource(&pe, common.NewTextSource(text)), true
}

// readParsed reads the ParsedFile of fsys, if there is one: a file in
// another format is an error at its position; one that another cel-go
// wrote, where this binary knows its own, is not used (nor are entries
// for other macros), since Load then parses every text.
func readParsed(fsys fs.FS, opts Options) (*parsedIndex, *Error) {
	f, err := readSource(fsys, ".", ParsedFile, opts)
	if err != nil {
		if err.Code == CodeMissingFile {
			return nil, nil
		}
		return nil, err
	}
	x, bad := opts.Cache.decodeParsed(f.text)
	if bad != "" {
		return nil, &Error{Code: CodeSchema, Message: bad, Pos: &Position{File: f.name},
			Hint: fmt.Sprintf("%s holds a rules directory's expressions parsed, written by engine.WriteParsed (go generate ./rules); delete it, or write it again", ParsedFile)}
	}
	if v := celVersion(); v != "" && x.cel != v {
		return nil, nil // another cel-go's parser made it: every text is parsed
	}
	return x, nil
}

// decodeParsed reads the entries of a ParsedFile, or says what is wrong
// with it.
func decodeParsed(data []byte) (*parsedIndex, string) {
	rest, ok := bytes.CutPrefix(data, []byte(parsedMagic))
	if !ok {
		return nil, fmt.Sprintf("%s does not begin %q", ParsedFile, strings.TrimSpace(parsedMagic))
	}
	header, rest, ok := bytes.Cut(rest, []byte{'\n'})
	cel, key, ok2 := strings.Cut(string(header), " ")
	if !ok || !ok2 {
		return nil, fmt.Sprintf("%s ends in its header", ParsedFile)
	}
	x := &parsedIndex{cel: cel, key: key, entries: map[string][]byte{}}
	field := func() ([]byte, bool) {
		n, size := binary.Uvarint(rest)
		if size <= 0 || n > uint64(len(rest)-size) {
			return nil, false
		}
		b := rest[size : size+int(n)]
		rest = rest[size+int(n):]
		return b, true
	}
	for len(rest) > 0 {
		text, ok1 := field()
		pe, ok2 := field()
		if !ok1 || !ok2 {
			return nil, fmt.Sprintf("%s is cut short after %d expressions", ParsedFile, len(x.entries))
		}
		x.entries[string(text)] = pe
	}
	return x, ""
}

// parserKey names the macros env's parser expands.
func parserKey(env *cel.Env) string {
	var macros []string
	for _, m := range env.Macros() {
		macros = append(macros, m.MacroKey())
	}
	slices.Sort(macros)
	return "macros " + strings.Join(macros, " ")
}

// celVersion is the version of cel-go this binary was built with, as
// "cel.dev/cel-go@v0.33.2", or "" where the binary does not record the
// versions of its modules (a test binary).
var celVersion = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Replace != nil {
				dep = dep.Replace
			}
			if dep.Path == "cel.dev/cel-go" {
				return dep.Path + "@" + dep.Version
			}
		}
	}
	return ""
})

// parsedSink collects, for WriteParsed, every expression a load parses.
type parsedSink struct {
	mu      sync.Mutex
	keys    map[string]bool
	entries map[string][]byte
}

func (s *parsedSink) add(key, text string, ast *cel.Ast) {
	if s == nil {
		return
	}
	pe, err := cel.AstToParsedExpr(ast)
	if err != nil {
		return
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(pe)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = true
	s.entries[text] = data
}

// WriteParsed loads the rules directory fsys, as Load does, parsing every
// expression from its text, and returns the ParsedFile that holds them
// all: sorted by text, so the same rules and the same cel-go give the
// same bytes. Rules that do not load are Load's error.
func WriteParsed(fsys fs.FS, opts Options) ([]byte, error) {
	sink := &parsedSink{keys: map[string]bool{}, entries: map[string][]byte{}}
	// Not the caller's Cache, whose programs from earlier loads skip their
	// parse: Load's own for this load parses each expression once.
	opts.Cache, opts.Reuse, opts.Select = nil, nil, nil
	opts.parsedSink = sink // and Load reads no ParsedFile
	if _, err := Load(fsys, opts); err != nil {
		return nil, err
	}
	if len(sink.keys) != 1 {
		return nil, fmt.Errorf("the rules parse with %d sets of macros; a %s holds one", len(sink.keys), ParsedFile)
	}
	x := &parsedIndex{cel: cmp.Or(celVersion(), "cel.dev/cel-go@unknown"), entries: sink.entries}
	for k := range sink.keys {
		x.key = k
	}
	return x.encode(), nil
}

// encode writes x as a ParsedFile, its entries sorted by text.
func (x *parsedIndex) encode() []byte {
	out := fmt.Appendf([]byte(parsedMagic), "%s %s\n", x.cel, x.key)
	for _, text := range slices.Sorted(maps.Keys(x.entries)) {
		out = binary.AppendUvarint(out, uint64(len(text)))
		out = append(out, text...)
		out = binary.AppendUvarint(out, uint64(len(x.entries[text])))
		out = append(out, x.entries[text]...)
	}
	return out
}
