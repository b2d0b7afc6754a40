package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/rules"
)

// RunnerConfig configures NewRunner. Only Module is required.
type RunnerConfig struct {
	// Module is the dlroute WebAssembly module, built from the source in
	// package github.com/dlroute/dlroute (ModuleSource) as the dlroute
	// command builds it.
	Module []byte
	// CacheDir holds wazero's compiled code, so that a later process
	// compiles in milliseconds; empty means os.UserCacheDir()/dlroute/wazero.
	CacheDir string
	// Host is what the host functions do. Its Copier makes the copies of
	// RuleSet.Exchange.
	Host Host
	// Instances bounds how many module instances run at once, one per
	// concurrent call (an instance is not safe for concurrent use); 0
	// means GOMAXPROCS.
	Instances int
	// MemoryLimitPages bounds each instance's memory in 64 KiB pages; 0
	// means DefaultMemoryLimitPages, and more than MaxMemoryLimitPages is
	// refused.
	MemoryLimitPages uint32
	// CallTimeout bounds one decision in the module (a resolve, an
	// explanation, an exchange): the guest's own work and the host
	// functions it calls (a probe, a copy); 0 means DefaultCallTimeout.
	// The caller's context bounds every call, a load's too, when its
	// deadline comes first. A call still running at its deadline is
	// stopped where it is (wazero's WithCloseOnContextDone) and answers
	// engine.CodeCanceled; its instance is closed and a fresh one started
	// in its place.
	CallTimeout time.Duration
	// MemoSize bounds the decisions each RuleSet remembers on the host
	// side, in front of the module; 0 means engine.DefaultMemoSize,
	// negative turns the memo off.
	MemoSize int

	// uninterruptible turns wazero's WithCloseOnContextDone off, for
	// BenchmarkTurnedDown to measure what it costs: the guest then runs
	// each call to its end, whatever the deadline.
	uninterruptible bool
}

// Defaults of RunnerConfig.
const (
	// DefaultMemoryLimitPages is 512 MiB, so that any rules engine.Load
	// accepts load in an instance, twice over: rules just under
	// engine.MaxLoadNodes need at most 240 MiB in the costliest shape
	// measured, six-deep nests (BenchmarkLoadAtBudget in e2e/wasmhost;
	// BENCHMARKS.md, "The budgets' sizes"). An instance takes memory as
	// it grows, so the limit reserves none.
	DefaultMemoryLimitPages = 8192
	DefaultCallTimeout      = 10 * time.Second
)

// MaxMemoryLimitPages is the largest RunnerConfig.MemoryLimitPages: the
// 4 GiB, in 64 KiB pages, that a wasm32 module can address.
const MaxMemoryLimitPages = 65536

// CodeModule is the code of an *engine.Error about the module itself: not
// ours, of another ABI version, trapped twice on one request, or given a
// RunnerConfig it cannot run under.
const CodeModule engine.Code = "module_error"

// Runner runs the dlroute module with wazero: it keeps a pool of
// instances of a compiled Module, hands them the rules, and replaces an
// instance that traps or is stopped at a call's deadline. It is safe for
// concurrent use.
type Runner struct {
	cfg   RunnerConfig
	m     *Module
	owns  bool           // NewRunner compiled m for this runner alone
	done  atomic.Bool    // closed
	slots chan struct{}  // one per instance that may exist
	idle  chan *instance // instances waiting for a call

	mu      sync.Mutex
	archive []byte // the rules every instance loads
	gen     int    // bumped by each Load
	sets    map[string]*RuleSet
}

// NewRunner compiles the module (Compile) and starts a runner of it
// (Module.NewRunner); closing the runner closes the module. The rules are
// given by Load.
func NewRunner(ctx context.Context, cfg RunnerConfig) (*Runner, error) {
	m, err := Compile(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r, err := m.NewRunner(ctx)
	if err != nil {
		m.Close(ctx)
		return nil, err
	}
	r.owns = true
	return r, nil
}

func cacheDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "dlroute", "wazero"), nil
}

// Close closes the runner's instances, and its module when NewRunner
// made it or Module.Close was called and this was its last runner. Close
// a runner once no call runs on it.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock() // a replacement (replace) finishing now sees done, or is drained below
	closed := r.done.Swap(true)
	r.mu.Unlock()
	if closed {
		return nil
	}
	for {
		select {
		case inst := <-r.idle:
			inst.close()
		default:
			return r.m.release(ctx, true, r.owns)
		}
	}
}

