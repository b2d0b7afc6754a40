package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/rules"
)

// module is the dlroute module built from this checkout (cached by source
// hash in the user cache, so only the first run after a change builds).
var module []byte

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		var err error
		module, _, err = wasmbuild.Module(context.Background(), wasmbuild.Options{Progress: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "building the module for the host tests:", err)
			os.Exit(1)
		}
		if err := compileOnce(); err != nil {
			fmt.Fprintln(os.Stderr, "compiling the module for the host tests:", err)
			os.Exit(1)
		}
	}
	testenv.Main(m)
}

// compileOnce compiles the module in wazero before the tests, saying so
// as it goes: its first compile takes most of a minute on a busy machine,
// which in the first test's runner printed nothing (the test command
// shows a test's lines when it ends, and this package's own as they
// come). It fills wazero's cache on disk, which every runner reads.
func compileOnce() error {
	ctx := context.Background()
	fmt.Fprintln(os.Stderr, "compiling the module in wazero (once per module, up to a minute)...")
	stop := wasmbuild.Still(os.Stderr, "compiling the module in wazero")
	m, err := Compile(ctx, RunnerConfig{Module: module})
	stop()
	if err != nil {
		return err
	}
	return m.Close(ctx)
}

// needModule skips t under -short, where TestMain builds no module: the
// quick loop leaves the wazero host to the full run.
func needModule(t testing.TB) {
	t.Helper()
	testenv.Short(t, "the wazero host")
}

// newRunner starts a runner with the embedded rules handed over as a
// host of them does (LoadLazy): the module compiles the rule sets these
// tests ask for by name, the newest jax and exchange, from the embedded
// parsed.bin, and no other, where a Load of ruletest.Newest would parse
// and compile both, with their tests.
func newRunner(t testing.TB, host Host) *Runner {
	t.Helper()
	r := startRunner(t, host)
	if err := r.LoadLazy(context.Background(), rules.FS); err != nil {
		t.Fatal(err)
	}
	return r
}

// newRunnerWith starts a runner with fsys loaded. The tests that compare
// every version load ruletest.Rules, every version of jax and exchange;
// e2e/wasmhost loads every shipped set, once.
func newRunnerWith(t testing.TB, host Host, fsys fs.FS) *Runner {
	t.Helper()
	r := startRunner(t, host)
	if err := r.Load(context.Background(), fsys); err != nil {
		t.Fatal(err)
	}
	return r
}

// startRunner starts a runner with no rules, closed when t ends.
func startRunner(t testing.TB, host Host) *Runner {
	t.Helper()
	needModule(t)
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Module: module, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	return r
}

func encode(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestConformance: every case of the jax and exchange rule sets, every
// version, decides the same natively, through the module's binary entry (Decision.Equal, and the
// same JSON), through its JSON entry (the same bytes), and explains alike. The exchange's
// copy, capsule and flags cross the binary entry as an export decision.
// e2e/wasmhost's TestConformance compares every shipped rule set.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	cat, err := engine.Load(ruletest.Rules(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunnerWith(t, Host{}, ruletest.Rules())
	n, exports := 0, 0
	for _, native := range cat.RuleSets() {
		wasm, err := r.RuleSet(ctx, native.Ref())
		if err != nil {
			t.Fatal(err)
		}
		if wasm.Ref() != native.Ref() {
			t.Errorf("the module's rule set for %s says it is %s", native.Ref(), wasm.Ref())
		}
		for _, c := range native.Cases() {
			n++
			want, err := native.Resolve(ctx, c.Input)
			if err != nil {
				t.Fatalf("%s: native: %v", c.Name, err)
			}
			if want.Copy || want.Capsule != "" || want.Flags != 0 {
				exports++
			}
			wantJSON := encode(t, want)
			got, err := wasm.Resolve(ctx, c.Input)
			if gotJSON := encode(t, got); err != nil || !got.Equal(want) || !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s %s: binary entry got %s (%v), native %s", native.Ref(), c.Name, gotJSON, err, wantJSON)
			}
			line := encode(t, c.Input)
			gotLine, err := wasm.ResolveJSON(ctx, line)
			if err != nil || !bytes.Equal(gotLine, wantJSON) {
				t.Errorf("%s %s: JSON entry got %s (%v), native %s", native.Ref(), c.Name, gotLine, err, wantJSON)
			}
			wantExplain, err := native.ExplainJSON(ctx, line)
			if err != nil {
				t.Fatalf("%s: native explain: %v", c.Name, err)
			}
			if got, err := wasm.ExplainJSON(ctx, line); err != nil || !bytes.Equal(got, wantExplain) {
				t.Errorf("%s %s: explained %s (%v), native %s", native.Ref(), c.Name, got, err, wantExplain)
			}
		}
	}
	if n < 100 || exports < 40 {
		t.Errorf("only %d cases compared, %d of them export decisions", n, exports)
	}
}

