package wasmhost

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/machine"
)

// DecisionABIVersion is the ABI version of the decision module
// (wasm/decision/ABI.md). The compiler module's is contract.Version, 1;
// version 2 of the decision module imported nothing, and version 3
// imports the compiler module's host functions.
const DecisionABIVersion = 3

// DecisionConfig configures CompileDecision.
type DecisionConfig struct {
	// Module is the decision module: wasm/decision.Module, the
	// checked-in build of wasm/decision/src.
	Module []byte
	// Cache, when set, holds wazero's compiled code between runtimes (a
	// wazero.NewCompilationCacheWithDir keeps it between processes): a
	// second CompileDecision of the same module takes milliseconds.
	Cache wazero.CompilationCache
	// MemoryLimitPages bounds each instance's memory in 64 KiB pages; 0
	// means DefaultMemoryLimitPages.
	MemoryLimitPages uint32
	// Host is what the host functions do, as for the compiler module
	// (RunnerConfig.Host): its PlatformVersion answers a line that leaves
	// platform_version out, and its Copier makes the copies of
	// Decider.Exchange. The zero Host reads no machine (such a line is
	// checked as it is: missing_field) and copies nothing (no_copier).
	Host Host
}

// DecisionModule is the decision module compiled by wazero once: every
// Decider it starts is an instance of its own sharing the compiled code.
// It is safe for concurrent use.
//
// Unlike Module, it runs calls without wazero's WithCloseOnContextDone:
// every decision of a plan counts its steps against the plan's
// StepLimit and stops there with cost_limit, so no call runs unbounded,
// and a call costs what its work costs (wasm/decision/RATIONALE.md, "Why no deadline
// inside the decision module?"). A context is checked before each call.
type DecisionModule struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	buffers  *bufferTable // the Host's: the buffers of Decider.Exchange
}

// CompileDecision compiles cfg.Module, with cfg.Cache when set. A module
// that is not WebAssembly, or does not compile, is refused with
// CodeModule.
func CompileDecision(ctx context.Context, cfg DecisionConfig) (*DecisionModule, error) {
	if len(cfg.Module) < 8 || string(cfg.Module[:4]) != "\x00asm" {
		return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the decision module is not WebAssembly (%d bytes)", len(cfg.Module))}
	}
	rc := wazero.NewRuntimeConfig().WithMemoryLimitPages(cmp.Or(cfg.MemoryLimitPages, DefaultMemoryLimitPages))
	if cfg.Cache != nil {
		rc = rc.WithCompilationCache(cfg.Cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	if cfg.Host.buffers == nil {
		cfg.Host.buffers = &bufferTable{}
	}
	if _, err := instantiate(ctx, rt, cfg.Host); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, cfg.Module)
	if err != nil {
		rt.Close(ctx)
		return nil, &engine.Error{Code: CodeModule, Message: "the decision module does not compile: " + err.Error()}
	}
	return &DecisionModule{rt: rt, compiled: compiled, buffers: cfg.Host.buffers}, nil
}

// Close closes the module and every Decider it started.
func (m *DecisionModule) Close(ctx context.Context) error { return m.rt.Close(ctx) }

// Decider is one instance of the decision module with one plan loaded.
// Its calls take turns: it is safe for concurrent use, one call at a
// time; start a Decider per goroutine for parallel decisions.
type Decider struct {
	mu      sync.Mutex
	mod     api.Module
	decide  api.Function
	explain api.Function // nil in a module built before dlroute_explain
	xchg    api.Function // dlroute_exchange
	buffers *bufferTable
	alloc   api.Function
	free    api.Function
	handle  uint32
	in      buffer
	out     buffer
}

// buffer is a buffer of the guest's, from dlroute_alloc.
type buffer struct {
	ptr, cap uint32
}

// NewDecider starts an instance, checks that it speaks
// DecisionABIVersion, and loads a plan: planBytes is one plan
// (engine.RuleSet.Plan) or, with ref set, a set of plans (rules.Plans,
// engine.WritePlans) and the version to take from it, such as "jax@v3".
// A plan the module refuses is its *engine.Error (bad_plan, or
// no_ruleset for a ref the set lacks); a module of another ABI is
// CodeModule.
func (m *DecisionModule) NewDecider(ctx context.Context, planBytes []byte, ref string) (*Decider, error) {
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	if err != nil {
		return nil, &engine.Error{Code: CodeModule, Message: "the decision module does not start: " + err.Error()}
	}
	d := &Decider{mod: mod, decide: mod.ExportedFunction("dlroute_decide"), explain: mod.ExportedFunction("dlroute_explain"),
		xchg: mod.ExportedFunction("dlroute_exchange"), buffers: m.buffers,
		alloc: mod.ExportedFunction("dlroute_alloc"), free: mod.ExportedFunction("dlroute_free")}
	version := mod.ExportedFunction("dlroute_abi_version")
	if version == nil || d.decide == nil || d.alloc == nil || d.free == nil {
		mod.Close(ctx)
		return nil, &engine.Error{Code: CodeModule, Message: "the module is not the dlroute decision module: it lacks its exports",
			Hint: "the compiler module (wasm/) runs with NewRunner; CompileDecision takes wasm/decision"}
	}
	if res, err := version.Call(ctx); err != nil || uint32(res[0]) != DecisionABIVersion {
		mod.Close(ctx)
		return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the decision module speaks ABI version %v; this host speaks %d", abiOf(res), DecisionABIVersion),
			Hint: "build the decision module from the same dlroute source as this host"}
	}
	if err := d.load(ctx, planBytes, ref); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return d, nil
}

