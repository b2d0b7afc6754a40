package interop

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// Every row of every producer is the array ArrayOf makes of the row's own
// input: the same names, the same input, and so the same cells.
func TestArrayOfEveryRow(t *testing.T) {
	ctx := context.Background()
	cat := shipped(t)
	producers, _ := Libraries(cat)
	for _, ref := range producers {
		p, err := NewProducer(ctx, cat, ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range p.Arrays {
			got, err := p.ArrayOf(ctx, row.Input)
			if err != nil {
				t.Errorf("%s ArrayOf(%v): %v", p.Ref, row.Input, err)
				continue
			}
			if got.Platform != row.Platform || got.Memory != row.Memory || !reflect.DeepEqual(got.Input, row.Input) {
				t.Errorf("%s ArrayOf(%v) got %s / %s %v, want %s / %s", p.Ref, row.Input, got.Platform, got.Memory, got.Input, row.Platform, row.Memory)
			}
		}
	}
}

// The seed's array named by what a user knows of it (JAX's platform and
// platform_version, decoded from JSON as a caller's input is) is the
// matrix's row: memory_kind takes its default, local_hardware_id the
// ordinary array's 0.
func TestArrayOfSeed(t *testing.T) {
	ctx := context.Background()
	p, err := NewProducer(ctx, shipped(t), "jax")
	if err != nil {
		t.Fatal(err)
	}
	row := arrayOf(t, p, "gpu <unknown>", "device")
	in := decode(t, `{"platform":"gpu","platform_version":"<unknown>"}`)
	a, err := p.ArrayOf(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(a)
	want, _ := json.Marshal(row)
	if string(got) != string(want) {
		t.Errorf("ArrayOf(%v) got %s, want %s", in, got, want)
	}
	// Facts that are not a place, at their defaults, are left out: what a
	// reader of a real array gives is the row.
	a, err = p.ArrayOf(ctx, decode(t, `{"platform":"gpu","platform_version":"<unknown>","memory_kind":"device","local_hardware_id":0,"shards":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(a); string(got) != string(want) {
		t.Errorf("ArrayOf(with shards 1) got %s, want %s", got, want)
	}
	// A fixed input given at its default is the caller's: JAX's null
	// local_hardware_id (PJRT does not know it) is not the ordinary 0.
	a, err = p.ArrayOf(ctx, decode(t, `{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := a.Input["local_hardware_id"]; !ok || v != nil {
		t.Errorf("ArrayOf(local_hardware_id null).Input = %v, want local_hardware_id null", a.Input)
	}
	// numpy's origin device, a pair decoded from JSON, is named as the
	// rows name it.
	np, err := NewProducer(ctx, shipped(t), "numpy@v2")
	if err != nil {
		t.Fatal(err)
	}
	a, err = np.ArrayOf(ctx, decode(t, `{"origin_device":[3,0]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Platform != "(kDLCUDAHost, 0)" {
		t.Errorf("numpy ArrayOf(origin_device [3,0]).Platform = %q, want (kDLCUDAHost, 0)", a.Platform)
	}
	// A fact that is not a place is kept: torch's requires_grad.
	tp, err := NewProducer(ctx, shipped(t), "torch@v1")
	if err != nil {
		t.Fatal(err)
	}
	a, err = tp.ArrayOf(ctx, decode(t, `{"requires_grad":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Input["requires_grad"] != true || a.Input["device_type"] != "cpu" {
		t.Errorf("torch ArrayOf(requires_grad) = %v, want requires_grad true on the default device_type cpu", a.Input)
	}
	a, err = tp.ArrayOf(ctx, decode(t, `{"device_type":"cpu","device_index":null,"pinned":false,"hip":false,"requires_grad":false,"conj":false,"layout":"strided"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(a)
	want, _ = json.Marshal(arrayOf(t, tp, "cpu", "-"))
	if string(got) != string(want) {
		t.Errorf("torch ArrayOf(an ordinary CPU tensor, every input) got %s, want the row %s", got, want)
	}
}

func TestArrayOfRefuses(t *testing.T) {
	ctx := context.Background()
	p, err := NewProducer(ctx, shipped(t), "torch@v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		code engine.Code
		says string
	}{
		{`{"copy":true}`, engine.CodeUnknownField, "names copy, which the exchange sets"},
		{`{"call":"__dlpack__"}`, engine.CodeUnknownField, "names call"},
		{`{"devcie_type":"cuda"}`, engine.CodeUnknownField, `unknown input "devcie_type"`},
		{`{"pinned":"yes"}`, engine.CodeWrongType, "input pinned"},
	} {
		_, err := p.ArrayOf(ctx, decode(t, tc.in))
		list := engine.Errors(err)
		if len(list) != 1 || list[0].Code != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ArrayOf(%s) got %v, want %s saying %q", tc.in, err, tc.code, tc.says)
		}
	}
}

func decode(t *testing.T, s string) engine.Input {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var in engine.Input
	if err := dec.Decode(&in); err != nil {
		t.Fatal(err)
	}
	return in
}
