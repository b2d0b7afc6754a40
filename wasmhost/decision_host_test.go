package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/rules"
)

// The decision module's host functions against the compiler module's:
// the same Host answers both, and both answer a line with the same bytes
// and status (wasm/decision/ABI.md, "Imports").

// hostDecider starts a Decider of ref, from planBytes (rules.Plans with
// ref, or one plan with ref ""), in a module whose instances call host.
func hostDecider(t *testing.T, host Host, planBytes []byte, ref string) *Decider {
	t.Helper()
	wasm, err := decisionWasm()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := CompileDecision(ctx, DecisionConfig{Module: wasm, Cache: decisionCache, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx) })
	d, err := m.NewDecider(ctx, planBytes, ref)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// compilerAnswer is the compiler module's raw answer to line: export
// name's output and status, args between the handle and the line.
func compilerAnswer(t *testing.T, rs *RuleSet, name string, line []byte, args ...uint64) ([]byte, contract.Status) {
	t.Helper()
	ctx := context.Background()
	var out []byte
	var status contract.Status
	err := rs.r.with(ctx, func(inst *instance) error {
		h, err := inst.handle(ctx, rs.desc.Ref)
		if err != nil {
			return err
		}
		o, s, err := inst.call(ctx, name, line, append([]uint64{uint64(h)}, args...)...)
		out, status = slices.Clone(o), s
		return err
	})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, line, err)
	}
	return out, status
}

// sameAsCompiler decides and explains line with d and with the compiler
// module's rs: the same bytes and status. It returns the decision's.
func sameAsCompiler(t *testing.T, d *Decider, rs *RuleSet, line string) ([]byte, contract.Status) {
	t.Helper()
	ctx := context.Background()
	var decided []byte
	var decidedStatus contract.Status
	for _, pair := range [][2]string{{"dlroute_decide", "dlroute_resolve_json"}, {"dlroute_explain", "dlroute_explain_json"}} {
		fn := d.decide
		if pair[0] == "dlroute_explain" {
			fn = d.explain
		}
		got, status, err := d.answer(ctx, fn, []byte(line))
		if err != nil {
			t.Fatalf("%s(%s): %v", pair[0], line, err)
		}
		want, wantStatus := compilerAnswer(t, rs, pair[1], []byte(line))
		if status != wantStatus || !bytes.Equal(got, want) {
			t.Errorf("%s(%s):\n got %v %s\nwant %v %s (the compiler module's %s)", pair[0], line, status, got, wantStatus, want, pair[1])
		}
		if decided == nil {
			decided, decidedStatus = got, status
		}
	}
	return decided, decidedStatus
}

// readingHost reads a platform version for devices 0 (ROCm), 1 (one
// longer than the guest's first buffer) and 2 (CUDA), fails for any
// other, and counts the calls by device.
type readingHost struct {
	mu    sync.Mutex
	asked map[int]int
}

var longVersion = "PJRT C API\n" + strings.Repeat("x", 300) + " cuda 12030"

func (h *readingHost) read(_ context.Context, device int) (string, error) {
	h.mu.Lock()
	if h.asked == nil {
		h.asked = map[int]int{}
	}
	h.asked[device]++
	h.mu.Unlock()
	switch device {
	case 0:
		return "rocm 60200", nil
	case 1:
		return longVersion, nil
	case 2:
		return "cuda 12030", nil
	}
	return "", errors.New("no such device")
}

// askedOf is how often line made the host read each device.
func (h *readingHost) askedOf(f func()) map[int]int {
	h.mu.Lock()
	h.asked = map[int]int{}
	h.mu.Unlock()
	f()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked
}

