// Package capi is what libdlroute does, in plain Go: it keeps the rules
// and rule sets a C caller opened, as numbered handles, and answers each
// entry of dlroute.h with bytes and a status. libdlroute/ only converts C
// pointers to slices and calls it (and refuses calls from a forked child
// before they reach Go), so this logic is tested natively like any
// package.
//
// Every function is safe for concurrent use: the handle tables are
// sync.Maps, and what a handle holds (an engine.Catalog, an
// engine.RuleSet, a memo) is immutable or concurrency-safe itself.
package capi

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/rulesource"
	"github.com/dlroute/dlroute/rules"
)

// Status is what every entry returns: the module's table (contract.Status),
// of which the C library returns the rows marked C.
type Status = contract.Status

const (
	StatusOK          = contract.StatusOK
	StatusInputError  = contract.StatusInputError
	StatusEvalError   = contract.StatusEvalError
	StatusLoadError   = contract.StatusLoadError
	StatusNoRuleSet   = contract.StatusNoRuleSet
	StatusBadHandle   = contract.StatusBadHandle
	StatusBadArgument = contract.StatusBadArgument
	StatusTooSmall    = contract.StatusTooSmall
	StatusHostError   = contract.StatusHostError
	// StatusForked is a call from a child of the process that loaded the
	// library: a Go runtime does not survive fork. libdlroute's C side
	// returns it; Go never runs in the child.
	StatusForked = contract.StatusForked
	// StatusInternal is a fault inside the library (a recovered panic):
	// a bug, reported instead of crashing the caller's process.
	StatusInternal = contract.StatusInternal
	// StatusTooManyOpen is an Open while MaxOpenRules rules are open.
	StatusTooManyOpen = contract.StatusTooManyOpen
)

// Limits of a call, DLROUTE_MAX_INPUT_LEN, DLROUTE_MAX_OPEN and
// DLROUTE_DEADLINE_MS in dlroute.h.
const (
	// MaxInputLen is the longest input any entry takes, whatever it is (a
	// JSON line, a binary input, an interop request, a path, a key, a
	// ref): a JSON line's limit, contract.MaxLineLen. A length is checked
	// against it before a byte is read, since a C caller's length is all
	// that says how long its buffer is, and the memo hashes a whole input.
	MaxInputLen = contract.MaxLineLen
	// MaxOpenRules is how many rules may be open at once in a process.
	// Open rules cost 0.6 MB each before they compile a version, and
	// tens of MB once they compile every one; a caller that never closes
	// gets StatusTooManyOpen instead of the host's memory.
	MaxOpenRules = 64
)

// Deadline bounds the evaluation of each call, as `serve`'s request
// timeout does: past it the call answers an eval_error, code canceled.
// A variable for the tests only.
var Deadline = 10 * time.Second

// bounded is ctx with the call's Deadline.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, Deadline)
}

// Handles are numbers, never pointers: a handle a caller made up, closed
// or kept too long is StatusBadHandle, not a crash. They are never
// reused, so a stale one cannot name another's rules.
var (
	lastHandle atomic.Uint64
	engines    sync.Map     // uint64 -> *openRules
	ruleSets   sync.Map     // uint64 -> *ruleSet
	openCount  atomic.Int64 // rules open, counted before they load
)

// loads keeps what this process's loads of rules made, whatever handle
// asked: a program that opens the rules again after a one-line edit
// (dlroute.load(path) once more, engine.ruleset(...) of a new handle)
// compiles only what changed. What an engine.Cache gives back is what a
// fresh Load makes, errors included; it drops what recent loads did not
// use, and is safe for concurrent use.
var loads = engine.NewCache()

