package main

import (
	"context"
	"flag"
	"fmt"
	"io"

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
		runner, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Host: wasmhost.Host{Copier: copier}})
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
