package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/plan"
	"github.com/dlroute/dlroute/rules"
)

// planGaps lists the shipped versions that do not build a plan, each with
// the reason. It is empty: every shipped version builds one, and
// TestPlanMatchesEngine fails on a version that does not unless it is
// listed here.
var planGaps = map[string]string{}

// shippedPlans loads the embedded rules once and builds each version's
// plan.
var shippedPlans = sync.OnceValues(func() ([]*RuleSet, error) {
	cat, err := Load(rules.FS, Options{})
	if err != nil {
		return nil, err
	}
	return cat.RuleSets(), nil
})

type planned struct {
	rs *RuleSet
	p  *plan.Plan
}

func loadPlans(t testing.TB) []planned {
	t.Helper()
	sets, err := shippedPlans()
	if err != nil {
		t.Fatal(err)
	}
	var out []planned
	for _, rs := range sets {
		data, err := rs.Plan()
		if reason, gap := planGaps[rs.Ref()]; gap {
			t.Logf("%s: known gap, no plan: %s (%v)", rs.Ref(), reason, err)
			continue
		}
		if err != nil {
			t.Errorf("%s: Plan() = %v", rs.Ref(), err)
			continue
		}
		p, err := plan.Decode(data)
		if err != nil {
			t.Errorf("%s: Decode(Plan()) = %v", rs.Ref(), err)
			continue
		}
		out = append(out, planned{rs, p})
	}
	return out
}

// samePlanAnswer decides one JSON line with the engine and the plan and
// says how the answers differ, or "".
func samePlanAnswer(rs *RuleSet, p *plan.Plan, line []byte) string {
	want, werr := rs.ResolveJSON(context.Background(), line)
	got, gerr := p.Decide(line)
	switch {
	case werr == nil && gerr == nil:
		if string(want) != string(got) {
			return fmt.Sprintf("Decide(%s)\n got %s\nwant %s", line, got, want)
		}
	case werr != nil && gerr != nil:
		var we *Error
		var ge *plan.Error
		if !errors.As(werr, &we) || !errors.As(gerr, &ge) {
			return fmt.Sprintf("Decide(%s): errors of unexpected types %T, %T", line, werr, gerr)
		}
		w, _ := json.Marshal(we)
		g, _ := json.Marshal(ge)
		if string(w) != string(g) {
			return fmt.Sprintf("Decide(%s)\n got error %s\nwant error %s", line, g, w)
		}
	default:
		return fmt.Sprintf("Decide(%s)\n got %s, %v\nwant %s, %v", line, got, gerr, want, werr)
	}
	return ""
}

// TestPlanMatchesEngine: every shipped version builds a plan, and the
// plan answers every case of its tests.yaml with the engine's bytes.
func TestPlanMatchesEngine(t *testing.T) {
	for _, pl := range loadPlans(t) {
		t.Run(pl.rs.Ref(), func(t *testing.T) {
			for _, c := range pl.rs.Cases() {
				line, err := json.Marshal(c.Input)
				if err != nil {
					t.Fatal(err)
				}
				if diff := samePlanAnswer(pl.rs, pl.p, line); diff != "" {
					t.Errorf("case %s: %s", c.Name, diff)
				}
			}
		})
	}
}

// TestPlanMatchesEngineOnDomain: the plan answers as the engine does on
// each version's domain (the inputs `dlroute diff` derives from its
// rules), and on those inputs made wrong: fields null, left out, of the
// wrong type, unknown, or random strings.
func TestPlanMatchesEngineOnDomain(t *testing.T) {
	perVersion := 600
	if testing.Short() {
		perVersion = 100
	}
	for _, pl := range loadPlans(t) {
		t.Run(pl.rs.Ref(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(pl.rs.Ref()))))
			dom := deriveDomain(pl.rs)
			n := min(dom.Size(), perVersion)
			diffs := 0
			for i := range 2 * n {
				in := domainInput(dom, rng.IntN(dom.Size()))
				if i%2 == 1 {
					mutateInput(rng, pl.rs, in)
				}
				line, err := json.Marshal(in)
				if err != nil {
					t.Fatal(err)
				}
				if diff := samePlanAnswer(pl.rs, pl.p, line); diff != "" {
					if diffs++; diffs <= 5 {
						t.Error(diff)
					}
				}
			}
			if diffs > 0 {
				t.Errorf("%d of %d inputs differ", diffs, 2*n)
			}
		})
	}
}

func domainInput(dom *Domain, i int) map[string]any {
	in := Input{}
	dom.input(i, in, make([]bool, len(dom.Inputs)))
	return in
}