// openRules is what dlroute_open returns a handle for: a catalog
// compiled at open, or, for the embedded rules, the files, each version
// compiled when it is first asked for.
type openRules struct {
	catalog *engine.Catalog // nil until needed, for the embedded rules
	fsys    fs.FS
	// For the embedded rules, what the last compile made (a version
	// another imports), reused by the next, as the files' YAML and
	// programs are by loads: asking for jax after exchange compiles
	// nothing again.
	last   *engine.Catalog
	mu     sync.Mutex
	handed map[string]uint64 // rule-set ref -> handle, closed with the rules
	closed bool
}

// ruleSet is what dlroute_ruleset returns a handle for.
type ruleSet struct {
	rs     *engine.RuleSet
	answer *contract.Answerer // resolve_json's, which remembers decisions by input bytes
	rules  map[string]uint32  // rule id -> index, for binary decisions
	decls  []engine.InputDecl
}

// Open loads rules: the embedded ones when path is "", else a rules
// directory or a bundle file. key, when set, is a public key (the key,
// or a file holding it) that a bundle must be signed by. On failure the
// output is a JSON array of error objects (StatusLoadError) or one error
// object (StatusBadArgument).
//
// Rules a caller gives are compiled whole at open, from their text (a
// directory's parsed.bin is not read: engine.Options.TrustParsed), so
// that every error in them is reported at once. The embedded rules, which their tests prove
// load, are compiled a version at a time as RuleSet asks for them, and
// without their tests.yaml (engine.Options.SkipTests): a process that
// decides with jax alone does not compile exchange, nor jax's tests.
func Open(path, key string) (uint64, []byte, Status) {
	if len(path) > MaxInputLen || len(key) > MaxInputLen {
		out, st := TooLong(FormArgument)
		return 0, out, st
	}
	if openCount.Add(1) > MaxOpenRules { // counted first: a refused open loads nothing
		openCount.Add(-1)
		return 0, errorJSON(tooManyOpen()), StatusTooManyOpen
	}
	h, out, st := load(path, key)
	if st != StatusOK {
		openCount.Add(-1)
	}
	return h, out, st
}

func tooManyOpen() error {
	return &engine.Error{Code: CodeTooManyOpen, Message: fmt.Sprintf("%d rules are open in this process, the most libdlroute holds at once", MaxOpenRules),
		Hint: "close rules you are done with (dlroute_close; Python: Engine.close() or a with block); one open rules serves every thread"}
}

// CodeTooManyOpen is the code of StatusTooManyOpen's error.
const CodeTooManyOpen engine.Code = "too_many_open"

func load(path, key string) (uint64, []byte, Status) {
	fsys, err := rulesFS(path, key)
	if err != nil {
		return 0, errorsJSON(err), StatusLoadError
	}
	o := &openRules{fsys: fsys, handed: map[string]uint64{}}
	if path != "" {
		o.catalog, err = engine.Load(fsys, engine.Options{Root: strings.TrimSuffix(path, "/"), Cache: loads})
		if err != nil {
			return 0, errorsJSON(err), StatusLoadError
		}
	}
	h := lastHandle.Add(1)
	engines.Store(h, o)
	return h, nil, StatusOK
}

// find returns the rule set ref of the rules, compiling it (and what it
// imports) first for the embedded rules, with their parsed.bin, and the
// warning of a release ref that no version was checked against
// (engine.Catalog.Lookup). o.mu is held.
func (o *openRules) find(ref string) (*engine.RuleSet, *engine.ReleaseWarning, error) {
	if o.catalog != nil {
		return o.catalog.Lookup(ref)
	}
	cat, err := engine.Load(o.fsys, engine.Options{Select: []string{ref}, Reuse: o.last, Cache: loads, SkipTests: true, TrustParsed: rules.Embedded(o.fsys)})
	if err != nil {
		return nil, nil, err
	}
	o.last = cat
	return cat.Lookup(ref)
}

