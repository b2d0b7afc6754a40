// Package guest is what the WebAssembly module does, in plain Go: it holds
// the loaded rules and answers the module's exports with bytes and a
// status. wasm/ only converts pointers to slices and calls it, so this
// logic is tested natively like any package.
package guest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/memo"
)

// AskPlatformVersion asks the host for the platform_version of a device:
// the "ask the machine" path, for inputs that leave it out. An error that
// wraps ErrNoAnswer means the host cannot read the machine at all; the
// input is then checked as it is, and gets the native engine's
// missing_field error.
type AskPlatformVersion func(device int) (string, error)

// ErrNoAnswer is what AskPlatformVersion wraps when the host has no way to
// read the machine.
var ErrNoAnswer = errors.New("the host cannot read the machine")

// hostError is a host that tried to read the machine and failed: the
// status is host_error, the error object the engine.Error inside.
type hostError struct{ e *engine.Error }

func (h hostError) Error() string { return h.e.Error() }
func (h hostError) Unwrap() error { return h.e }

// CopyToHost asks the host to copy the buffer it knows by handle buffer
// into host memory (kDLCPU, 0): the copy_to_host import. It returns the
// copy's handle, and the host's status (contract.HostOK, ...).
type CopyToHost func(buffer uint32) (handle, status uint32)

// Host is what the guest asks of its host: the dlroute_host imports. A nil
// function is a host that has nothing to answer with.
type Host struct {
	PlatformVersion AskPlatformVersion
	CopyToHost      CopyToHost
}

// Guest is the module's state: the catalog and the rule sets handed out.
// It is not safe for concurrent use; neither is a module instance.
type Guest struct {
	catalog *engine.Catalog
	cache   *engine.Cache // what loads made of files and expressions, for the next
	handles []*handle     // handle h is handles[h-1]
	host    Host

	// lazy is the rules of LoadLazy, compiled a version at a time as
	// RuleSet asks: catalog then holds the versions compiled, which are
	// those compiled names, and each compile reuses them (so a rule set
	// keeps its handle). byRef is the handle each ref got since that load.
	// All three are nil after Load.
	lazy     fs.FS
	compiled []string
	byRef    map[string]uint32

	// What Resolve reuses from call to call: the input it decodes into,
	// and the decision it encodes. The engine keeps neither.
	input engine.Input
	out   []byte
}

// handle is a rule set handed out, with what each call needs of it.
type handle struct {
	rs         *engine.RuleSet
	decls      []engine.InputDecl
	rules      map[string]uint32 // rule id -> index
	asksOfHost bool              // it declares platform_version
	// lazy is the rules of the LoadLazy it was compiled from, without its
	// tests (engine.Options.SkipTests); nil after Load. tested is the same
	// version compiled from them with its tests, by the first Test.
	lazy   fs.FS
	tested *engine.RuleSet

	// The answers given, by the bytes asked: a repeated input is answered
	// without decoding it, checking it or building the engine's memo key,
	// which were most of a remembered call (BENCHMARKS.md, "The WebAssembly
	// module through wazero"). binary is
	// dlroute_resolve's (binary input to binary decision), lines
	// dlroute_resolve_json's (JSON line to decision JSON, the answerer
	// every host answers with). Only decisions are remembered, and only of
	// inputs that did not ask the host.
	binary *memo.Memo[[]byte]
	lines  *contract.Answerer
}

// New returns a guest that asks host.
func New(host Host) *Guest { return &Guest{host: host} }

// Load replaces the catalog with the rules in archive. On any error the
// previous catalog stays, and the output is a JSON array of the errors.
//
// The archive's parsed.bin, if it has one, is taken as the host's word
// (engine.Options.TrustParsed): the module can tell no rules from
// others, so a host puts one in only for the embedded rules (the Go host
// for rules.FS itself, the Node package for its own rules directory, the
// page for the rules a server embeds), and an archive a caller packed
// itself is as trusted as the caller.
func (g *Guest) Load(archive []byte) ([]byte, contract.Status) {
	fsys, err := contract.UnpackFS(archive)
	if err != nil {
		return errorsJSON(engine.ErrorList{{Code: engine.CodeRead, Message: err.Error()}}), contract.StatusLoadError
	}
	// The versions that did not change since the last load are taken from
	// it, not compiled again, and so are the files and expressions of the
	// version that did: an editor loads on every keystroke.
	if g.cache == nil {
		g.cache = engine.NewCache()
	}
	cat, err := engine.Load(fsys, engine.Options{Reuse: g.catalog, Cache: g.cache, TrustParsed: true})
	if err != nil {
		return errorsJSON(loadErrors(err)), contract.StatusLoadError
	}
	g.catalog, g.lazy, g.compiled, g.byRef = cat, nil, nil, nil
	return []byte("[]"), contract.StatusOK
}

