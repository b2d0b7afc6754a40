package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/dlroute/dlroute/engine"
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
		module, _, err := wasmbuild.Module(ctx, wasmbuild.Options{Progress: stderr})
		if err != nil {
			return nil, nil, nil, err
		}
		shared, err := compiledModule(ctx, module)
		if err != nil {
			return nil, nil, nil, err
		}
		runner, err := shared.NewRunner(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		closeRunner := func() { runner.Close(ctx) }
		// The rules compiled natively above, so the module compiles only
		// the versions asked for.
		fsys, err := rulesFS(rulesDir)
		if err == nil {
			err = runner.LoadLazy(ctx, fsys)
		}
		// The module is asked for the version the ref resolved to here,
		// so that it answers a release ref as the native engine does.
		for _, v := range versions {
			if err != nil {
				break
			}
			var rs *wasmhost.RuleSet
			if rs, err = runner.RuleSet(ctx, v.Ref()); err == nil {
				out = append(out, rs)
			}
		}
		if err != nil {
			closeRunner()
			return nil, nil, nil, err
		}
		return cat, out, closeRunner, nil
	}
	panic("unreachable: validEngine checked --engine")
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

// currentCopier copies with copier as it is at the call.
type currentCopier struct{}

func (currentCopier) CopyToHost(ctx context.Context, src machine.Buffer) (machine.Buffer, error) {
	return copier.CopyToHost(ctx, src)
}