// mutateInput changes one to three inputs: mostly to another value of
// their declared type (a random string, a large or negative int, a list
// of another length, null where allowed), else to a value of a wrong
// type, or leaves one out or adds one not declared.
func mutateInput(rng *rand.Rand, rs *RuleSet, in map[string]any) {
	for range 1 + rng.IntN(3) {
		decl := rs.inputs[rng.IntN(len(rs.inputs))]
		name := decl.Name
		if rng.IntN(3) == 0 {
			in[name] = oddValue(rng)
		} else {
			in[name] = typedValue(rng, decl.typ)
		}
		switch rng.IntN(12) {
		case 0:
			delete(in, name)
		case 1:
			in["no_such_input"] = true
		}
	}
}

var oddStrings = []string{"", "cuda", "rocm 6.0", "PJRT C API\ncuda 12030", "<unknown>", "é", "\u2028", "\x01", "cpu", "gpu", "tpu", "12", "-3", "9223372036854775808", "pinned_host", "kDLCUDA"}

// typedValue is a random value of type t.
func typedValue(rng *rand.Rand, t *valueType) any {
	if t.nullable && rng.IntN(4) == 0 {
		return nil
	}
	switch t.kind {
	case kindString:
		return oddValue(rng)
	case kindInt, kindDeviceType, kindUint:
		return []any{0, 1, 2, 3, 4, 7, 13, 14, 16, 100, -1, -2, int64(1) << 62, int64(-1) << 63}[rng.IntN(14)]
	case kindDouble:
		return []any{0.5, -1.0, 1e300, 2}[rng.IntN(4)]
	case kindBool:
		return rng.IntN(2) == 0
	case kindList:
		out := make([]any, rng.IntN(4))
		for i := range out {
			out[i] = typedValue(rng, t.elem)
		}
		return out
	case kindMap:
		out := map[string]any{}
		for range rng.IntN(3) {
			out[oddStrings[rng.IntN(len(oddStrings))]] = typedValue(rng, t.elem)
		}
		return out
	}
	return oddValue(rng)
}

func oddValue(rng *rand.Rand) any {
	switch rng.IntN(14) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.IntN(5) - 2
	case 3:
		return 1.5
	case 4:
		return json.Number("1e400")
	case 5:
		return []any{rng.IntN(20), rng.IntN(3)}
	case 6:
		return []any{}
	case 7:
		return map[string]any{"a": 1}
	case 8:
		return int64(1) << 62
	case 9:
		return -1 << 63
	case 10:
		return []any{"x", nil}
	}
	s := oddStrings[rng.IntN(len(oddStrings))]
	if rng.IntN(4) == 0 {
		s += oddStrings[rng.IntN(len(oddStrings))]
	}
	return s
}

// FuzzPlanAgainstEngine compares the plan's answer and explanation with
// the engine's on inputs built from each shipped version's domain, broken
// by the fuzzed bytes, and on the fuzzed bytes as a line themselves:
//
//	go test ./engine -run '^$' -fuzz FuzzPlanAgainstEngine -fuzztime 60s
func FuzzPlanAgainstEngine(f *testing.F) {
	pls := loadPlans(f)
	for v := range pls {
		f.Add(uint16(v), uint32(0), []byte{})
		f.Add(uint16(v), uint32(7), []byte{1, 2, 3})
	}
	f.Add(uint16(0), uint32(0), []byte(`{"platform":"gpu","platform_version":"cuda"}`))
	f.Fuzz(func(t *testing.T, version uint16, pick uint32, noise []byte) {
		if len(pls) == 0 {
			t.Skip("no plans")
		}
		pl := pls[int(version)%len(pls)]
		var line []byte
		if len(noise) > 0 && noise[0] == '{' {
			line = noise
		} else {
			dom := deriveDomain(pl.rs)
			in := domainInput(dom, int(pick%uint32(min(dom.Size(), 1<<30))))
			seed := uint64(0)
			for _, c := range noise {
				seed = seed*131 + uint64(c)
			}
			if len(noise) > 0 {
				mutateInput(rand.New(rand.NewPCG(seed, uint64(len(noise)))), pl.rs, in)
			}
			var err error
			if line, err = json.Marshal(in); err != nil {
				t.Skip()
			}
		}
		if diff := samePlanAnswer(pl.rs, pl.p, line); diff != "" {
			t.Error(diff)
		}
		if diff := samePlanExplanation(pl.rs, pl.p, line); diff != "" {
			t.Error(diff)
		}
	})
}