// LoadLazy replaces the rules with those in archive, compiling none of
// them yet: RuleSet compiles the version it is asked for, and what that
// imports, when it is first asked for, and without its tests, which only
// Test reads. It is for rules the host has
// checked (the embedded rules, rules it loaded natively, an archive
// another instance loaded), where compiling every version at start is
// time spent for nothing: a host that decides with exchange never
// compiles jax@v1. Only an archive that does not unpack is an error here,
// and the rules in service then stay; a version that does not compile
// is RuleSet's load_error.
func (g *Guest) LoadLazy(archive []byte) ([]byte, contract.Status) {
	fsys, err := contract.UnpackFS(archive)
	if err != nil {
		return errorsJSON(engine.ErrorList{{Code: engine.CodeRead, Message: err.Error()}}), contract.StatusLoadError
	}
	g.lazy, g.compiled, g.byRef = fsys, nil, map[string]uint32{}
	return []byte("[]"), contract.StatusOK
}

// loadErrors is err as a list of engine errors.
func loadErrors(err error) []*engine.Error {
	if list := engine.Errors(err); len(list) > 0 {
		return list
	}
	return []*engine.Error{{Code: engine.CodeRead, Message: err.Error()}}
}

// compile returns ref's rule set from the rules of LoadLazy, compiling it
// and what it imports; a ref that names no version is no_ruleset with an
// error object, a version that does not compile load_error with the list.
func (g *Guest) compile(ref string) (*engine.RuleSet, []byte, contract.Status) {
	if g.cache == nil {
		g.cache = engine.NewCache()
	}
	// What was compiled before is selected again, and taken as it is from
	// the catalog that holds it: the new catalog holds all of it and ref.
	sel := append(slices.Clip(g.compiled), ref)
	cat, err := engine.Load(g.lazy, engine.Options{Select: sel, Reuse: g.catalog, Cache: g.cache, SkipTests: true, TrustParsed: true})
	if err != nil {
		list := loadErrors(err)
		if len(list) == 1 && list[0].Code == engine.CodeNoRuleSet {
			return nil, contract.ErrorJSON(list[0]), contract.StatusNoRuleSet
		}
		return nil, errorsJSON(list), contract.StatusLoadError
	}
	rs, err := cat.RuleSet(ref)
	if err != nil {
		return nil, contract.ErrorJSON(err), contract.StatusNoRuleSet
	}
	g.catalog = cat
	if !slices.Contains(g.compiled, rs.Ref()) {
		g.compiled = append(g.compiled, rs.Ref()) // "jax" and "jax@v3" are one
	}
	return rs, nil, contract.StatusOK
}

// RuleSet returns a handle for a rule set ("jax", "jax@v2"); the same rule
// set always gets the same handle. Handles outlive a later Load. After
// LoadLazy, the version is compiled here the first time it is asked for,
// and one that does not compile is load_error with the list of errors.
func (g *Guest) RuleSet(ref string) (uint32, []byte, contract.Status) {
	var rs *engine.RuleSet
	switch {
	case g.lazy != nil:
		if h, ok := g.byRef[ref]; ok {
			return h, nil, contract.StatusOK
		}
		var out []byte
		var status contract.Status
		if rs, out, status = g.compile(ref); status != contract.StatusOK {
			return 0, out, status
		}
	case g.catalog == nil:
		return 0, contract.ErrorJSON(&engine.Error{Code: engine.CodeNoRuleSet, Message: "no rules loaded"}), contract.StatusNotLoaded
	default:
		var err error
		if rs, err = g.catalog.RuleSet(ref); err != nil {
			return 0, contract.ErrorJSON(err), contract.StatusNoRuleSet
		}
	}
	h := g.handleOf(rs)
	if g.byRef != nil {
		g.byRef[ref] = h
		g.handles[h-1].lazy = g.lazy
	}
	return h, nil, contract.StatusOK
}

