package wasmhost

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/dlroute/dlroute/rules"
)

// guestProfDir, when set, makes TestGuestProfile write CPU profiles of
// the guest inside wazero there, one pprof file per path:
//
//	go test ./wasmhost -run TestGuestProfile -guestprof /tmp/prof
//	go tool pprof -top /tmp/prof/miss.pprof
//
// github.com/dispatchrun/wzprof (now stealthrocket/wzprof) would do this,
// but it is archived, was last built against wazero 1.5, and is not in the
// module proxy; this is the part of it the issue needs, on wazero's own
// listener API.
var guestProfDir = flag.String("guestprof", "", "write pprof CPU profiles of the guest's miss and memo paths into this directory")

// guestProfiler samples the guest's call stack: a ticker sets a flag
// every period, and the next function entry or exit records the shadow
// stack that the listeners keep. Every function call goes through a
// listener, so the profile's absolute times are inflated, most for code
// that makes many small calls; read it for where the time goes, and the
// benchmarks for how much there is.
type guestProfiler struct {
	period  time.Duration
	tick    atomic.Bool
	names   map[uint32]string
	stack   []uint32 // function indices, outermost first
	samples map[string]int64
	calls   map[uint32]int64 // entries of each function
	on      bool             // counting: the measured loop is running
}

func newGuestProfiler(period time.Duration) *guestProfiler {
	return &guestProfiler{period: period, names: map[uint32]string{}, samples: map[string]int64{}, calls: map[uint32]int64{}}
}

func (p *guestProfiler) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	p.names[def.Index()] = def.Name()
	return p
}

func (p *guestProfiler) sample() {
	if !p.on || !p.tick.Load() {
		return
	}
	p.tick.Store(false)
	key := make([]byte, 0, 4*len(p.stack))
	for _, f := range p.stack {
		key = binary.LittleEndian.AppendUint32(key, f)
	}
	p.samples[string(key)]++
}

func (p *guestProfiler) Before(_ context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	p.sample()
	p.stack = append(p.stack, def.Index())
	if p.on {
		p.calls[def.Index()]++
	}
}

func (p *guestProfiler) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {
	p.sample()
	p.stack = p.stack[:len(p.stack)-1]
}

func (p *guestProfiler) Abort(context.Context, api.Module, api.FunctionDefinition, error) {
	p.stack = p.stack[:len(p.stack)-1]
}

// run profiles n calls of f, ticking every period.
func (p *guestProfiler) run(n int, f func(i int)) time.Duration {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(p.period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.tick.Store(true)
			case <-done:
				return
			}
		}
	}()
	p.on = true
	start := time.Now()
	for i := range n {
		f(i)
	}
	took := time.Since(start)
	p.on = false
	close(done)
	return took
}

func TestGuestProfile(t *testing.T) {
	if *guestProfDir == "" {
		t.Skip("set -guestprof DIR to profile the guest")
	}
	needModule(t)
	if err := os.MkdirAll(*guestProfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	paths := []struct {
		name string
		n    int
		call func(rs *RuleSet, i int) error
	}{
		{"miss", 3000, func(rs *RuleSet, i int) error { _, err := rs.Resolve(ctx, uniqueInput(int64(i))); return err }},
		{"memo", 30000, func(rs *RuleSet, i int) error { _, err := rs.Resolve(ctx, benchInputs[i%len(benchInputs)]); return err }},
		{"json-miss", 3000, func(rs *RuleSet, i int) error {
			_, err := rs.ResolveJSON(ctx, []byte(`{"platform":"gpu","platform_version":"fork `+strconv.Itoa(i)+`","local_hardware_id":0}`))
			return err
		}},
	}
	cacheDir := t.TempDir() // one compilation with listeners, for every path
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) { profilePath(t, ctx, cacheDir, path.name, path.n, path.call) })
	}
	t.Run("load", func(t *testing.T) { profileLoad(t, ctx, cacheDir) })
}