// TestConformanceOfInputErrors: a bad line gets the same code and message
// from the module as from the native engine.
func TestConformanceOfInputErrors(t *testing.T) {
	ctx := context.Background()
	cat, _ := engine.Load(ruletest.Newest(), engine.Options{})
	native, _ := cat.RuleSet("jax")
	wasm, err := newRunner(t, Host{}).RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`{"platform":"gpu"`,
		`[1]`,
		`{"platform":"gpu","platform_version":"cuda","local_hardware_id":"0"}`,
		`{"platform":"gpu","platform_version":"cuda","colour":"red"}`,
		`{"platform":"gpu","platform_version":"cuda","platform":"cpu"}`,
		"{\"platform\":\"gpu\",\"platform_version\":\"\xff\"}",
		`{"platform":"gpu","platform_version":"` + strings.Repeat("x", engine.MaxStringLen+1) + `"}`,
	} {
		_, nerr := native.DecodeInput([]byte(line))
		_, werr := wasm.ResolveJSON(ctx, []byte(line))
		ne, we := engine.Errors(nerr), engine.Errors(werr)
		if len(ne) != 1 || len(we) != 1 || ne[0].Code != we[0].Code || ne[0].Message != we[0].Message {
			t.Errorf("line %.60q: native %v, module %v", line, nerr, werr)
		}
	}
	// The binary entry checks for undeclared fields on the host side: the
	// same code, message and hint as the native engine.
	in := engine.Input{"platform": "gpu", "platform_version": "cuda", "colour": "red"}
	_, nerr := native.Resolve(ctx, in)
	_, werr := wasm.Resolve(ctx, in)
	ne, we := engine.Errors(nerr), engine.Errors(werr)
	if len(ne) != 1 || len(we) != 1 || *ne[0] != *we[0] {
		t.Errorf("an undeclared field: native %#v, module %#v", nerr, werr)
	}
}

// TestAskTheMachine: an input without platform_version gets it from the
// host's PlatformVersion, for the device its local_hardware_id names,
// through a buffer the guest grows when the version is long.
func TestAskTheMachine(t *testing.T) {
	ctx := context.Background()
	long := "PJRT C API\n" + strings.Repeat("x", 300) + " cuda 12030"
	asked := map[int]int{}
	var mu sync.Mutex
	r := newRunner(t, Host{PlatformVersion: func(_ context.Context, device int) (string, error) {
		mu.Lock()
		asked[device]++
		mu.Unlock()
		switch device {
		case 0:
			return "rocm 60200", nil
		case 1:
			return long, nil
		}
		return "", errors.New("no such device")
	}})
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "local_hardware_id": 1})
	if err != nil || d.DeviceType != "kDLCUDA" || d.DeviceID != 1 {
		t.Errorf("device 1 (a %d-byte version): got %v, %v; want kDLCUDA 1", len(long), d, err)
	}
	line, err := rs.ResolveJSON(ctx, []byte(`{"platform":"gpu","local_hardware_id":0,"memory_kind":"pinned_host"}`))
	if err != nil || !strings.Contains(string(line), `"device_type":"kDLROCMHost"`) {
		t.Errorf("device 0 through the JSON entry: got %s, %v; want kDLROCMHost", line, err)
	}
	_, err = rs.Resolve(ctx, engine.Input{"platform": "gpu", "local_hardware_id": 7})
	if e := engine.Errors(err); len(e) != 1 || !strings.Contains(e[0].Message, "device 7") {
		t.Errorf("a device the host cannot read: got %v, want an error naming device 7", err)
	}
	// A version longer than the guest's first buffer is read again into a
	// larger one: twice for device 1, once for device 0.
	if asked[0] != 1 || asked[1] != 2 {
		t.Errorf("the host was asked %v; want device 0 once and device 1 twice", asked)
	}
}