// TestDeciderAsksTheHost: with a Host that reads the machine, a line of
// jax's newest version that leaves platform_version out is decided with
// the host's version, as the compiler module decides it (the same bytes
// and status, for decisions and explanations); a version longer than the
// guest's first buffer is read twice (the retry on status 1); a device the
// host cannot read (status 4) is host_error naming the device; a line
// that gives platform_version asks nothing.
func TestDeciderAsksTheHost(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	ctx := context.Background()
	host, compiler := &readingHost{}, &readingHost{}
	r := newRunner(t, Host{PlatformVersion: compiler.read})
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	d := hostDecider(t, Host{PlatformVersion: host.read}, rules.Plans, rs.desc.Ref)
	tests := []struct {
		line   string
		status contract.Status
		want   string // in the output
		asked  map[int]int
	}{
		{`{"platform":"gpu","local_hardware_id":1}`, contract.StatusOK, `"device_type":"kDLCUDA"`, map[int]int{1: 2}},
		{`{"platform":"gpu","local_hardware_id":0,"memory_kind":"pinned_host"}`, contract.StatusOK, `"device_type":"kDLROCMHost"`, map[int]int{0: 1}},
		{`{"platform":"gpu"}`, contract.StatusOK, `"rule":"gpu-no-hardware-id"`, map[int]int{0: 1}},
		{`{"platform":"gpu","local_hardware_id":2.9}`, contract.StatusInputError, `"wrong_type"`, map[int]int{2: 1}},
		{`{"platform":"gpu","local_hardware_id":1e0}`, contract.StatusOK, `"device_type":"kDLCUDA"`, map[int]int{1: 2}},
		{`{"platform":"gpu","local_hardware_id":4294967298}`, contract.StatusOK, `"device_type":"kDLCUDA"`, map[int]int{2: 1}},
		{`{"platform":"gpu","local_hardware_id":7}`, contract.StatusHostError, `"input platform_version is missing and the host could not read device 7: the host could not read it"`, map[int]int{7: 1}},
		{`{"platform":"gpu","local_hardware_id":-1}`, contract.StatusHostError, `device -1`, map[int]int{}},
		{`{"platform":"gpu","local_hardware_id":"one"}`, contract.StatusInputError, `"wrong_type"`, map[int]int{0: 1}},
		{`{"local_hardware_id":2}`, contract.StatusInputError, `input platform is missing`, map[int]int{2: 1}},
		{`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":5}`, contract.StatusOK, `"device_type":"kDLCUDA"`, map[int]int{}},
		{`{"platform":"gpu","local_hardware_id":1,"nope":1}`, contract.StatusInputError, `"unknown_field"`, map[int]int{}},
	}
	for _, tt := range tests {
		var out []byte
		var status contract.Status
		var compilerAsked map[int]int
		asked := host.askedOf(func() {
			compilerAsked = compiler.askedOf(func() { out, status = sameAsCompiler(t, d, rs, tt.line) })
		})
		if status != tt.status || !strings.Contains(string(out), tt.want) {
			t.Errorf("%s: got %v %s; want %v holding %s", tt.line, status, out, tt.status, tt.want)
		}
		// sameAsCompiler decides and explains.
		want := map[int]int{}
		for dev, n := range tt.asked {
			want[dev] = 2 * n
		}
		if fmt.Sprint(asked) != fmt.Sprint(want) || fmt.Sprint(compilerAsked) != fmt.Sprint(want) {
			t.Errorf("%s: the host was asked %v by the decision module, %v by the compiler module; want %v each, deciding and explaining", tt.line, asked, compilerAsked, want)
		}
	}
	// An exchange line's numbers, at any depth, are read again as the
	// compiler module reads them once the host has answered: as float64s.
	xrs, err := r.RuleSet(ctx, "exchange")
	if err != nil {
		t.Fatal(err)
	}
	xd := hostDecider(t, Host{PlatformVersion: host.read}, rules.Plans, xrs.desc.Ref)
	for _, line := range []string{`{"platform":"gpu","local_hardware_id":2,"max_version":[1.0,1e0]}`, `{"platform":"gpu","local_hardware_id":2,"max_version":[1.5,1]}`,
		`{"platform":"gpu","local_hardware_id":0,"max_version":[100000000000000000001,1]}`, `{"platform":"gpu","local_hardware_id":0,"dl_device":[1e400,0]}`} {
		sameAsCompiler(t, xd, xrs, line)
	}
	if asked := host.askedOf(func() { d.DecideJSON(ctx, []byte(`{"platform":"gpu","local_hardware_id":1}`)) }); asked[1] != 2 {
		t.Errorf("a %d-byte version: the decision module asked %v; want device 1 twice", len(longVersion), asked)
	}
	_, err = d.DecideJSON(ctx, []byte(`{"platform":"gpu","local_hardware_id":7}`))
	if e, ok := err.(*engine.Error); !ok || e.Code != engine.CodeMissingField || !strings.Contains(e.Message, "device 7") {
		t.Errorf("DecideJSON of device 7: got %v; want missing_field naming device 7", err)
	}
}