// Prewarm starts every instance the pool may hold, loads the rules into
// each and compiles there every rule set RuleSet has handed out since
// the last load, so that the first concurrent calls do not wait for it.
func (r *Runner) Prewarm(ctx context.Context) error {
	r.mu.Lock()
	refs := slices.Collect(maps.Keys(r.sets))
	r.mu.Unlock()
	var held []*instance
	defer func() {
		for _, inst := range held {
			r.idle <- inst
		}
	}()
	for range r.cfg.Instances {
		inst, err := r.acquire(ctx)
		if err != nil {
			return err
		}
		held = append(held, inst)
		if err := r.warm(ctx, inst, refs); err != nil {
			return err
		}
	}
	return nil
}

// warm loads the current rules into inst and compiles there the rule
// sets refs name.
func (r *Runner) warm(ctx context.Context, inst *instance, refs []string) error {
	if err := r.refresh(ctx, inst); err != nil {
		return err
	}
	for _, ref := range refs {
		if _, err := inst.handle(ctx, ref); err != nil {
			return err
		}
	}
	return nil
}

// Load hands a rules directory to the module. It is checked in one
// instance first, which compiles every version: on any error the rules in
// service stay, and the error is the module's engine.ErrorList. Instances
// load the new rules before their next call, each compiling a version
// when it is first asked for (dlroute_load_lazy): the bytes compiled in
// the first. The directory's parsed.bin goes with it only for the
// embedded rules (rules.Embedded): any other directory's expressions are
// parsed from their text.
func (r *Runner) Load(ctx context.Context, fsys fs.FS) error {
	return r.load(ctx, fsys, "dlroute_load")
}

// LoadLazy hands the module rules the caller has checked: the embedded
// rules, or rules it loaded with engine.Load. No instance compiles a
// version before RuleSet asks for it, so a host that decides with one
// rule set compiles that one (and what it imports) and no other. A
// version that does not compile is RuleSet's error.
func (r *Runner) LoadLazy(ctx context.Context, fsys fs.FS) error {
	return r.load(ctx, fsys, "dlroute_load_lazy")
}

func (r *Runner) load(ctx context.Context, fsys fs.FS, export string) error {
	// The module takes an archive's parsed.bin as this host's word, so
	// only the embedded rules' goes with them; any other directory's
	// expressions are parsed from their text (engine.Options.TrustParsed).
	pack := contract.PackText
	if rules.Embedded(fsys) {
		pack = contract.PackFS
	}
	archive, err := pack(fsys)
	if err != nil {
		return err
	}
	return r.with(ctx, func(inst *instance) error {
		out, status, err := inst.call(ctx, export, archive)
		if err != nil {
			return err
		}
		if status != contract.StatusOK {
			var list engine.ErrorList
			if json.Unmarshal(out, &list) != nil || len(list) == 0 {
				return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("%s returned %s: %s", export, status, out)}
			}
			return list
		}
		r.mu.Lock()
		r.archive, r.sets = archive, map[string]*RuleSet{}
		r.gen++
		inst.gen, inst.handles = r.gen, map[string]uint32{}
		r.mu.Unlock()
		return nil
	})
}

// with runs f on an idle instance, creating one when the pool has room,
// and gives it back after. An instance whose call failed in wazero (a
// trap) is closed and f runs once more on a fresh one, so the
// caller's request is not lost to one bad instance. An instance stopped
// at a call's deadline is closed and replaced, and the caller gets
// engine.CodeCanceled: running f again would only meet the same deadline.
func (r *Runner) with(ctx context.Context, f func(*instance) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var inst *instance
		if inst, err = r.acquire(ctx); err != nil {
			return err
		}
		if err = r.refresh(ctx, inst); err == nil {
			err = f(inst)
		}
		var trap *trapError
		if !errors.As(err, &trap) {
			r.idle <- inst
			return err
		}
		inst.close()
		<-r.slots
		if stopped := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled); stopped {
			r.replace()
			return r.stopped(ctx)
		}
	}
	if oom := (*engine.Error)(nil); errors.As(err, &oom) && oom.Code == CodeOutOfMemory {
		return oom
	}
	return &engine.Error{Code: CodeModule, Message: "the module failed twice on this request: " + err.Error()}
}

