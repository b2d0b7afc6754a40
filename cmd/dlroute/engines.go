package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/wasmhost"
)

// decider is a rule set as the commands use it, from either engine.
type decider interface {
	Ref() string
	Resolve(ctx context.Context, in engine.Input) (engine.Decision, error)
	// ResolveJSON decides one JSON line: the decision's JSON, or an
	// *engine.Error whose code says whether the input was at fault.
	ResolveJSON(ctx context.Context, line []byte) ([]byte, error)
	// ExplainJSON decides one JSON line with its trace: the JSON of an
	// engine.Explanation, or an error as ResolveJSON's.
	ExplainJSON(ctx context.Context, line []byte) ([]byte, error)
	// Exchange decides one JSON line and carries the decision out for
	// src, copying with the package's copier.
	Exchange(ctx context.Context, line []byte, src machine.Buffer) (wasmhost.ExchangeResult, error)
}

// engineFlag adds --engine to a command.
func engineFlag(fs *flag.FlagSet) *string {
	return fs.String("engine", "native", "evaluate with the `native` Go engine or the wasm module (run by wazero)")
}

// nativeRuleSet is an engine.RuleSet as a decider.
type nativeRuleSet struct{ *engine.RuleSet }

func (n nativeRuleSet) Exchange(ctx context.Context, line []byte, src machine.Buffer) (wasmhost.ExchangeResult, error) {
	in, err := n.DecodeInput(line)
	if err != nil {
		return wasmhost.ExchangeResult{}, err
	}
	d, err := n.Resolve(ctx, in)
	if err != nil {
		return wasmhost.ExchangeResult{}, err
	}
	return wasmhost.CarryOut(ctx, d, src, copier)
}

// openDeciders loads the rules natively (which reports any error in them
// with its position; with refs, in the versions they name and import),
// then returns a decider for each ref (every version
// when refs is nil) from the engine named by kind, and a function that
// releases the engine. A release ref that no version was checked against
// gets a note on stderr, or is refused when strict (lookupRuleSet).
//
// --engine wasm decides in the decision module (wasm/decision): each
// version's plan is built here natively (engine.RuleSet.Plan, refused
// with plan_unsupported at its position, as lint and serve refuse it)
// and loaded into an instance of its own, which decides, explains and
// tells the exchange's copy (carried out here, as natively).
func openDeciders(ctx context.Context, kind, rulesDir string, refs []string, strict bool, stderr io.Writer) (*engine.Catalog, []decider, func(), error) {
	cat, err := loadCatalog(rulesDir, refs...)
	if err != nil {
		return nil, nil, nil, err
	}
	var versions []*engine.RuleSet
	if refs == nil {
		versions = cat.RuleSets()
	}
	for _, ref := range refs {
		rs, _, err := lookupRuleSet(cat, ref, strict, stderr)
		if err != nil {
			return nil, nil, nil, err
		}
		versions = append(versions, rs)
	}
	var out []decider
	switch kind {
	case "native":
		for _, rs := range versions {
			out = append(out, nativeRuleSet{rs})
		}
		return cat, out, func() {}, nil
	case "wasm":
		// The plans first: a version no plan holds is the rules' error,
		// and needs no module to say so.
		plans := make([][]byte, len(versions))
		for i, rs := range versions {
			if plans[i], err = rs.Plan(); err != nil {
				return nil, nil, nil, err
			}
		}
		module, err := decisionwasm.Bytes()
		if err != nil {
			return nil, nil, nil, err
		}
		shared, err := decisionModule(ctx, module)
		if err != nil {
			return nil, nil, nil, err
		}
		var started []*decisionRuleSet
		done := func() {
			for _, d := range started {
				d.d.Close(context.WithoutCancel(ctx))
			}
		}
		for i, rs := range versions {
			d, err := shared.NewDecider(ctx, plans[i], "")
			if err != nil {
				done()
				return nil, nil, nil, err
			}
			drs := newDecisionRuleSet(rs.Ref(), d)
			started = append(started, drs)
			out = append(out, drs)
		}
		return cat, out, done, nil
	}
	panic("unreachable: validEngine checked --engine")
}

