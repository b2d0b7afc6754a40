package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// The statuses of ABI.md.
const (
	statusOK         = 0
	statusInputError = 1
	statusLoadError  = 3
	statusNoRuleSet  = 4
	statusBadHandle  = 5
	statusTooSmall   = 7
)

// module is the C module built by Build, started in wazero, with an
// input and an output buffer.
type module struct {
	t       *testing.T
	mod     api.Module
	in, out uint32
	inCap   uint32
	outCap  uint32
}

// wasm is the module the tests build once.
var (
	wasmOnce sync.Once
	wasm     []byte
	wasmErr  error
)

func startModule(t *testing.T) *module {
	t.Helper()
	needBuildParts(t)
	wasmOnce.Do(func() { wasm, wasmErr = Build("clang", src) })
	if wasmErr != nil {
		t.Fatal(wasmErr)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	instantiateNoMachine(ctx, t, rt)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	m := &module{t: t, mod: mod, inCap: 5 << 20, outCap: 1 << 16}
	if v := m.call("dlroute_abi_version"); v != 3 {
		t.Fatalf("dlroute_abi_version() = %d, want 3", v)
	}
	m.in, m.out = uint32(m.call("dlroute_alloc", uint64(m.inCap))), uint32(m.call("dlroute_alloc", uint64(m.outCap)))
	if m.in == 0 || m.out == 0 {
		t.Fatal("dlroute_alloc gave 0")
	}
	return m
}

// instantiateNoMachine gives rt the module's imports (ABI.md, "Imports")
// as a host that reads no machine and has no copier: both answer status
// 2, unavailable.
func instantiateNoMachine(ctx context.Context, t *testing.T, rt wazero.Runtime) {
	t.Helper()
	unavailable := api.GoFunc(func(_ context.Context, stack []uint64) { stack[0] = 2 })
	i32 := api.ValueTypeI32
	b := rt.NewHostModuleBuilder("dlroute_host")
	b.NewFunctionBuilder().WithGoFunction(unavailable, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).Export("platform_version")
	b.NewFunctionBuilder().WithGoFunction(unavailable, []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("copy_to_host")
	if _, err := b.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
}

func (m *module) call(name string, args ...uint64) uint64 {
	m.t.Helper()
	res, err := m.mod.ExportedFunction(name).Call(context.Background(), args...)
	if err != nil {
		m.t.Fatalf("%s: %v", name, err)
	}
	if len(res) == 0 {
		return 0
	}
	return res[0]
}

// put writes data at the input buffer, from offset at.
func (m *module) put(at uint32, data []byte) {
	if !m.mod.Memory().Write(m.in+at, data) {
		m.t.Fatalf("writing %d bytes", len(data))
	}
}

// answer splits a packed result and reads its output.
func (m *module) answer(r uint64, outCap uint32) (uint32, string) {
	status, n := uint32(r>>32), uint32(r)
	if status == statusTooSmall || status == statusOK && n > 0 && n > outCap {
		return status, ""
	}
	if status == statusOK && outCap == 0 {
		return status, ""
	}
	b, ok := m.mod.Memory().Read(m.out, n)
	if !ok || n > outCap {
		m.t.Fatalf("an output of %d bytes, out_cap %d", n, outCap)
	}
	return status, string(b)
}

// loadPlan is dlroute_load_plan of data: the status and the output, or
// the handle as its text.
func (m *module) loadPlan(data []byte) (uint32, string, uint32) {
	m.put(0, data)
	r := m.call("dlroute_load_plan", uint64(m.in), uint64(len(data)), uint64(m.out), uint64(m.outCap))
	if r>>32 == statusOK {
		return statusOK, "", uint32(r)
	}
	s, out := m.answer(r, m.outCap)
	return s, out, 0
}

func (m *module) loadSet(set []byte, ref string) (uint32, string, uint32) {
	m.put(0, set)
	m.put(uint32(len(set)), []byte(ref))
	r := m.call("dlroute_load_set", uint64(m.in), uint64(len(set)), uint64(m.in)+uint64(len(set)), uint64(len(ref)), uint64(m.out), uint64(m.outCap))
	if r>>32 == statusOK {
		return statusOK, "", uint32(r)
	}
	s, out := m.answer(r, m.outCap)
	return s, out, 0
}

// wantLoad is the Go module's answer to a plan's bytes (main.go's
// loadPlan): ok, or load_error with a list of one error.
func wantLoad(data []byte) (uint32, string) {
	if _, err := plan.Decode(data); err != nil {
		return statusLoadError, "[" + string(err.(*plan.Error).AppendJSON(nil)) + "]"
	}
	return statusOK, ""
}

// wantLoadSet is main.go's loadFromSet.
func wantLoadSet(set []byte, ref string) (uint32, string) {
	entries, err := plan.DecodeSet(set)
	if err != nil {
		return statusLoadError, "[" + string(err.(*plan.Error).AppendJSON(nil)) + "]"
	}
	var refs []string
	for _, e := range entries {
		if e.Ref == ref {
			return wantLoad(e.Plan)
		}
		refs = append(refs, e.Ref)
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\x01", `\x01`, "\xff", `\xff`).Replace(ref)
	e := &plan.Error{Code: "no_ruleset", Message: `no plan of "` + quoted + `" in the set`, Hint: "the set has plans of: " + strings.Join(refs, ", ")}
	return statusNoRuleSet, string(e.AppendJSON(nil))
}

// TestLoadAnswersAsDecode: the C module's dlroute_load_plan and
// dlroute_load_set answer what the Go module answers (plan.Decode's
// errors, as a list) for every embedded plan, for the smallest one cut
// short at every byte and with each byte changed, and for sets of
// plans, whole, cut and changed, and asked for a version they lack.
func TestLoadAnswersAsDecode(t *testing.T) {
	m := startModule(t)
	entries, err := plan.DecodeSet(rules.Plans)
	if err != nil {
		t.Fatal(err)
	}
	check := func(data []byte) {
		t.Helper()
		status, out, h := m.loadPlan(data)
		wantStatus, want := wantLoad(data)
		if status != wantStatus || out != want {
			t.Fatalf("load_plan(% x...) = %d %s, want %d %s", data[:min(len(data), 16)], status, out, wantStatus, want)
		}
		if h != 0 {
			m.call("dlroute_release", uint64(h))
		}
	}
	for _, e := range entries {
		check(e.Plan)
	}
	smallest := slices.MinFunc(entries, func(a, b plan.Entry) int { return len(a.Plan) - len(b.Plan) }).Plan
	for off := range smallest {
		check(smallest[:off])
		for _, v := range []byte{0, 0x80, smallest[off] + 1} {
			changed := bytes.Clone(smallest)
			changed[off] = v
			check(changed)
		}
	}

	// Forged plans the engine never builds: an expression nested past
	// plan.MaxExprDepth, and values that read each other in a circle.
	for _, depth := range []int{plan.MaxExprDepth, plan.MaxExprDepth + 1, 20 * plan.MaxExprDepth} {
		check(forgedPlan(t, depth, false))
	}
	check(forgedPlan(t, 3, true))

	checkSet := func(set []byte, ref string) {
		t.Helper()
		status, out, h := m.loadSet(set, ref)
		wantStatus, want := wantLoadSet(set, ref)
		if status != wantStatus || out != want {
			t.Fatalf("load_set(%d bytes, %q) = %d %s, want %d %s", len(set), ref, status, out, wantStatus, want)
		}
		if h != 0 {
			m.call("dlroute_release", uint64(h))
		}
	}
	for _, ref := range []string{"jax@v3", "jax@v99", "a\"b\\c\x01\xff", ""} {
		checkSet(rules.Plans, ref)
		checkSet(plan.EncodeSet(nil), ref)
	}
	small := plan.EncodeSet(entries[:3])
	for off := 0; off < len(small); off += 5 {
		checkSet(small[:off], entries[2].Ref)
		for _, v := range []byte{0x80, small[off] + 1} {
			changed := bytes.Clone(small)
			changed[off] = v
			checkSet(changed, entries[1].Ref)
		}
	}
}

// TestHandlesAndBuffers: handles count up from 1 and are never reused;
// a released or unknown handle answers bad_handle; an output that does
// not fit answers too_small with the size it needs and has no other
// effect; a line over 4 MiB is too_long; dlroute_free ignores a pointer
// it did not give.
func TestHandlesAndBuffers(t *testing.T) {
	m := startModule(t)
	set, ref := rules.Plans, "jax@v3"
	if s, out, h := m.loadSet(set, ref); s != statusOK || h != 1 {
		t.Fatalf("first load_set = %d %s handle %d, want ok and handle 1", s, out, h)
	}
	m.call("dlroute_release", 1)
	m.call("dlroute_release", 1) // twice: no effect
	if s, _, h := m.loadSet(set, ref); s != statusOK || h != 2 {
		t.Fatalf("load_set after a release = %d handle %d, want ok and handle 2", s, h)
	}

	line := []byte(`{"platform":"cpu","platform_version":"cpu","local_hardware_id":0}`)
	m.put(0, line)
	decide := func(h, outCap uint32) (uint32, uint32) {
		r := m.call("dlroute_decide", uint64(h), uint64(m.in), uint64(len(line)), uint64(m.out), uint64(outCap))
		return uint32(r >> 32), uint32(r)
	}
	for _, h := range []uint32{0, 1, 3, 1 << 31} {
		if s, n := decide(h, m.outCap); s != statusBadHandle || n != 0 {
			t.Errorf("decide(handle %d) = %d %d, want bad_handle", h, s, n)
		}
	}
	s, n := decide(2, m.outCap)
	if s != statusOK {
		t.Fatalf("decide(2) = status %d", s)
	}
	want, _ := m.mod.Memory().Read(m.out, n)
	want = bytes.Clone(want)
	m.mod.Memory().Write(m.out, make([]byte, n))
	if s, need := decide(2, n-1); s != statusTooSmall || need != n {
		t.Errorf("decide with out_cap %d = %d %d, want too_small %d", n-1, s, need, n)
	}
	if got, _ := m.mod.Memory().Read(m.out, n); !bytes.Equal(got, make([]byte, n)) {
		t.Errorf("a too_small decide wrote %q", got)
	}
	if s, got := decide(2, n); s != statusOK || got != n {
		t.Errorf("decide with out_cap %d = %d %d, want ok", n, s, got)
	}
	if got, _ := m.mod.Memory().Read(m.out, n); !bytes.Equal(got, want) {
		t.Errorf("decide = %s, want %s", got, want)
	}

	// A bad plan's error needs room too; a too_small load gives no handle.
	if r := m.call("dlroute_load_plan", uint64(m.in), 3, uint64(m.out), 0); r>>32 != statusTooSmall || uint32(r) == 0 {
		t.Errorf("load_plan of 3 bytes into no room = %#x, want too_small", r)
	}
	if _, _, h := m.loadSet(set, ref); h != 3 {
		t.Errorf("the next handle is %d, want 3", h)
	}

	long := uint32(4<<20 + 1)
	r := m.call("dlroute_decide", 2, uint64(m.in), uint64(long), uint64(m.out), uint64(m.outCap))
	if status, out := m.answer(r, m.outCap); status != statusInputError || out != `{"code":"too_long","message":"line is longer than 4194304 bytes"}` {
		t.Errorf("decide of %d bytes = %d %s, want too_long", long, status, out)
	}

	m.call("dlroute_free", uint64(m.in)+8) // not a buffer it gave
	p := uint32(m.call("dlroute_alloc", 0))
	if p == 0 {
		t.Fatal("dlroute_alloc(0) = 0")
	}
	m.call("dlroute_free", uint64(p))
	var le [8]byte
	binary.LittleEndian.PutUint64(le[:], 1)
	if !m.mod.Memory().Write(m.in, le[:]) {
		t.Error("the input buffer is gone after freeing another pointer")
	}
}

// forgedPlan is a plan whose one rule's condition is a chain of depth
// nodes (a constant under ! calls), and, circular, whose value reads
// itself.
func forgedPlan(t *testing.T, depth int, circular bool) []byte {
	t.Helper()
	p := &plan.Plan{Ref: "forged@v1", StepLimit: 1 << 30}
	p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpConst, Const: true})
	for len(p.Nodes) < depth {
		p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpCall, Func: plan.FuncNot, Args: []int{len(p.Nodes) - 1}})
	}
	p.Exprs = []plan.Expr{{Root: len(p.Nodes) - 1}}
	if circular {
		p.Nodes = append(p.Nodes, plan.Node{Op: plan.OpSlot, Slot: 0})
		p.Exprs = append(p.Exprs, plan.Expr{Root: len(p.Nodes) - 1})
		p.Values = []plan.Value{{Name: "loop", Expr: 1, Import: -1}}
	}
	p.Rules = []plan.Rule{{ID: "r", When: 0, Raise: "E", Message: 0, Type: -1, DeviceID: -1, Copy: -1, Capsule: -1, Flags: -1}}
	data, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