func TestCopyToHost(t *testing.T) {
	ctx := context.Background()
	buffers := &bufferTable{}
	r := newRunner(t, Host{buffers: buffers, Copier: machine.HostCopier{}})
	data := []byte("an array of bytes standing for a pinned host buffer")
	src := buffers.add(machine.Buffer{DeviceType: machine.DeviceCUDAHost, Data: data, Size: int64(len(data))})
	var status contract.Status
	var handle uint32
	err := r.with(ctx, func(inst *instance) error {
		res, err := inst.fns["dlroute_copy_to_host"].Call(ctx, uint64(src))
		if err != nil {
			return err
		}
		status, handle = contract.Unpack(res[0])
		return nil
	})
	if err != nil || status != contract.StatusOK {
		t.Fatalf("dlroute_copy_to_host: %v, %v", status, err)
	}
	dst, ok := buffers.get(handle)
	if !ok || !bytes.Equal(dst.Data, data) || dst.DeviceType != machine.DeviceCPU || &dst.Data[0] == &data[0] {
		t.Fatalf("copy: got %+v, want a new kDLCPU buffer with the same bytes", dst)
	}
	_ = r.with(ctx, func(inst *instance) error {
		res, _ := inst.fns["dlroute_copy_to_host"].Call(ctx, 999)
		if s, hs := contract.Unpack(res[0]); s != contract.StatusHostError || hs != contract.HostUnavailable {
			t.Errorf("copy of an unknown buffer: got %v/%d, want host_error/%d", s, hs, contract.HostUnavailable)
		}
		return nil
	})
}

// TestHostFunctionsCheckMemory calls the host functions with pointers
// outside the guest's memory: they answer HostFault and do not panic.
func TestHostFunctionsCheckMemory(t *testing.T) {
	ctx := context.Background()
	buffers := &bufferTable{}
	h := Host{PlatformVersion: func(context.Context, int) (string, error) { return "cuda 12030", nil }, buffers: buffers, Copier: machine.HostCopier{}}
	r := newRunner(t, h)
	src := buffers.add(machine.Buffer{DeviceType: machine.DeviceCPU, Data: []byte{1, 2, 3}, Size: 3})
	_ = r.with(ctx, func(inst *instance) error {
		mem := inst.mod.Memory()
		end := mem.Size()
		tests := []struct {
			name string
			got  uint32
			want uint32
		}{
			{"length out of bounds", h.writePlatformVersion(ctx, mem, 0, 0, 64, end), contract.HostFault},
			{"buffer out of bounds", h.writePlatformVersion(ctx, mem, 0, end-2, 64, 0), contract.HostFault},
			{"buffer too small", h.writePlatformVersion(ctx, mem, 0, 0, 4, 0), contract.HostTooSmall},
			{"negative device", h.writePlatformVersion(ctx, mem, -1, 0, 64, 0), contract.HostFailed},
			{"handle out of bounds", h.copy(ctx, mem, src, end-1), contract.HostFault},
			{"unknown buffer", h.copy(ctx, mem, 12345, 0), contract.HostUnavailable},
		}
		for _, tt := range tests {
			if tt.got != tt.want {
				t.Errorf("%s: status %d, want %d", tt.name, tt.got, tt.want)
			}
		}
		return nil
	})
}

// TestTrappedInstanceIsReplaced closes an instance behind the runner's
// back; the next request on it fails in wazero, and is answered by a fresh
// instance.
func TestTrappedInstanceIsReplaced(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t, Host{})
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	inst := <-r.idle
	inst.mod.Close(ctx)
	r.idle <- inst
	d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": "oneapi 2026.0", "local_hardware_id": 0})
	if err != nil || d.DeviceType != "kDLOneAPI" {
		t.Fatalf("after a trap: got %v, %v; want kDLOneAPI from a fresh instance", d, err)
	}
}

// TestHostPanicDoesNotKillTheProcess: a host function that panics fails
// the request with host_error naming the device, and the runner keeps
// serving.
func TestHostPanicDoesNotKillTheProcess(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t, Host{PlatformVersion: func(context.Context, int) (string, error) { panic("probe exploded") }})
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	_, err = rs.Resolve(ctx, engine.Input{"platform": "gpu", "local_hardware_id": 0})
	if e := engine.Errors(err); len(e) != 1 || !strings.Contains(e[0].Message, "could not read device 0") {
		t.Fatalf("got %v, want an error saying device 0 could not be read", err)
	}
	d, err := rs.Resolve(ctx, engine.Input{"platform": "cpu", "platform_version": "cpu"})
	if err != nil || d.DeviceType != "kDLCPU" {
		t.Fatalf("after the panic: got %v, %v; want kDLCPU", d, err)
	}
}

func TestLoadRefusesBrokenRulesAndKeepsServing(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t, Host{})
	fsys := ruletest.Rules()
	fsys["jax/v3/rules.yaml"].Data = bytes.Replace(fsys["jax/v3/rules.yaml"].Data, []byte("shards != 1"), []byte("shards >> 1"), 1)
	err := r.Load(ctx, fsys)
	if e := engine.Errors(err); len(e) == 0 || e[0].Code != engine.CodeCELSyntax || e[0].Pos == nil || e[0].Pos.File != "rules/jax/v3/rules.yaml" {
		t.Fatalf("Load of broken rules: %v, want a positioned %s", err, engine.CodeCELSyntax)
	}
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := rs.Resolve(ctx, engine.Input{"platform": "cpu", "platform_version": "cpu"}); err != nil || d.RuleSet != "jax@v3" {
		t.Fatalf("after a refused load: %v, %v", d, err)
	}
}

