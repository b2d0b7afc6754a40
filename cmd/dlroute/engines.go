package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/answer"
	"github.com/dlroute/dlroute/internal/wasmbuild"
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
// with its position), then returns a decider for each ref (every version
// when refs is nil) from the engine named by kind, and a function that
// releases the engine. A release ref that no version was checked against
// gets a note on stderr, or is refused when strict (lookupRuleSet).
//
// --engine wasm decides in the decision module (wasm/decision): each
// version's plan is built here natively (engine.RuleSet.Plan, refused
// with plan_unsupported at its position, as lint and serve refuse it)
// and loaded into an instance of its own. Only ExplainJSON still
// starts the compiler module (decisionRuleSet).
func openDeciders(ctx context.Context, kind, rulesDir string, refs []string, strict bool, stderr io.Writer) (*engine.Catalog, []decider, func(), error) {
	cat, err := loadCatalog(rulesDir)
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
		module, _, err := wasmbuild.Decision(ctx, wasmbuild.Options{Progress: stderr})
		if err != nil {
			return nil, nil, nil, err
		}
		shared, err := decisionModule(ctx, module)
		if err != nil {
			return nil, nil, nil, err
		}
		explain := &compilerExplain{rulesDir: rulesDir, progress: stderr}
		var started []*decisionRuleSet
		done := func() {
			for _, d := range started {
				d.d.Close(context.WithoutCancel(ctx))
			}
			explain.close(context.WithoutCancel(ctx))
		}
		for i, rs := range versions {
			d, err := shared.NewDecider(ctx, plans[i], "")
			if err != nil {
				done()
				return nil, nil, nil, err
			}
			drs := newDecisionRuleSet(rs.Ref(), d, explain)
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
	answers *answer.Answerer
	explain *compilerExplain
}

func newDecisionRuleSet(ref string, d *wasmhost.Decider, explain *compilerExplain) *decisionRuleSet {
	return &decisionRuleSet{ref: ref, d: d, explain: explain, answers: answer.New(func(ctx context.Context, line []byte) ([]byte, bool, error) {
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

// ExplainJSON explains in the compiler module: the decision module gives
// no trace yet, so `resolve --explain --engine wasm`, alone of the
// commands, still starts it.
func (r *decisionRuleSet) ExplainJSON(ctx context.Context, line []byte) ([]byte, error) {
	rs, err := r.explain.ruleSet(ctx, r.ref)
	if err != nil {
		return nil, err
	}
	return rs.ExplainJSON(ctx, line)
}

// compilerExplain is the compiler module's runner for ExplainJSON,
// started at its first call. Not safe for concurrent use: a command
// explains one line at a time.
type compilerExplain struct {
	rulesDir string
	progress io.Writer
	runner   *wasmhost.Runner
}

func (c *compilerExplain) ruleSet(ctx context.Context, ref string) (*wasmhost.RuleSet, error) {
	if c.runner == nil {
		module, _, err := wasmbuild.Module(ctx, wasmbuild.Options{Progress: c.progress})
		if err != nil {
			return nil, err
		}
		shared, err := compiledModule(ctx, module)
		if err != nil {
			return nil, err
		}
		runner, err := shared.NewRunner(ctx)
		if err != nil {
			return nil, err
		}
		// The rules compiled natively before, so the module compiles
		// only the version asked for.
		fsys, err := rulesFS(c.rulesDir)
		if err == nil {
			err = runner.LoadLazy(ctx, fsys)
		}
		if err != nil {
			runner.Close(ctx)
			return nil, err
		}
		c.runner = runner
	}
	return c.runner.RuleSet(ctx, ref)
}

func (c *compilerExplain) close(ctx context.Context) {
	if c.runner != nil {
		c.runner.Close(ctx)
	}
}

// validEngine reports a bad --engine as a usage error.
func validEngine(kind string, stderr io.Writer) bool {
	if kind == "native" || kind == "wasm" {
		return true
	}
	fmt.Fprintf(stderr, "error: unknown engine %q\nhint: --engine is native or wasm\n", kind)
	return false
}

// callTimeout bounds one decision of the module (RunnerConfig.CallTimeout).
// The tests raise it to their binary's own timeout (main_test.go), so that
// a busy machine fails no case for being slow; wasmhost's tests check the
// bound itself.
var callTimeout = wasmhost.DefaultCallTimeout

// compiled is the module as this process compiled it, by the digest of its
// bytes: every --engine wasm command a process runs (the tests run
// hundreds in one) shares its compiled code, where each would otherwise
// decode and validate the module's 24 MB again (wazero's cache on disk
// keeps the machine code, not that check).
var compiled struct {
	sync.Mutex
	digest [sha256.Size]byte
	module *wasmhost.Module
}

// compiledModule compiles module once per process, or again when the
// bytes differ from the last ones compiled ($DLROUTE_WASM names another
// file). Its runners copy with the copier in force at each call, so a test
// that replaces copier is obeyed by the shared module too.
func compiledModule(ctx context.Context, module []byte) (*wasmhost.Module, error) {
	digest := sha256.Sum256(module)
	compiled.Lock()
	defer compiled.Unlock()
	if compiled.module != nil && compiled.digest == digest {
		return compiled.module, nil
	}
	m, err := wasmhost.Compile(context.WithoutCancel(ctx), wasmhost.RunnerConfig{Module: module, Host: wasmhost.Host{Copier: currentCopier{}}, CallTimeout: callTimeout})
	if err != nil {
		return nil, err
	}
	if compiled.module != nil {
		compiled.module.Close(ctx) // closes once its last runner does
	}
	compiled.digest, compiled.module = digest, m
	return m, nil
}

// decisions is the decision module as this process compiled it, as
// compiled is the compiler module's: the tests run hundreds of --engine
// wasm commands in one process.
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

// currentCopier copies with copier as it is at the call.
type currentCopier struct{}

func (currentCopier) CopyToHost(ctx context.Context, src machine.Buffer) (machine.Buffer, error) {
	return copier.CopyToHost(ctx, src)
}