func abiOf(res []uint64) any {
	if len(res) == 0 {
		return "none"
	}
	return uint32(res[0])
}

// load hands the plan over and keeps its handle.
func (d *Decider) load(ctx context.Context, planBytes []byte, ref string) error {
	var args []uint64
	name := "dlroute_load_plan"
	if ref != "" {
		name = "dlroute_load_set"
		refPtr, err := d.put(ctx, &buffer{}, []byte(ref))
		if err != nil {
			return err
		}
		defer d.free.Call(ctx, uint64(refPtr))
		args = []uint64{uint64(refPtr), uint64(len(ref))}
	}
	planPtr, err := d.put(ctx, &buffer{}, planBytes)
	if err != nil {
		return err
	}
	defer d.free.Call(ctx, uint64(planPtr))
	out, status, n, err := d.call(ctx, d.mod.ExportedFunction(name), append([]uint64{uint64(planPtr), uint64(len(planBytes))}, args...), true)
	if err != nil {
		return err
	}
	switch status {
	case contract.StatusOK:
		d.handle = n
		return nil
	case contract.StatusLoadError:
		var list []*engine.Error
		if err := json.Unmarshal(out, &list); err != nil || len(list) != 1 {
			return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("%s answered load_error with %q", name, out)}
		}
		return list[0]
	case contract.StatusNoRuleSet:
		e := &engine.Error{}
		if err := json.Unmarshal(out, e); err != nil || e.Code == "" {
			return moduleAnswer(name, status, out)
		}
		return e
	}
	return moduleAnswer(name, status, out)
}

// DecideJSON decides one JSON input object (a line of `dlroute resolve
// --json` without its newline) and returns the decision's JSON, byte for
// byte what engine.RuleSet.ResolveJSON returns for it. An input the plan
// refuses is an *engine.Error whose Code.Input() is true; an evaluation
// that could not decide is any other *engine.Error, as natively. A line
// that leaves platform_version out asks DecisionConfig.Host for it, as
// the compiler module does: a Host that fails is an *engine.Error with
// CodeMissingField naming the device. A module that answers outside its
// ABI is CodeModule.
func (d *Decider) DecideJSON(ctx context.Context, line []byte) ([]byte, error) {
	return d.answerJSON(ctx, d.decide, "dlroute_decide", line)
}

// ExplainJSON explains one JSON input object as DecideJSON decides it
// and returns the explanation's JSON, byte for byte what
// engine.RuleSet.ExplainJSON returns for it: the decision, the rules
// tried and every value. Its errors are DecideJSON's; a module without
// dlroute_explain is CodeModule.
func (d *Decider) ExplainJSON(ctx context.Context, line []byte) ([]byte, error) {
	if d.explain == nil {
		return nil, &engine.Error{Code: CodeModule, Message: "the decision module has no dlroute_explain",
			Hint: "build the decision module from the same dlroute source as this host"}
	}
	return d.answerJSON(ctx, d.explain, "dlroute_explain", line)
}

// answerJSON is DecideJSON and ExplainJSON: export fn's answer to line,
// or its error object as an *engine.Error.
func (d *Decider) answerJSON(ctx context.Context, fn api.Function, name string, line []byte, args ...uint64) ([]byte, error) {
	out, status, err := d.answer(ctx, fn, line, args...)
	if err != nil {
		return nil, err
	}
	switch status {
	case contract.StatusOK:
		return out, nil
	case contract.StatusInputError, contract.StatusEvalError, contract.StatusHostError:
		e := &engine.Error{}
		if err := json.Unmarshal(out, e); err != nil || e.Code == "" {
			return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("%s answered %s with %q", name, status, out)}
		}
		return nil, e
	}
	return nil, moduleAnswer(name, status, out)
}

// Decide is DecideJSON's answer as the module gives it: the decision's
// JSON with status ok, or an error object (the JSON of an engine.Error)
// with input_error, eval_error or host_error (the Host failed to read a
// platform_version). err is a canceled context or a module that broke
// its ABI.
func (d *Decider) Decide(ctx context.Context, line []byte) ([]byte, contract.Status, error) {
	return d.answer(ctx, d.decide, line)
}

// answer calls export fn, dlroute_decide or dlroute_explain, on line;
// args come between the handle and the line.
func (d *Decider) answer(ctx context.Context, fn api.Function, line []byte, args ...uint64) ([]byte, contract.Status, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, 0, &engine.Error{Code: engine.CodeCanceled, Message: "the decision was canceled: " + err.Error()}
	}
	in, err := d.put(ctx, &d.in, line)
	if err != nil {
		return nil, 0, err
	}
	out, status, _, err := d.call(ctx, fn, append(append([]uint64{uint64(d.handle)}, args...), uint64(in), uint64(len(line))), false)
	return out, status, err
}