// stopped is the error of a call that wazero stopped at its deadline:
// the caller's, or CallTimeout's.
func (r *Runner) stopped(ctx context.Context) error {
	if ctx.Err() != nil {
		return &engine.Error{Code: engine.CodeCanceled, Message: "the module was stopped mid-call: " + context.Cause(ctx).Error()}
	}
	return &engine.Error{Code: engine.CodeCanceled, Message: fmt.Sprintf("the module was stopped mid-call: the call ran past RunnerConfig.CallTimeout (%v)", r.cfg.CallTimeout),
		Hint: "a rule set whose decisions take this long is one to fix; a longer CallTimeout only waits longer"}
}

// replaceTimeout bounds starting an instance in the place of a stopped
// one: loading the rules and compiling the rule sets in use, which takes
// a guest seconds on a busy machine.
const replaceTimeout = time.Minute

// replace starts an instance in the place of one that was closed
// mid-call, off the caller's path, with the current rules and every rule
// set handed out compiled, so that the next call finds it ready. It gives
// up quietly (the pool then starts one when a call needs it) when the
// pool has no room, or the runner closes.
func (r *Runner) replace() {
	select {
	case r.slots <- struct{}{}:
	default:
		return // a call is starting one already
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), replaceTimeout)
		defer cancel()
		inst, err := r.newInstance(ctx)
		if err == nil {
			r.mu.Lock()
			refs := slices.Collect(maps.Keys(r.sets))
			r.mu.Unlock()
			if err = r.warm(ctx, inst, refs); err != nil {
				inst.close()
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil || r.done.Load() {
			if err == nil {
				inst.close()
			}
			<-r.slots
			return
		}
		r.idle <- inst
	}()
}

func (r *Runner) acquire(ctx context.Context) (*instance, error) {
	select {
	case inst := <-r.idle:
		return inst, nil
	default:
	}
	select {
	case inst := <-r.idle:
		return inst, nil
	case r.slots <- struct{}{}:
		inst, err := r.newInstance(ctx)
		if err != nil {
			<-r.slots
			return nil, err
		}
		return inst, nil
	case <-ctx.Done():
		return nil, &engine.Error{Code: engine.CodeCanceled, Message: context.Cause(ctx).Error()}
	}
}

// refresh loads the current rules into an instance that has older ones.
func (r *Runner) refresh(ctx context.Context, inst *instance) error {
	r.mu.Lock()
	archive, gen := r.archive, r.gen
	r.mu.Unlock()
	if inst.gen == gen || archive == nil {
		return nil
	}
	_, status, err := inst.call(ctx, "dlroute_load_lazy", archive)
	if err != nil {
		return err
	}
	if status != contract.StatusOK {
		return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("rules that loaded in one instance failed in another: %s", status)}
	}
	inst.gen, inst.handles = gen, map[string]uint32{}
	return nil
}

// trapError is a call that failed inside wazero: the instance is unusable.
type trapError struct{ err error }

func (e *trapError) Error() string { return "the module trapped: " + e.err.Error() }
func (e *trapError) Unwrap() error { return e.err }

// instance is one module instance with its buffers in guest memory.
type instance struct {
	r       *Runner
	mod     api.Module
	fns     map[string]api.Function
	gen     int
	handles map[string]uint32
	stderr  *guestStderr
	in, out uint32 // guest buffers
	inCap   uint32
	outCap  uint32
	stack   []uint64
}

var exports = []string{"dlroute_abi_version", "dlroute_alloc", "dlroute_free", "dlroute_load", "dlroute_load_lazy", "dlroute_ruleset", "dlroute_describe", "dlroute_resolve", "dlroute_resolve_json", "dlroute_explain_json", "dlroute_exchange", "dlroute_copy_to_host"}

func (r *Runner) newInstance(ctx context.Context) (*instance, error) {
	stderr := &guestStderr{}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithSysWalltime().WithSysNanotime().WithStderr(stderr).
		WithEnv("GOMEMLIMIT", strconv.FormatUint(guestMemoryTarget(r.cfg.MemoryLimitPages), 10))
	mod, err := r.m.rt.InstantiateModule(ctx, r.m.compiled, cfg)
	if err != nil {
		return nil, &engine.Error{Code: CodeModule, Message: "instantiating the module: " + err.Error()}
	}
	inst := &instance{r: r, mod: mod, stderr: stderr, fns: map[string]api.Function{}, handles: map[string]uint32{}, stack: make([]uint64, 6)}
	for _, name := range exports {
		if inst.fns[name] = mod.ExportedFunction(name); inst.fns[name] == nil {
			inst.close()
			return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the module does not export %s: it is not a dlroute module", name)}
		}
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			inst.close()
			return nil, &engine.Error{Code: CodeModule, Message: "_initialize: " + err.Error()}
		}
	}
	v, err := inst.fns["dlroute_abi_version"].Call(ctx)
	if err != nil || uint32(v[0]) != contract.Version {
		inst.close()
		got := "?"
		if err == nil {
			got = fmt.Sprint(uint32(v[0]))
		}
		return nil, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the module has ABI version %s; this host speaks version %d", got, contract.Version),
			Hint: "rebuild the module from this source, or use a host of its version"}
	}
	if err := inst.grow(ctx, 4096, 4096); err != nil {
		inst.close()
		return nil, err
	}
	return inst, nil
}