// TestDeciderWithoutHost: with no Host (platform_version answers status
// 2, "reads no machine"), a line that leaves platform_version out is
// checked as it is: missing_field, input_error, as the compiler module
// answers on a host that reads no machine.
func TestDeciderWithoutHost(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	ctx := context.Background()
	r := newRunner(t, Host{})
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	d := hostDecider(t, Host{}, rules.Plans, rs.desc.Ref)
	for _, line := range []string{`{"platform":"gpu","local_hardware_id":1}`, `{"platform":"gpu"}`, `{"local_hardware_id":1.5e400}`} {
		out, status := sameAsCompiler(t, d, rs, line)
		if status != contract.StatusInputError || !strings.Contains(string(out), `"code":"missing_field"`) {
			t.Errorf("%s: got %v %s; want input_error missing_field", line, status, out)
		}
	}
}

// TestDeciderAsksForAnOptionalVersion: on a rule set whose
// platform_version has a default, a decision asks the host for it and an
// explanation does not, as in the compiler module; a required input
// missing beside it asks the host too, before the check.
func TestDeciderAsksForAnOptionalVersion(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	ctx := context.Background()
	fsys := fstest.MapFS{
		"opt/v1/manifest.yaml":     {Data: []byte("name: opt\nversion: v1\ndescription: a test\nmirrors: {project: none}\n")},
		"opt/v1/device_types.yaml": {Data: []byte("device_types: {kDLCPU: 1}\n")},
		"opt/v1/rules.yaml": {Data: []byte("inputs:\n  platform_version: {type: string, default: none}\n  local_hardware_id:\n    type: int?\n    default: null\n  x: {type: int}\n" +
			"rules:\n  - id: cuda\n    when: platform_version.contains('cuda')\n    device: {type: kDLCPU, id: 1}\n  - id: other\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n")},
		"opt/v1/tests.yaml": {Data: []byte("cases:\n  - {name: one, input: {x: 1}, want: {device_type: kDLCPU, rule: other}}\n")},
	}
	host := &readingHost{}
	r, err := NewRunner(ctx, RunnerConfig{Module: module, Host: Host{PlatformVersion: host.read}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	if err := r.Load(ctx, fsys); err != nil {
		t.Fatal(err)
	}
	rs, err := r.RuleSet(ctx, "opt")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	native, err := cat.RuleSet("opt")
	if err != nil {
		t.Fatal(err)
	}
	planBytes, err := native.Plan()
	if err != nil {
		t.Fatal(err)
	}
	d := hostDecider(t, Host{PlatformVersion: host.read}, planBytes, "")
	for _, line := range []string{`{"x":1,"local_hardware_id":2}`, `{"x":1,"local_hardware_id":7}`, `{"x":1}`, `{"local_hardware_id":2}`, `{"x":1,"platform_version":"cuda"}`} {
		sameAsCompiler(t, d, rs, line)
	}
	out, err := d.DecideJSON(ctx, []byte(`{"x":1,"local_hardware_id":2}`))
	if err != nil || !strings.Contains(string(out), `"rule":"cuda"`) {
		t.Errorf("device 2, whose version names CUDA: got %s, %v; want rule cuda", out, err)
	}
	if asked := host.askedOf(func() { d.ExplainJSON(ctx, []byte(`{"x":1,"local_hardware_id":2}`)) }); len(asked) != 0 {
		t.Errorf("an explanation asked the host %v; want nothing (the compiler module asks only when decoding misses a field)", asked)
	}
}

// TestDeciderExchange carries out every case of the exchange rule sets
// with the decision module and the compiler module over the same buffer:
// the same decision, the same buffer exported in place or copied, and no
// buffer left in either table.
func TestDeciderExchange(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	ctx := context.Background()
	cat, err := engine.Load(ruletest.Rules(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	buffers := &bufferTable{}
	r := newRunnerWith(t, Host{Copier: machine.HostCopier{}}, ruletest.Rules())
	data := testArray()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	copies := 0
	for _, rs := range cat.RuleSets() {
		if !strings.HasPrefix(rs.Ref(), "exchange@") {
			continue
		}
		d := hostDecider(t, Host{Copier: machine.HostCopier{}, buffers: buffers}, rules.Plans, rs.Ref())
		wasm, err := r.RuleSet(ctx, rs.Ref())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rs.Cases() {
			line := encode(t, c.Input)
			want, wantErr := wasm.Exchange(ctx, line, src)
			got, err := d.Exchange(ctx, line, src)
			if diff := sameResult(want, got, wantErr, err); diff != "" {
				t.Errorf("%s %s: %s:\ncompiler %+v %v\ndecision %+v %v", rs.Ref(), c.Name, diff, want, wantErr, got, err)
				continue
			}
			if got.Buffer != nil && got.Decision.Copy {
				copies++
				if &got.Buffer.Data[0] == &data[0] {
					t.Errorf("%s %s: the copy is the source's memory", rs.Ref(), c.Name)
				}
			}
			if len(buffers.m) != 0 || len(buffers.notes) != 0 {
				t.Fatalf("%s %s: the decision module's host still holds buffers %v", rs.Ref(), c.Name, buffers.m)
			}
		}
	}
	if copies == 0 {
		t.Error("no case copied")
	}
	if !bytes.Equal(data, testArray()) {
		t.Error("the source buffer changed")
	}
}

// TestDeciderExchangeFailures: a copier that fails half way (copy_failed,
// with the copier's error as its cause), a host without a copier and a
// copy on a GPU (no_copier) are the compiler module's error objects, byte
// for byte, with host_error; a copy is asked of the host once.
func TestDeciderExchangeFailures(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	ctx := context.Background()
	data := testArray()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	gpuCopy := cudaLine[:len(cudaLine)-1] + `,"copy":true}`
	tests := []struct {
		name   string
		copier machine.Copier
		line   string
		code   engine.Code
		cause  error
	}{
		{"a copier that fails half way", brokenCopier{}, seedLine, CodeCopyFailed, errBroken},
		{"a host without a copier", nil, seedLine, CodeNoCopier, nil},
		{"copy=True on the GPU", machine.HostCopier{}, gpuCopy, CodeNoCopier, nil},
	}
	for _, tt := range tests {
		calls := 0
		host := Host{}
		if tt.copier != nil {
			host.Copier = copierFunc(func(ctx context.Context, src machine.Buffer) (machine.Buffer, error) {
				calls++
				return tt.copier.CopyToHost(ctx, src)
			})
		}
		r := newRunner(t, host)
		rs, err := r.RuleSet(ctx, "exchange")
		if err != nil {
			t.Fatal(err)
		}
		d := hostDecider(t, host, rules.Plans, rs.desc.Ref)
		_, werr := rs.Exchange(ctx, []byte(tt.line), src)
		calls = 0
		_, derr := d.Exchange(ctx, []byte(tt.line), src)
		var e *ExchangeError
		if !errors.As(derr, &e) || e.Code != tt.code || e.Hint == "" || tt.cause != nil && !errors.Is(derr, tt.cause) {
			t.Errorf("%s: got %v, want an *ExchangeError %s with a hint, caused by %v", tt.name, derr, tt.code, tt.cause)
		}
		if diff := sameResult(ExchangeResult{}, ExchangeResult{}, werr, derr); diff != "" {
			t.Errorf("%s: %s: compiler %v, decision %v", tt.name, diff, werr, derr)
		}
		if tt.code == CodeCopyFailed && calls != 1 {
			t.Errorf("%s: the copier ran %d times; want once", tt.name, calls)
		}
		// The raw answers, for a buffer neither host knows: the same
		// bytes and status.
		got, status, err := d.answer(ctx, d.xchg, []byte(tt.line), 999)
		want, wantStatus := compilerAnswer(t, rs, "dlroute_exchange", []byte(tt.line), 999)
		if err != nil || status != wantStatus || !bytes.Equal(got, want) {
			t.Errorf("%s, buffer 999: got %v %s %v; want %v %s", tt.name, status, got, err, wantStatus, want)
		}
	}
}

// TestDeciderCopyToHost: dlroute_copy_to_host asks the Host's copier, and
// answers host_error with the host's status for a buffer it lacks.
func TestDeciderCopyToHost(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	ctx := context.Background()
	buffers := &bufferTable{}
	d := hostDecider(t, Host{buffers: buffers, Copier: machine.HostCopier{}}, rules.Plans, "exchange@v2")
	data := []byte("an array of bytes standing for a pinned host buffer")
	src := buffers.add(machine.Buffer{DeviceType: machine.DeviceCUDAHost, Data: data, Size: int64(len(data))})
	fn := d.mod.ExportedFunction("dlroute_copy_to_host")
	res, err := fn.Call(ctx, uint64(src))
	if err != nil {
		t.Fatal(err)
	}
	status, handle := contract.Unpack(res[0])
	dst, ok := buffers.get(handle)
	if status != contract.StatusOK || !ok || !bytes.Equal(dst.Data, data) || dst.DeviceType != machine.DeviceCPU {
		t.Fatalf("dlroute_copy_to_host: %v, %+v; want ok and a kDLCPU copy", status, dst)
	}
	res, _ = fn.Call(ctx, 999)
	if s, hs := contract.Unpack(res[0]); s != contract.StatusHostError || hs != contract.HostUnavailable {
		t.Errorf("copy of an unknown buffer: got %v/%d, want host_error/%d", s, hs, contract.HostUnavailable)
	}
}