// profilePath profiles n calls of call on a runner without the host's
// memo, after a warm-up.
func profilePath(t *testing.T, ctx context.Context, cacheDir, name string, n int, call func(rs *RuleSet, i int) error) {
	p := newGuestProfiler(20 * time.Microsecond)
	pctx := experimental.WithFunctionListenerFactory(ctx, p)
	r, err := NewRunner(pctx, RunnerConfig{Module: module, MemoSize: -1, Instances: 1, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.LoadLazy(pctx, rules.FS); err != nil {
		t.Fatal(err)
	}
	rs, err := r.RuleSet(pctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 { // warm: the guest's memo, its heap
		call(rs, 1<<30+i)
	}
	var failed error
	took := p.run(n, func(i int) {
		if err := call(rs, i); err != nil && failed == nil {
			failed = err
		}
	})
	r.Close(ctx)
	if failed != nil {
		t.Fatal(failed)
	}
	file := filepath.Join(*guestProfDir, name+".pprof")
	if err := os.WriteFile(file, p.pprof(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d calls in %v under the profiler (%v a call); %s", name, n, took, took/time.Duration(n), file)
	t.Logf("%s: calls a decision: %s", name, p.callsPer(n, "runtime.mallocgc", "runtime.gcStart", "runtime.memmove"))
}

// profileLoad profiles a process's way to its first decision, as
// BenchmarkGoHost/load: the runtime's start (_initialize), the embedded
// rules loaded (LoadLazy: jax@v3 compiles at RuleSet), one line.
func profileLoad(t *testing.T, ctx context.Context, cacheDir string) {
	p := newGuestProfiler(20 * time.Microsecond)
	pctx := experimental.WithFunctionListenerFactory(ctx, p)
	const loads = 3
	var failed error
	took := p.run(loads, func(int) {
		r, err := NewRunner(pctx, RunnerConfig{Module: module, Instances: 1, CacheDir: cacheDir})
		if err == nil {
			defer r.Close(ctx)
			err = r.LoadLazy(pctx, rules.FS)
		}
		var rs *RuleSet
		if err == nil {
			rs, err = r.RuleSet(pctx, "jax")
		}
		if err == nil {
			_, err = rs.ResolveJSON(pctx, []byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`))
		}
		if err != nil && failed == nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	file := filepath.Join(*guestProfDir, "load.pprof")
	if err := os.WriteFile(file, p.pprof(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("load: %d loads in %v under the profiler; %s", loads, took, file)
}

// callsPer reports the entries of the named functions per decision.
func (p *guestProfiler) callsPer(n int, names ...string) string {
	var b bytes.Buffer
	for _, name := range names {
		var c int64
		for idx, nm := range p.names {
			if nm == name {
				c += p.calls[idx]
			}
		}
		fmt.Fprintf(&b, "%s %.1f; ", name, float64(c)/float64(n))
	}
	return b.String()
}

// pprof encodes the samples as a pprof profile (profile.proto), by hand:
// two values per sample, the samples and the wall time they stand for;
// one location and one function per wasm function.
func (p *guestProfiler) pprof() []byte {
	strs := []string{""}
	str := func(s string) int64 { strs = append(strs, s); return int64(len(strs) - 1) }
	var out []byte
	valueType := func(field int, typ, unit string) {
		var m []byte
		m = pbInt(m, 1, uint64(str(typ)))
		m = pbInt(m, 2, uint64(str(unit)))
		out = pbBytes(out, field, m)
	}
	valueType(1, "samples", "count")
	valueType(1, "wall", "nanoseconds")
	used := map[uint32]bool{}
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range p.samples {
			if !yield(k) {
				return
			}
		}
	}) {
		var locs, vals []byte
		for i := len(key) - 4; i >= 0; i -= 4 { // leaf first
			f := binary.LittleEndian.Uint32([]byte(key[i:]))
			used[f] = true
			locs = binary.AppendUvarint(locs, uint64(f)+1)
		}
		n := p.samples[key]
		vals = binary.AppendUvarint(vals, uint64(n))
		vals = binary.AppendUvarint(vals, uint64(n*p.period.Nanoseconds()))
		var m []byte
		m = pbBytes(m, 1, locs)
		m = pbBytes(m, 2, vals)
		out = pbBytes(out, 2, m)
	}
	for _, f := range slices.Sorted(func(yield func(uint32) bool) {
		for k := range used {
			if !yield(k) {
				return
			}
		}
	}) {
		id := uint64(f) + 1
		var line, loc, fn []byte
		line = pbInt(line, 1, id)
		loc = pbInt(loc, 1, id)
		loc = pbBytes(loc, 4, line)
		out = pbBytes(out, 4, loc)
		name := str(p.names[f])
		fn = pbInt(fn, 1, id)
		fn = pbInt(fn, 2, uint64(name))
		fn = pbInt(fn, 3, uint64(name))
		out = pbBytes(out, 5, fn)
	}
	var period []byte
	period = pbInt(period, 1, uint64(str("wall")))
	period = pbInt(period, 2, uint64(str("nanoseconds")))
	out = pbBytes(out, 11, period)
	out = pbInt(out, 12, uint64(p.period.Nanoseconds()))
	for _, s := range strs {
		out = pbBytes(out, 6, []byte(s))
	}
	return out
}

func pbInt(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(field)<<3), v)
}

func pbBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(field)<<3|2), uint64(len(v)))
	return append(b, v...)
}