// grow makes the guest buffers at least this large.
func (inst *instance) grow(ctx context.Context, in, out uint32) error {
	alloc := func(old, size uint32) (uint32, error) {
		if old != 0 {
			inst.fns["dlroute_free"].Call(ctx, uint64(old))
		}
		res, err := inst.fns["dlroute_alloc"].Call(ctx, uint64(size))
		if err != nil {
			return 0, inst.trapped(err)
		}
		if res[0] == 0 {
			return 0, &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the module could not allocate %d bytes", size)}
		}
		return uint32(res[0]), nil
	}
	var err error
	if in > inst.inCap {
		if inst.in, err = alloc(inst.in, in); err != nil {
			return err
		}
		inst.inCap = in
	}
	if out > inst.outCap {
		if inst.out, err = alloc(inst.out, out); err != nil {
			return err
		}
		inst.outCap = out
	}
	return nil
}

// close closes the module.
func (inst *instance) close() { inst.mod.Close(context.Background()) }

// bounded gives a call into the module its deadline: ctx's, when it
// comes before CallTimeout's, else CallTimeout's. wazero stops the guest
// there, and the host functions give up there. ctx is kept as it is when
// its own deadline comes first, as a request's does: a timer per call
// costs more than a decision the guest remembers (wasmhost/RATIONALE.md, "Why
// WithCloseOnContextDone, and what does it cost?").
func (r *Runner) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := time.Now().Add(r.cfg.CallTimeout)
	if d, ok := ctx.Deadline(); ok && !d.After(limit) {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, limit)
}

// decides lists the exports that CallTimeout bounds; a load, and the
// compile of a version, are bounded by the caller alone.
var decides = map[string]bool{"dlroute_resolve": true, "dlroute_resolve_json": true, "dlroute_explain_json": true, "dlroute_exchange": true}

// takesInput lists the exports with an input buffer before their output
// buffer.
var takesInput = map[string]bool{"dlroute_load": true, "dlroute_load_lazy": true, "dlroute_resolve": true, "dlroute_resolve_json": true, "dlroute_explain_json": true, "dlroute_exchange": true}

// call runs an export that takes (args..., input, output buffer), or
// (args..., output buffer) when it has no input, and returns a packed status
// and length, growing the output buffer when it is too small. The
// returned bytes are valid until the next call.
func (inst *instance) call(ctx context.Context, name string, input []byte, args ...uint64) ([]byte, contract.Status, error) {
	if err := inst.grow(ctx, uint32(len(input)), 0); err != nil {
		return nil, 0, err
	}
	if !inst.mod.Memory().Write(inst.in, input) {
		return nil, 0, &trapError{fmt.Errorf("input buffer at %d is outside memory", inst.in)}
	}
	if decides[name] {
		var cancel context.CancelFunc
		ctx, cancel = inst.r.bounded(ctx)
		defer cancel()
	}
	for range 3 {
		stack := append(inst.stack[:0], args...)
		if takesInput[name] {
			stack = append(stack, uint64(inst.in), uint64(len(input)))
		}
		stack = append(stack, uint64(inst.out), uint64(inst.outCap))
		if err := inst.fns[name].CallWithStack(ctx, stack); err != nil {
			return nil, 0, inst.trapped(err)
		}
		status, n := contract.Unpack(stack[0])
		if status == contract.StatusTooSmall {
			if n <= inst.outCap {
				break // the module asked for what it has: it is confused
			}
			if err := inst.grow(ctx, 0, n); err != nil {
				return nil, 0, err
			}
			continue
		}
		out, ok := inst.mod.Memory().Read(inst.out, n)
		if !ok {
			return nil, 0, &trapError{fmt.Errorf("output of %d bytes at %d is outside memory", n, inst.out)}
		}
		return out, status, nil
	}
	return nil, 0, &trapError{fmt.Errorf("%s kept answering too_small", name)}
}