// decisionRuleSet is a version decided by the decision module: an
// instance of its own (wasmhost.Decider) holding the version's plan,
// and a memo of its answers by the line's bytes, as every host has.
//
// It reads no device: a line that leaves platform_version out is
// checked as it is (missing_field where the rules require it), which is
// what the compiler module answered under these commands, whose host
// gave it no wasmhost.Host.PlatformVersion (its platform_version host
// function then answers "unavailable", and the guest checks the line as
// it is), and what the native engine answers.
type decisionRuleSet struct {
	ref     string
	d       *wasmhost.Decider
	answers *contract.Answerer
}

func newDecisionRuleSet(ref string, d *wasmhost.Decider) *decisionRuleSet {
	return &decisionRuleSet{ref: ref, d: d, answers: contract.NewAnswerer(func(ctx context.Context, line []byte) ([]byte, bool, error) {
		out, err := d.DecideJSON(ctx, line)
		return out, true, err
	}, 0)}
}

func (r *decisionRuleSet) Ref() string { return r.ref }

// ResolveJSON decides line in the module: the native engine's bytes.
func (r *decisionRuleSet) ResolveJSON(ctx context.Context, line []byte) ([]byte, error) {
	out, err := r.answers.Decide(ctx, line)
	return slices.Clone(out), err // the memo's copy stays the memo's
}

// Resolve decides in as its JSON line.
func (r *decisionRuleSet) Resolve(ctx context.Context, in engine.Input) (engine.Decision, error) {
	line, err := json.Marshal(in)
	if err != nil {
		return engine.Decision{}, &engine.Error{Code: engine.CodeWrongType, Message: "the input does not encode as JSON: " + err.Error()}
	}
	return r.decide(ctx, line)
}

func (r *decisionRuleSet) decide(ctx context.Context, line []byte) (engine.Decision, error) {
	out, err := r.answers.Decide(ctx, line)
	if err != nil {
		return engine.Decision{}, err
	}
	var d engine.Decision
	if err := d.UnmarshalJSON(out); err != nil {
		return engine.Decision{}, &engine.Error{Code: wasmhost.CodeModule, Message: fmt.Sprintf("the decision module answered %q: %v", out, err)}
	}
	return d, nil
}

// Exchange decides line in the module and carries the decision out on
// this side, as nativeRuleSet does: the decision module has no copier.
func (r *decisionRuleSet) Exchange(ctx context.Context, line []byte, src machine.Buffer) (wasmhost.ExchangeResult, error) {
	d, err := r.decide(ctx, line)
	if err != nil {
		return wasmhost.ExchangeResult{}, err
	}
	return wasmhost.CarryOut(ctx, d, src, copier)
}

// ExplainJSON explains line in the module: the native engine's bytes.
func (r *decisionRuleSet) ExplainJSON(ctx context.Context, line []byte) ([]byte, error) {
	if len(line) > contract.MaxLineLen {
		return nil, contract.TooLong()
	}
	return r.d.ExplainJSON(ctx, line)
}

// validEngine reports a bad --engine as a usage error.
func validEngine(kind string, stderr io.Writer) bool {
	if kind == "native" || kind == "wasm" {
		return true
	}
	fmt.Fprintf(stderr, "error: unknown engine %q\nhint: --engine is native or wasm\n", kind)
	return false
}

// decisions is the decision module as this process compiled it, by the
// digest of its bytes: every --engine wasm command a process runs (the
// tests run hundreds in one) shares its compiled code.
var decisions struct {
	sync.Mutex
	digest [sha256.Size]byte
	module *wasmhost.DecisionModule
}

// decisionModule compiles the decision module once per process, or again
// when the bytes differ from the last ones compiled
// ($DLROUTE_DECISION_WASM names another file), with wazero's compiled
// code cached on disk beside the compiler module's, so that a later
// process compiles it in milliseconds.
func decisionModule(ctx context.Context, module []byte) (*wasmhost.DecisionModule, error) {
	digest := sha256.Sum256(module)
	decisions.Lock()
	defer decisions.Unlock()
	if decisions.module != nil && decisions.digest == digest {
		return decisions.module, nil
	}
	cfg := wasmhost.DecisionConfig{Module: module}
	if dir, err := os.UserCacheDir(); err == nil {
		if cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "dlroute", "wazero")); err == nil {
			cfg.Cache = cache
		}
	}
	m, err := wasmhost.CompileDecision(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, err
	}
	// A module compiled before is left open: deciders of a command
	// still running may be its instances. Only a test changes the bytes.
	decisions.digest, decisions.module = digest, m
	return m, nil
}