// handleOf returns the handle of rs, handing out a new one the first time.
func (g *Guest) handleOf(rs *engine.RuleSet) uint32 {
	if i := slices.IndexFunc(g.handles, func(h *handle) bool { return h != nil && h.rs == rs }); i >= 0 {
		return uint32(i + 1)
	}
	h := &handle{rs: rs, decls: rs.Inputs(), rules: map[string]uint32{}, binary: memo.New[[]byte](engine.DefaultMemoSize)}
	h.lines = contract.NewAnswerer(func(ctx context.Context, line []byte) ([]byte, bool, error) {
		d, asked, err := g.decideLine(ctx, h, line)
		if err != nil {
			return nil, false, err
		}
		data, _ := d.MarshalJSON()
		return data, !asked, nil
	}, 0)
	for i, id := range rs.RuleIDs() {
		h.rules[id] = uint32(i)
	}
	h.asksOfHost = slices.ContainsFunc(h.decls, func(d engine.InputDecl) bool { return d.Name == "platform_version" })
	g.handles = append(g.handles, h)
	return uint32(len(g.handles))
}

// Describe returns the Description of a handle as JSON.
func (g *Guest) Describe(h uint32) ([]byte, contract.Status) {
	hd, ok := g.handle(h)
	if !ok {
		return nil, contract.StatusBadHandle
	}
	rs := hd.rs
	data, _ := json.Marshal(contract.Description{Ref: rs.Ref(), Inputs: hd.decls, Rules: rs.RuleIDs(), DeviceTypes: rs.DeviceTypes()})
	return data, contract.StatusOK
}

func (g *Guest) handle(h uint32) (*handle, bool) {
	if h == 0 || int(h) > len(g.handles) || g.handles[h-1] == nil {
		return nil, false
	}
	return g.handles[h-1], true
}

// Resolve decides a binary input (contract.DecodeFields) and returns a binary
// decision (contract.AppendDevice, contract.AppendExport where the decision sets
// copy, capsule or flags, contract.AppendException), or an error object. The
// decision's bytes are the guest's until the next call to Resolve.
func (g *Guest) Resolve(ctx context.Context, h uint32, in []byte) ([]byte, contract.Status) {
	hd, ok := g.handle(h)
	if !ok {
		return nil, contract.StatusBadHandle
	}
	if out, ok := hd.binary.Get(in); ok {
		return out, contract.StatusOK
	}
	if g.input == nil {
		g.input = engine.Input{}
	}
	if err := contract.BinaryInputInto(g.input, in, hd.decls); err != nil {
		return contract.ErrorJSON(err), contract.StatusBadArgument
	}
	asks := hd.asks(g.input)
	d, err := g.decide(ctx, hd, g.input)
	if err != nil {
		return contract.ErrorJSON(err), statusOf(err)
	}
	g.out = contract.AppendDecision(g.out[:0], hd.rules[d.Rule], d)
	if !asks {
		hd.binary.Put(in, slices.Clone(g.out))
	}
	return g.out, contract.StatusOK
}

// ResolveJSON decides one JSON object, as a line of `dlroute resolve
// --json`, and returns the decision's JSON, byte for byte what the native
// engine writes, or an error object.
func (g *Guest) ResolveJSON(ctx context.Context, h uint32, line []byte) ([]byte, contract.Status) {
	hd, ok := g.handle(h)
	if !ok {
		return nil, contract.StatusBadHandle
	}
	out, err := hd.lines.Decide(ctx, line)
	if err != nil {
		return contract.ErrorJSON(err), statusOf(err)
	}
	return out, contract.StatusOK
}

// asks says whether deciding in asks the host for its platform_version:
// the answer then depends on the machine, not on the bytes alone.
func (hd *handle) asks(in engine.Input) bool {
	_, has := in["platform_version"]
	return hd.asksOfHost && !has
}

