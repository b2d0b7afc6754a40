package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/wasmhost"
)

// testArray is 4 KiB of bytes that stand for an array on a device.
func testArray() []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

// exchanger is an exchange from either engine.
type exchanger func(ctx context.Context, line []byte, src machine.Buffer) (wasmhost.ExchangeResult, error)

// nativeExchanger decides with the native engine of cat and carries out
// with c.
func nativeExchanger(t testing.TB, cat *engine.Catalog, ref string, c machine.Copier) exchanger {
	rs, err := cat.RuleSet(ref)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, line []byte, src machine.Buffer) (wasmhost.ExchangeResult, error) {
		in, err := rs.DecodeInput(line)
		if err != nil {
			return wasmhost.ExchangeResult{}, err
		}
		d, err := rs.Resolve(ctx, in)
		if err != nil {
			return wasmhost.ExchangeResult{}, err
		}
		return wasmhost.CarryOut(ctx, d, src, c)
	}
}

// sameResult says how two exchanges differ, or "".
func sameResult(a, b wasmhost.ExchangeResult, aErr, bErr error) string {
	switch {
	case (aErr == nil) != (bErr == nil):
		return "one failed"
	case aErr != nil:
		var ae, be *wasmhost.ExchangeError
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

// TestExchangeEnginesAgree carries out every case of every shipped rule
// set with both engines over the same buffer: the same decision, the same
// buffer exported (a copy's bytes equal to the source's, in new memory),
// or the same error. The core's wasmhost.TestExchangeEnginesAgree does so
// for the jax and exchange sets, and checks the runner's table of buffers
// is empty after each.
func TestExchangeEnginesAgree(t *testing.T) {
	ctx := context.Background()
	cat, r := shippedEngines(t)
	data := testArray()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	copies := 0
	for _, rs := range cat.RuleSets() {
		native := nativeExchanger(t, cat, rs.Ref(), machine.HostCopier{})
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
		}
	}
	if !bytes.Equal(data, testArray()) {
		t.Errorf("the source buffer changed")
	}
	if copies < 10 {
		t.Errorf("only %d copies made", copies)
	}
}