// whole is the catalog of every version, compiling it first for the
// embedded rules. o.mu is held.
func (o *openRules) whole() (*engine.Catalog, error) {
	if o.catalog == nil {
		cat, err := engine.Load(o.fsys, engine.Options{TrustParsed: rules.Embedded(o.fsys), Cache: loads})
		if err != nil {
			return nil, err
		}
		o.catalog = cat
	}
	return o.catalog, nil
}

// rulesFS is the embedded rules, or those at path, as `dlroute --rules`
// reads them; a key checks a bundle's signature, and names nothing else.
func rulesFS(path, key string) (fs.FS, error) {
	if key == "" {
		return rulesource.Open(path, nil, rulesHint)
	}
	if st, err := os.Stat(path); path == "" || err == nil && st.IsDir() {
		return nil, &engine.Error{Code: engine.CodeRead, Message: "a key checks a bundle's signature, and the rules are not a bundle",
			Hint: "build a bundle with 'dlroute bundle build DIR -o rules.tar.gz --sign KEY', or leave the key out"}
	}
	k, err := rulesource.PublicKey(key)
	if err != nil {
		return nil, &engine.Error{Code: engine.CodeRead, Message: err.Error(), Hint: "a public key is name+hash+key, as 'dlroute bundle keygen' writes it to KEY.pub"}
	}
	return rulesource.Open(path, []string{k}, rulesHint)
}

const rulesHint = "rules are a directory that holds <name>/<version>/ folders, or a bundle from 'dlroute bundle build'"

// Close releases rules and every rule-set handle taken from them.
func Close(h uint64) Status {
	v, ok := engines.LoadAndDelete(h)
	if !ok {
		return StatusBadHandle
	}
	openCount.Add(-1)
	o := v.(*openRules)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	for _, rh := range o.handed {
		ruleSets.Delete(rh)
	}
	return StatusOK
}

// RuleSets lists the versions the rules hold, as `dlroute rules --json`
// describes each: a JSON array of {"ref","name","version","default"}.
func RuleSets(h uint64) ([]byte, Status) {
	o, ok := rulesOf(h)
	if !ok {
		return nil, StatusBadHandle
	}
	o.mu.Lock()
	cat, err := o.whole()
	o.mu.Unlock()
	if err != nil {
		return errorsJSON(err), StatusLoadError
	}
	type entry struct {
		Ref     string `json:"ref"`
		Name    string `json:"name"`
		Version string `json:"version"`
		Default bool   `json:"default"`
	}
	var list []entry
	for _, rs := range cat.RuleSets() {
		newest, _ := cat.RuleSet(rs.Name())
		list = append(list, entry{rs.Ref(), rs.Name(), rs.Version(), newest == rs})
	}
	data, _ := json.Marshal(list)
	return data, StatusOK
}

// RuleSet returns the handle of a rule set of the rules ("jax" for the
// newest version, "jax@v2", "jax==0.10.2"); the same version always gets
// the same handle while the rules are open. With StatusOK the output is
// empty, or for a release ref that no version was checked against the
// engine.ReleaseWarning's JSON: the handle is the version it names.
func RuleSet(h uint64, ref string) (uint64, []byte, Status) {
	if len(ref) > MaxInputLen {
		out, st := TooLong(FormArgument)
		return 0, out, st
	}
	o, ok := rulesOf(h)
	if !ok {
		return 0, nil, StatusBadHandle
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, nil, StatusBadHandle
	}
	rs, w, err := o.find(ref)
	var warning []byte
	if w != nil {
		warning, _ = json.Marshal(w)
	}
	if err != nil {
		if list := engine.Errors(err); len(list) == 1 {
			switch list[0].Code {
			case engine.CodeNoRuleSet:
				return 0, errorJSON(err), StatusNoRuleSet
			case engine.CodeTooLong: // a release past engine.MaxReleaseLen: the argument, as a ref past MaxInputLen
				return 0, errorJSON(err), StatusBadArgument
			}
		}
		return 0, errorsJSON(err), StatusLoadError
	}
	if rh, ok := o.handed[rs.Ref()]; ok {
		return rh, warning, StatusOK
	}
	r := &ruleSet{rs: rs, answer: contract.NativeAnswerer(rs, 0), rules: map[string]uint32{}, decls: rs.Inputs()}
	for i, id := range rs.RuleIDs() {
		r.rules[id] = uint32(i)
	}
	rh := lastHandle.Add(1)
	ruleSets.Store(rh, r)
	o.handed[rs.Ref()] = rh
	return rh, warning, StatusOK
}