// ExplainJSON decides one JSON object as ResolveJSON does and returns the
// JSON of its engine.Explanation: the decision and how it was reached.
func (g *Guest) ExplainJSON(ctx context.Context, h uint32, line []byte) ([]byte, contract.Status) {
	hd, ok := g.handle(h)
	if !ok {
		return nil, contract.StatusBadHandle
	}
	in, _, err := g.decodeLine(hd, line)
	if err != nil {
		return contract.ErrorJSON(err), statusOf(err)
	}
	x, err := hd.rs.Explain(ctx, in)
	if err != nil {
		return contract.ErrorJSON(err), statusOf(err)
	}
	data, _ := x.MarshalJSON()
	return data, contract.StatusOK
}

// decideLine decodes a JSON line (decodeLine) and decides it; asked says
// whether the host was asked for the platform version.
func (g *Guest) decideLine(ctx context.Context, hd *handle, line []byte) (engine.Decision, bool, error) {
	in, asked, err := g.decodeLine(hd, line)
	if err != nil {
		return engine.Decision{}, asked, err
	}
	d, err := g.decide(ctx, hd, in)
	return d, asked, err
}

// decodeLine decodes a JSON line of at most contract.MaxLineLen bytes; a
// platform_version left out is asked of the host first, so that the
// input checks see it, and asked says so.
func (g *Guest) decodeLine(hd *handle, line []byte) (in engine.Input, asked bool, err error) {
	if len(line) > contract.MaxLineLen {
		return nil, false, contract.TooLong()
	}
	return g.decodeAsking(hd, line)
}

// decodeAsking decodes a JSON input; a platform_version left out is asked
// of the host first, so that the input checks see it, and asked says so.
func (g *Guest) decodeAsking(hd *handle, line []byte) (in engine.Input, asked bool, err error) {
	rs := hd.rs
	in, err = rs.DecodeInput(line)
	var e *engine.Error
	if err == nil || !errors.As(err, &e) || e.Code != engine.CodeMissingField {
		return in, false, err
	}
	var obj engine.Input
	if json.Unmarshal(line, &obj) != nil {
		return nil, false, err
	}
	if _, has := obj["platform_version"]; has || !hd.asksOfHost {
		return nil, false, err
	}
	version, askErr := g.askFor(obj)
	if errors.Is(askErr, ErrNoAnswer) {
		return nil, true, err
	}
	if askErr != nil {
		return nil, true, askErr
	}
	obj["platform_version"] = version
	patched, _ := json.Marshal(obj)
	in, err = rs.DecodeInput(patched)
	return in, true, err
}

// askFor asks the host for the platform version of the input's device:
// local_hardware_id when it is an int, else device 0.
func (g *Guest) askFor(in engine.Input) (string, error) {
	device := 0
	switch id := in["local_hardware_id"].(type) {
	case int64:
		device = int(id)
	case json.Number:
		if n, err := id.Int64(); err == nil {
			device = int(n)
		}
	case float64:
		device = int(id)
	}
	if g.host.PlatformVersion == nil {
		return "", ErrNoAnswer
	}
	v, err := g.host.PlatformVersion(device)
	if errors.Is(err, ErrNoAnswer) {
		return "", err
	}
	if err != nil {
		return "", hostError{&engine.Error{Code: engine.CodeMissingField, Message: fmt.Sprintf("input platform_version is missing and the host could not read device %d: %v", device, err)}}
	}
	return v, nil
}

// decide decides in, asking the host for a platform_version left out; a
// host that tried and failed is a hostError.
func (g *Guest) decide(ctx context.Context, hd *handle, in engine.Input) (engine.Decision, error) {
	if _, has := in["platform_version"]; !has && hd.asksOfHost {
		version, err := g.askFor(in)
		switch {
		case errors.Is(err, ErrNoAnswer): // checked as it is: missing_field
		case err != nil:
			return engine.Decision{}, err
		default:
			in["platform_version"] = version
		}
	}
	return hd.rs.Resolve(ctx, in)
}

// statusOf is the status of an error: host_error for a host that failed,
// else the answerer's input_error or eval_error.
func statusOf(err error) contract.Status {
	if errors.As(err, new(hostError)) {
		return contract.StatusHostError
	}
	return contract.Classify(err)
}

func errorsJSON(list []*engine.Error) []byte {
	data, _ := json.Marshal(list)
	return data
}