// Exchange decides one JSON input of an exchange rule set as DecideJSON
// does and carries the decision out for src in the module, as the
// compiler module's RuleSet.Exchange does, with its results and errors:
// the module exports src in place, or asks the host to copy it into host
// memory (copy_to_host, which runs DecisionConfig.Host.Copier). src is
// registered in the module's table of buffers for the call, and the table
// holds neither it nor its copy afterwards. Errors are an *engine.Error
// for an input or evaluation error (or a Host that failed to read a
// platform_version), and an *ExchangeError (CodeNoCopier, CodeCopyFailed)
// for a decision that could not be carried out.
func (d *Decider) Exchange(ctx context.Context, line []byte, src machine.Buffer) (ExchangeResult, error) {
	if d.xchg == nil {
		return ExchangeResult{}, &engine.Error{Code: CodeModule, Message: "the decision module has no dlroute_exchange",
			Hint: "build the decision module from the same dlroute source as this host"}
	}
	h := d.buffers.add(src)
	out, err := d.answerJSON(ctx, d.xchg, "dlroute_exchange", line, uint64(h))
	// Any copy made is dropped from the table here, with the source.
	copies, copyErr := d.buffers.release(h)
	if err != nil {
		return ExchangeResult{}, exchangeFailure(err, copyErr)
	}
	var answer struct {
		Decision engine.Decision `json:"decision"`
		Buffer   *uint32         `json:"buffer"`
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		return ExchangeResult{}, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("dlroute_exchange answered %q: %v", out, err)}
	}
	return exchangeResult(answer.Decision, answer.Buffer, h, src, copies)
}

// Close closes the instance.
func (d *Decider) Close(ctx context.Context) error { return d.mod.Close(ctx) }

// put copies data into b, growing it first when it is too small, and
// returns where it lies.
func (d *Decider) put(ctx context.Context, b *buffer, data []byte) (uint32, error) {
	if err := d.grow(ctx, b, uint32(len(data))); err != nil {
		return 0, err
	}
	if !d.mod.Memory().Write(b.ptr, data) {
		return 0, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("dlroute_alloc gave %d bytes at %d, outside the module's memory", b.cap, b.ptr)}
	}
	return b.ptr, nil
}

func (d *Decider) grow(ctx context.Context, b *buffer, size uint32) error {
	if b.ptr != 0 && b.cap >= size {
		return nil
	}
	if b.ptr != 0 {
		d.free.Call(ctx, uint64(b.ptr))
		*b = buffer{}
	}
	size = max(size, 256)
	res, err := d.alloc.Call(ctx, uint64(size))
	if err != nil {
		return &engine.Error{Code: CodeModule, Message: "dlroute_alloc: " + err.Error()}
	}
	if res[0] == 0 {
		return &engine.Error{Code: CodeOutOfMemory, Message: fmt.Sprintf("the decision module could not allocate %d bytes", size)}
	}
	*b = buffer{ptr: uint32(res[0]), cap: size}
	return nil
}

// call calls an export whose last two arguments are the output buffer,
// growing it on too_small (twice at most), and returns the output, the
// status and the result's low 32 bits: with handle set, an ok result
// carries a handle there and no output.
func (d *Decider) call(ctx context.Context, fn api.Function, args []uint64, handle bool) ([]byte, contract.Status, uint32, error) {
	// 4 KiB, the compiler module runner's first buffer: an explanation
	// fits, so a call that asked the host for a platform_version is rarely
	// made again (and the host asked again) after too_small.
	if err := d.grow(ctx, &d.out, 4096); err != nil {
		return nil, 0, 0, err
	}
	for range 3 {
		res, err := fn.Call(ctx, append(args, uint64(d.out.ptr), uint64(d.out.cap))...)
		if err != nil {
			return nil, 0, 0, &engine.Error{Code: CodeModule, Message: "the decision module trapped: " + err.Error()}
		}
		status, n := contract.Unpack(res[0])
		switch {
		case status == contract.StatusTooSmall:
			if n <= d.out.cap {
				return nil, 0, 0, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("too_small asking for %d bytes of a %d-byte buffer", n, d.out.cap)}
			}
			if err := d.grow(ctx, &d.out, n); err != nil {
				return nil, 0, 0, err
			}
			continue
		case status == contract.StatusOK && handle, status == contract.StatusBadHandle:
			return nil, status, n, nil
		}
		out, ok := d.mod.Memory().Read(d.out.ptr, n)
		if !ok || n > d.out.cap {
			return nil, 0, 0, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("an output of %d bytes outside the buffer", n)}
		}
		return append([]byte(nil), out...), status, n, nil
	}
	return nil, 0, 0, &engine.Error{Code: CodeModule, Message: "too_small three times in one call"}
}

func moduleAnswer(export string, status contract.Status, out []byte) error {
	return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("%s answered %s with %q", export, status, out)}
}