func TestConcurrentResolves(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t, Host{})
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				v := fmt.Sprintf("fork-%d-%d", g, i)
				d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": v, "local_hardware_id": 0})
				if err != nil || d.Error == nil || d.Error.Message != "Unknown GPU platform for __dlpack__: "+v {
					t.Errorf("Resolve(%s) = %v, %v", v, d, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestCallDeadline: a host function that hangs (a probe stuck in a
// driver) fails the call at CallTimeout, and the runner goes on. Which of
// two things ends it is a race at the deadline, and either is right: the
// host function gives up (an error naming the device), or wazero stops
// the guest (canceled).
func TestCallDeadline(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	release := make(chan struct{})
	defer close(release)
	r, err := NewRunner(ctx, RunnerConfig{Module: module, CallTimeout: 200 * time.Millisecond, Instances: 1,
		Host: Host{PlatformVersion: func(_ context.Context, device int) (string, error) {
			if device == 9 {
				<-release // a probe that hangs
			}
			return "cuda 12030", nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if err := r.Load(ctx, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	// The probe hangs until the test ends, so an answer at all is the
	// deadline's doing; how soon is the machine's.
	_, err = rs.Resolve(ctx, engine.Input{"platform": "gpu", "local_hardware_id": 9})
	if e := engine.Errors(err); len(e) != 1 || !strings.Contains(e[0].Message, "device 9") && e[0].Code != engine.CodeCanceled {
		t.Fatalf("a hanging probe: got %v, want an error naming device 9, or canceled, at the 200ms CallTimeout", err)
	}
	d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "local_hardware_id": 0})
	if err != nil || d.DeviceType != "kDLCUDA" {
		t.Fatalf("after the deadline: got %v, %v; want kDLCUDA", d, err)
	}
}

// TestGuestStoppedAtTheDeadline: a decision that keeps the guest busy for
// seconds, with no host function to wait in, ends at the caller's
// deadline, and at CallTimeout when the caller has none, with canceled;
// the stopped instance is replaced, and the next call is answered.
func TestGuestStoppedAtTheDeadline(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	const timeout = 300 * time.Millisecond
	r, err := NewRunner(ctx, RunnerConfig{Module: module, Instances: 1, MemoSize: -1, CallTimeout: 2 * timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if err := r.Load(ctx, ruletest.WithSlowRules(ruletest.Rules(), 10)); err != nil { // as many as engine.MaxDecisionCost allows
		t.Fatal(err)
	}
	rs, err := r.RuleSet(ctx, "jax")
	if err != nil {
		t.Fatal(err)
	}
	slow := engine.Input{"platform": ruletest.SlowPlatform, "platform_version": "v"}
	for _, c := range []struct {
		name     string
		deadline time.Duration // the caller's; 0: none, CallTimeout's
		want     string
	}{
		{"the caller's deadline", timeout, "context deadline exceeded"},
		{"CallTimeout", 0, "CallTimeout"},
	} {
		callCtx, cancel := ctx, context.CancelFunc(func() {})
		if c.deadline > 0 {
			callCtx, cancel = context.WithTimeout(ctx, c.deadline)
		}
		// The message names the deadline that ended the call; how soon
		// after it the guest stopped is the machine's.
		_, err := rs.Resolve(callCtx, slow)
		cancel()
		e := engine.Errors(err)
		if len(e) != 1 || e[0].Code != engine.CodeCanceled || !strings.Contains(e[0].Message, c.want) {
			t.Fatalf("%s: the slow rules got %v; want canceled (%q)", c.name, err, c.want)
		}
		replaced := time.Now().Add(testenv.Patience(t))
		for len(r.idle) == 0 && time.Now().Before(replaced) {
			time.Sleep(10 * time.Millisecond)
		}
		if len(r.idle) == 0 {
			t.Fatalf("%s: the stopped instance had not been replaced when the test's time ran out", c.name)
		}
		d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": "rocm 60200", "local_hardware_id": 1})
		if err != nil || d.DeviceType != "kDLROCM" || d.DeviceID != 1 {
			t.Fatalf("%s: after the stop got %v, %v; want kDLROCM 1", c.name, d, err)
		}
	}
}
