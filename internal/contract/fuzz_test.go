package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/number"
	"github.com/dlroute/dlroute/internal/testkit/fuzzbound"
)

// What one decode of fuzzed bytes may cost: a decode holds the input's
// values once, and a JSON field its decoded tree, so a little input must
// cost little.
func fuzzBound() fuzzbound.Bound {
	return fuzzbound.Bound{Time: fuzzbound.Time(time.Second), Alloc: 64 << 20}
}

// maxFuzzFields bounds the fields a fuzzed decode asks for: a rule set
// declares a handful of inputs, and DecodeFields allocates n values
// whatever the input, as its caller asks.
const maxFuzzFields = 16

// FuzzDecodeFields feeds arbitrary bytes to DecodeFields (for n fields)
// and DecodeDecision, and arbitrary values to AppendField. Neither decode
// may panic or cost more than fuzzBound; what DecodeFields accepts must
// encode again to bytes that decode to the same values, and a second
// encoding must give the first's bytes; what DecodeDecision accepts must
// be what its Append function writes, byte for byte; and AppendField's
// values must decode to themselves (a float64 that is an integer as the
// int64 it encodes as). Seeds: testdata/fuzz/FuzzDecodeFields (jax's
// inputs, every tag, lengths past the end, bytes after the fields and
// after a JSON field's value, a large nested JSON array, JSON nested past
// encoding/json's depth, each kind of decision).
func FuzzDecodeFields(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, n uint8, s string, i int64, x float64, b bool, j string) {
		checkFields(t, data, int(n)%(maxFuzzFields+1))
		checkDecision(t, data)
		checkAppended(t, s, i, x, b, j)
	})
}

// checkFields holds DecodeFields of data to the bound and to the round
// trip.
func checkFields(t *testing.T, data []byte, n int) {
	var values []any
	var present []bool
	var err error
	fuzzBound().Call(t, fmt.Sprintf("DecodeFields of %d bytes, %d fields", len(data), n), func() {
		values, present, err = contract.DecodeFields(data, n)
	})
	if err != nil {
		return
	}
	if len(values) != n || len(present) != n {
		t.Fatalf("DecodeFields(%q, %d) gave %d values and %d presences", data, n, len(values), len(present))
	}
	again := appendAll(t, values, present)
	values2, present2, err := contract.DecodeFields(again, n)
	if err != nil {
		t.Fatalf("DecodeFields(%q, %d) accepted it, but not its values encoded again, %q: %v", data, n, again, err)
	}
	for k := range n {
		if present[k] != present2[k] || !reflect.DeepEqual(canonical(values[k]), canonical(values2[k])) {
			t.Fatalf("field %d of %q: decoded %#v (present %v); encoded and decoded again %#v (present %v)",
				k, data, values[k], present[k], values2[k], present2[k])
		}
	}
	if third := appendAll(t, values2, present2); !bytes.Equal(third, again) {
		t.Fatalf("the fields of %q encode as %q, and those decoded as %q", data, again, third)
	}
}

// checkDecision holds DecodeDecision of data to the bound and to the
// bytes its Append function writes.
func checkDecision(t *testing.T, data []byte) {
	var d contract.Decision
	var err error
	fuzzBound().Call(t, fmt.Sprintf("DecodeDecision of %d bytes", len(data)), func() {
		d, err = contract.DecodeDecision(data)
	})
	if err != nil {
		return
	}
	var again []byte
	switch d.Kind {
	case contract.KindDevice:
		again = contract.AppendDevice(nil, d.Rule, d.Code, d.ID)
	case contract.KindExport:
		again = contract.AppendExport(nil, d.Rule, d.Code, d.ID, d.Copy, d.Capsule, d.Flags)
	case contract.KindException:
		again = contract.AppendException(nil, d.Rule, d.Type, d.Message)
	default:
		t.Fatalf("DecodeDecision(%q) accepted kind %d", data, d.Kind)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("DecodeDecision(%q) = %+v, which encodes as %q", data, d, again)
	}
}

// checkAppended encodes a value of each tag, and j where it is JSON,
// and one absent field, and decodes them.
func checkAppended(t *testing.T, s string, i int64, x float64, b bool, j string) {
	values := []any{s, i, x, b, nil}
	var v any
	if dec := json.NewDecoder(bytes.NewReader([]byte(j))); json.Valid([]byte(j)) {
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("json.Valid(%q), but it does not decode: %v", j, err)
		}
		values = append(values, v)
	}
	present := make([]bool, len(values)+1)
	for k := range values {
		present[k] = true
	}
	data := appendAll(t, append(values, nil), present)
	var got []any
	var gotPresent []bool
	var err error
	fuzzBound().Call(t, fmt.Sprintf("DecodeFields of %d bytes, %d fields", len(data), len(present)), func() {
		got, gotPresent, err = contract.DecodeFields(data, len(present))
	})
	if err != nil {
		t.Fatalf("DecodeFields of AppendField's %#v: %v", values, err)
	}
	for k, want := range append(values, nil) {
		if gotPresent[k] != present[k] || !reflect.DeepEqual(canonical(got[k]), canonical(want)) {
			t.Fatalf("field %d: AppendField(%#v, %v) decodes as %#v (present %v)", k, want, present[k], got[k], gotPresent[k])
		}
	}
}

// appendAll encodes values with AppendField, which must accept what
// DecodeFields gives.
func appendAll(t *testing.T, values []any, present []bool) []byte {
	var out []byte
	for k, v := range values {
		var err error
		if out, err = contract.AppendField(out, v, present[k]); err != nil {
			t.Fatalf("AppendField(%#v): %v", v, err)
		}
	}
	return out
}

// floatBits is a float64 compared by its bits, so that a NaN equals
// itself.
type floatBits uint64

// canonical is v as its encoding sees it: an integer (of any type, a
// float64 without a fraction, a json.Number) as an int64, a float64 by its
// bits.
func canonical(v any) any {
	if i, ok := number.Int(v); ok {
		return i
	}
	if x, ok := v.(float64); ok {
		return floatBits(math.Float64bits(x))
	}
	return v
}