func rulesOf(h uint64) (*openRules, bool) {
	v, ok := engines.Load(h)
	if !ok {
		return nil, false
	}
	return v.(*openRules), true
}

func ruleSetOf(h uint64) (*ruleSet, bool) {
	v, ok := ruleSets.Load(h)
	if !ok {
		return nil, false
	}
	return v.(*ruleSet), true
}

// Describe is what a caller needs to write binary inputs and read binary
// decisions: the JSON of a contract.Description, as dlroute_describe in the
// WebAssembly module.
func Describe(h uint64) ([]byte, Status) {
	r, ok := ruleSetOf(h)
	if !ok {
		return nil, StatusBadHandle
	}
	data, _ := json.Marshal(contract.Description{Ref: r.rs.Ref(), Inputs: r.decls, Rules: r.rs.RuleIDs(), DeviceTypes: r.rs.DeviceTypes()})
	return data, StatusOK
}

// ResolveJSON answers one JSON input line with the line `dlroute resolve
// --json` writes for it (as its first line): the decision
// (StatusOK), or {"input_error":...} (StatusInputError) or
// {"eval_error":...} (StatusEvalError). Decisions are remembered by the
// input's bytes.
func ResolveJSON(ctx context.Context, h uint64, line []byte) ([]byte, Status) {
	r, ok := ruleSetOf(h)
	if !ok {
		return nil, StatusBadHandle
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	return r.answer.Answer(ctx, line)
}

// ExplainJSON answers one JSON input line with the JSON of its
// engine.Explanation, or the error line and status of ResolveJSON.
func ExplainJSON(ctx context.Context, h uint64, line []byte) ([]byte, Status) {
	r, ok := ruleSetOf(h)
	if !ok {
		return nil, StatusBadHandle
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	return contract.Explain(ctx, r.rs, line)
}

// Forms of an entry's input, for TooLong.
type Form int

const (
	FormLine     Form = iota // a JSON line: resolve_json, explain_json, exchange_json
	FormBinary               // a binary input: resolve
	FormRequest              // an interop request: interop_json, interop_matrix_json
	FormArgument             // a path, a key or a ref: open, ruleset
)

// TooLong is an entry's answer to an input of the form f longer than
// MaxInputLen, made without the input: what the entry answers to a real
// input that long, which libdlroute's exports give for a length over the
// limit before they make a slice of the caller's pointer.
func TooLong(f Form) ([]byte, Status) {
	switch f {
	case FormLine:
		return contract.AnswerOf(nil, contract.TooLong())
	case FormBinary:
		return errorJSON(&engine.Error{Code: engine.CodeTooLong, Message: fmt.Sprintf("binary input is longer than %d bytes", MaxInputLen)}), StatusInputError
	case FormRequest:
		return interopError(contract.TooLong())
	}
	return errorJSON(&engine.Error{Code: engine.CodeTooLong, Message: fmt.Sprintf("an argument is longer than %d bytes", MaxInputLen),
		Hint: "a path, a key or a rule-set ref is far shorter: is its length the right one?"}), StatusBadArgument
}

func errorJSON(err error) []byte { return contract.ErrorJSON(err) }

func errorsJSON(err error) []byte {
	list := engine.Errors(err)
	if len(list) == 0 {
		list = []*engine.Error{{Code: engine.CodeRead, Message: err.Error()}}
	}
	data, _ := json.Marshal(list)
	return data
}
