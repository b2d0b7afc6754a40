package wasmhost

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dlroute/dlroute/engine"
)

// Module is the dlroute module compiled by wazero once, with the host
// functions of RunnerConfig.Host: every Runner it starts has instances
// and rules of its own and shares the compiled code. A host that needs a
// runner per version of the rules (serve --engine wasm starts one per
// activation, so a swap never reloads a runner under requests in flight)
// compiles once and starts a runner in the time of one instance, where
// NewRunner compiles again (from wazero's cache on disk, about 0.4 s). It
// is safe for concurrent use.
type Module struct {
	cfg      RunnerConfig
	rt       wazero.Runtime
	compiled wazero.CompiledModule

	mu      sync.Mutex
	runners int  // started and not closed
	closing bool // Close was called: the last runner closes the runtime
}

// Compile compiles cfg.Module (with the compilation cache in
// cfg.CacheDir) and instantiates the host functions of cfg.Host. cfg's
// other fields apply to every runner the Module starts. A module that is
// not WebAssembly, and a MemoryLimitPages over MaxMemoryLimitPages, are
// refused with CodeModule.
func Compile(ctx context.Context, cfg RunnerConfig) (*Module, error) {
	if len(cfg.Module) < 8 || string(cfg.Module[:4]) != "\x00asm" {
		return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the module is not WebAssembly (%d bytes)", len(cfg.Module))}
	}
	cfg.Instances = cmp.Or(cfg.Instances, runtime.GOMAXPROCS(0))
	cfg.MemoryLimitPages = cmp.Or(cfg.MemoryLimitPages, DefaultMemoryLimitPages)
	if cfg.MemoryLimitPages > MaxMemoryLimitPages {
		// wazero panics on a limit past what wasm32 can address.
		return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("MemoryLimitPages is %d; a wasm32 module addresses at most %d pages (4 GiB)", cfg.MemoryLimitPages, MaxMemoryLimitPages),
			Hint: fmt.Sprintf("set RunnerConfig.MemoryLimitPages to at most %d, or 0 for the default %d (%d MiB)", MaxMemoryLimitPages, DefaultMemoryLimitPages, DefaultMemoryLimitPages/16)}
	}
	cfg.CallTimeout = cmp.Or(cfg.CallTimeout, DefaultCallTimeout)
	if cfg.MemoSize == 0 {
		cfg.MemoSize = engine.DefaultMemoSize
	}
	if cfg.Host.buffers == nil {
		cfg.Host.buffers = &bufferTable{}
	}
	rc := wazero.NewRuntimeConfig().WithMemoryLimitPages(cfg.MemoryLimitPages).WithCloseOnContextDone(!cfg.uninterruptible)
	if dir, err := cacheDir(cfg.CacheDir); err == nil {
		if cache, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	if _, err := instantiate(ctx, rt, cfg.Host); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, cfg.Module)
	if err != nil {
		rt.Close(ctx)
		return nil, &engine.Error{Code: CodeModule, Message: "the module does not compile: " + err.Error()}
	}
	return &Module{cfg: cfg, rt: rt, compiled: compiled}, nil
}

// NewRunner starts a runner with one instance, which proves the module is
// ours and of our ABI version. The rules are given by Runner.Load.
func (m *Module) NewRunner(ctx context.Context) (*Runner, error) {
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil, &engine.Error{Code: CodeModule, Message: "the module is closed"}
	}
	m.runners++
	m.mu.Unlock()
	r := &Runner{cfg: m.cfg, m: m, slots: make(chan struct{}, m.cfg.Instances), idle: make(chan *instance, m.cfg.Instances), sets: map[string]*RuleSet{}}
	inst, err := r.newInstance(ctx)
	if err != nil {
		m.release(ctx, true, false)
		return nil, err
	}
	r.slots <- struct{}{}
	r.idle <- inst
	return r, nil
}

// Close closes the module: now, when no runner of it is open, else when
// the last one closes. NewRunner fails after it.
func (m *Module) Close(ctx context.Context) error {
	return m.release(ctx, false, true)
}

// release counts a runner closed (done) or the module closed (close), and
// closes the runtime when that leaves the module closing with no runner
// open.
func (m *Module) release(ctx context.Context, done, close bool) error {
	m.mu.Lock()
	if done {
		m.runners--
	}
	wasClosing := m.closing
	m.closing = m.closing || close
	last := m.closing && m.runners == 0 && (done || !wasClosing)
	m.mu.Unlock()
	if last {
		return m.rt.Close(ctx)
	}
	return nil
}
