package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/machine"
)

// testArray is 4 KiB of bytes that stand for an array on a device.
func testArray() []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

// brokenCopier copies half of a buffer and fails: a copy that dies half
// way, such as a device that goes away during the transfer.
type brokenCopier struct{}

var errBroken = errors.New("the transfer stopped half way")

func (brokenCopier) CopyToHost(_ context.Context, src machine.Buffer) (machine.Buffer, error) {
	dst := make([]byte, len(src.Data))
	copy(dst, src.Data[:len(src.Data)/2])
	return machine.Buffer{}, errBroken
}

// copierFunc is a function as a machine.Copier.
type copierFunc func(ctx context.Context, src machine.Buffer) (machine.Buffer, error)

func (f copierFunc) CopyToHost(ctx context.Context, src machine.Buffer) (machine.Buffer, error) {
	return f(ctx, src)
}

// exchanger is an exchange from either engine.
type exchanger func(ctx context.Context, line []byte, src machine.Buffer) (ExchangeResult, error)

// nativeExchanger decides with the native engine (the embedded rules,
// loaded once: nativeCatalog) and carries out with c.
func nativeExchanger(t testing.TB, ref string, c machine.Copier) exchanger {
	cat, err := nativeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, line []byte, src machine.Buffer) (ExchangeResult, error) {
		in, err := rs.DecodeInput(line)
		if err != nil {
			return ExchangeResult{}, err
		}
		d, err := rs.Resolve(ctx, in)
		if err != nil {
			return ExchangeResult{}, err
		}
		return CarryOut(ctx, d, src, c)
	}
}

// sameResult says how two exchanges differ, or "".
func sameResult(a, b ExchangeResult, aErr, bErr error) string {
	switch {
	case (aErr == nil) != (bErr == nil):
		return "one failed"
	case aErr != nil:
		var ae, be *ExchangeError
		if errors.As(aErr, &ae) != errors.As(bErr, &be) || ae != nil && (ae.Code != be.Code || ae.Message != be.Message || ae.Hint != be.Hint) {
			return "the errors differ"
		}
		if ae == nil && aErr.Error() != bErr.Error() {
			return "the errors differ"
		}
		return ""
	case !a.Decision.Equal(b.Decision) || a.Decision.String() != b.Decision.String():
		return "the decisions differ"
	case (a.Buffer == nil) != (b.Buffer == nil):
		return "one exported a buffer"
	case a.Buffer != nil && (a.Buffer.DeviceType != b.Buffer.DeviceType || a.Buffer.DeviceID != b.Buffer.DeviceID ||
		a.Buffer.Size != b.Buffer.Size || !bytes.Equal(a.Buffer.Data, b.Buffer.Data)):
		return "the buffers differ"
	}
	return ""
}

// TestExchangeEnginesAgree carries out every case of every rule set with
// both engines over the same buffer: the same decision, the same buffer
// exported (a copy's bytes equal to the source's, in new memory), or the
// same error. The runner's table of buffers is empty after each. Here the
// jax and exchange rule sets; e2e/wasmhost's TestExchangeEnginesAgree
// carries out every shipped rule set's cases.
func TestExchangeEnginesAgree(t *testing.T) {
	ctx := context.Background()
	cat, err := engine.Load(ruletest.Rules(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	buffers := &bufferTable{}
	r := newRunnerWith(t, Host{Copier: machine.HostCopier{}, buffers: buffers}, ruletest.Rules())
	data := testArray()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	copies := 0
	for _, rs := range cat.RuleSets() {
		native := nativeExchanger(t, rs.Ref(), machine.HostCopier{})
		wasm, err := r.RuleSet(ctx, rs.Ref())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rs.Cases() {
			line := encode(t, c.Input)
			want, wantErr := native(ctx, line, src)
			got, err := wasm.Exchange(ctx, line, src)
			if diff := sameResult(want, got, wantErr, err); diff != "" {
				t.Errorf("%s %s: %s:\nnative %+v %v\nwasm   %+v %v", rs.Ref(), c.Name, diff, want, wantErr, got, err)
				continue
			}
			if got.Decision.Copy && got.Buffer != nil {
				copies++
				if &got.Buffer.Data[0] == &data[0] || got.Buffer.DeviceType != machine.DeviceCPU || got.Buffer.DeviceID != 0 {
					t.Errorf("%s %s: the copy is %+v, want new memory on (kDLCPU, 0)", rs.Ref(), c.Name, got.Buffer)
				}
			}
			if len(buffers.m) != 0 || len(buffers.notes) != 0 {
				t.Fatalf("%s %s: the runner still holds buffers %v", rs.Ref(), c.Name, buffers.m)
			}
		}
	}
	if !bytes.Equal(data, testArray()) {
		t.Errorf("the source buffer changed")
	}
	if copies < 10 {
		t.Errorf("only %d copies made", copies)
	}
}

const (
	seedLine = `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`
	cudaLine = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`
)

// TestExchangeFailures: a copier that fails half way, a host without a
// copier and a copy on a GPU are the same *ExchangeError from both
// engines; the copier's error is the cause through the module too; the
// source is unchanged and no buffer is left behind.
func TestExchangeFailures(t *testing.T) {
	ctx := context.Background()
	data := testArray()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	tests := []struct {
		name   string
		copier machine.Copier
		line   string
		code   engine.Code
		cause  error
	}{
		{"a copier that fails half way", brokenCopier{}, seedLine, CodeCopyFailed, errBroken},
		{"a host without a copier", nil, seedLine, CodeNoCopier, nil},
		{"copy=True on the GPU", machine.HostCopier{}, cudaLine[:len(cudaLine)-1] + `,"copy":true}`, CodeNoCopier, nil},
	}
	// One runner with a copier the cases swap, and one without: a runner
	// takes a second to start.
	var copier machine.Copier
	buffers := &bufferTable{}
	swapped := newRunner(t, Host{buffers: buffers, Copier: copierFunc(func(ctx context.Context, src machine.Buffer) (machine.Buffer, error) {
		return copier.CopyToHost(ctx, src)
	})})
	none := newRunner(t, Host{buffers: buffers})
	for _, tt := range tests {
		r := none
		if copier = tt.copier; copier != nil {
			r = swapped
		}
		wasm, err := r.RuleSet(ctx, "exchange")
		if err != nil {
			t.Fatal(err)
		}
		_, nerr := nativeExchanger(t, "exchange", tt.copier)(ctx, []byte(tt.line), src)
		_, werr := wasm.Exchange(ctx, []byte(tt.line), src)
		for engine, err := range map[string]error{"native": nerr, "wasm": werr} {
			var e *ExchangeError
			if !errors.As(err, &e) || e.Code != tt.code || e.Hint == "" || tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("%s, %s: got %v, want an *ExchangeError %s with a hint, caused by %v", tt.name, engine, err, tt.code, tt.cause)
			}
		}
		if diff := sameResult(ExchangeResult{}, ExchangeResult{}, nerr, werr); diff != "" {
			t.Errorf("%s: %s: native %v, wasm %v", tt.name, diff, nerr, werr)
		}
		if len(buffers.m) != 0 {
			t.Errorf("%s: the runner still holds buffers %v", tt.name, slices.Collect(maps.Keys(buffers.m)))
		}
	}
	if !bytes.Equal(data, testArray()) {
		t.Errorf("the source buffer changed")
	}
}
