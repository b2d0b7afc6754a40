package engine

import (
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
)

// TestStringGrowthBoundsHold checks the proof that stringGrowth gives at
// load: for each function it bounds, the size it estimates on inputs of
// MaxStringLen and lists of MaxListLen is at least the size the function
// really builds on the worst such inputs.
func TestStringGrowthBoundsHold(t *testing.T) {
	str, _ := parseType("string", false)
	list, _ := parseType("list(string)", false)
	sizes := sizeBounds{inputs: map[string]*valueType{"s": str, "l": list}, tables: map[string]tableSize{}}
	env, err := cel.NewEnv(ext.Strings(ext.StringsVersion(5)),
		cel.Variable("s", cel.StringType), cel.Variable("l", cel.ListType(cel.StringType)))
	if err != nil {
		t.Fatal(err)
	}
	max := func(r string) string { return strings.Repeat(r, MaxStringLen/utf8.RuneLen([]rune(r)[0])) }
	tests := []struct {
		expr string
		s    string // l is MaxListLen copies of s
	}{
		{"s.replace('', s)", max("a")},
		{"s.replace('a', s)", max("a")},
		{"s.replace('a', s, 5)", max("a")},
		{"l.join()", max("a")},
		{"l.join(s)", max("a")},
		{"s.split('').join(s)", max("a")},
		{"strings.quote(s)", max(`"`)},
		{"strings.quote(s)", max("\n")},
		{"'%x'.format([s])", max("😀")},
		{"'%s %s'.format([s, s])", max("a")},
		{"'%.100f %e'.format([1.7976931348623157e308, -1.0e-300])", ""},
		{"'%b %o %x %d'.format([-9223372036854775807, -9223372036854775807, -9223372036854775807, -9223372036854775807])", ""},
	}
	for _, tt := range tests {
		ast, iss := env.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		growth := &stringGrowth{limit: 0, checked: ast.NativeRep()} // records every call
		if _, err := env.EstimateCost(ast, &sizes, growth.options()...); err != nil {
			t.Fatal(err)
		}
		if len(growth.over) == 0 {
			t.Fatalf("%s: no call bounded", tt.expr)
		}
		bound := growth.over[len(growth.over)-1].size // the outermost call is costed last
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		l := make([]string, MaxListLen)
		for i := range l {
			l[i] = tt.s
		}
		out, _, err := prg.Eval(map[string]any{"s": tt.s, "l": l})
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		got := uint64(utf8.RuneCountInString(out.Value().(string)))
		t.Logf("%s: %d <= %d", tt.expr, got, bound)
		if got > bound {
			t.Errorf("%s built %d code points; the bound at load is %d", tt.expr, got, bound)
		}
	}
}

// TestRegexInstsHold checks regexCost's count of a pattern's program: it
// is cel-go's own (types.RegexProgramSize), the bound it refuses a
// pattern by before compiling it is never below the count, and the lower
// bound it refuses a call by before compiling is never above it.
func TestRegexInstsHold(t *testing.T) {
	for _, p := range []string{
		"b", "^cuda 1[2-9]", `cuda [0-9]+\.[0-9]+`, ".{0,1000}b", "a{3,}", "a{2,5}", "(?i)CUDA|rocm|oneapi",
		`\pL+`, "(?:" + strings.Repeat(".", 30) + "){30}", "((a|b)*c)?d{0,7}", "(?:(?:a{0,10}){0,10}){0,10}", "",
		"(a*)*", "(?:a*)*b", "(?:a*)+?", "x{0}", "(?:)", "()", "(?:|a)", "[^a]", `\b^$`, "(?:a*){5}", "(?:a+){2,}",
		"(a){3}(b)?", "(?s).{2}", "abc|abd|abe", "[a-c]{4,6}?", "(?:(?:a|b){3}){0,}", "(?:(){0,5}){4}",
	} {
		r := &regexCost{limit: maxUint64}
		got, err := r.count(p, 0)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		want, err := types.RegexProgramSize(p)
		if err != nil {
			t.Fatal(err)
		}
		re, _ := syntax.Parse(p, syntax.Perl)
		bound, least := programBound(re), programLeast(re)
		t.Logf("%.40q: %d instructions, at least %d, at most %d", p, got, least, bound)
		if got != uint64(want) || bound < got || least > got {
			t.Errorf("%q: counted %d, cel-go counts %d; bounds %d to %d", p, got, want, least, bound)
		}
	}
}

// TestRegexBoundsHoldOnRandomPatterns checks the two bounds of
// TestRegexInstsHold on patterns built at random (a fixed seed) from
// literals, classes, empty widths, captures, alternations and every
// kind of repeat, nested.
func TestRegexBoundsHoldOnRandomPatterns(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 4))
	atoms := []string{"a", "bc", ".", "[a-c]", `\d`, "^", "$", `\b`, `\B`, "(?:)", "(?i)x", "[^a]", `\pL`}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(4) == 0 {
			return atoms[rng.IntN(len(atoms))]
		}
		switch rng.IntN(9) {
		case 0:
			return gen(depth-1) + gen(depth-1)
		case 1:
			return gen(depth-1) + "|" + gen(depth-1)
		case 2:
			return "(" + gen(depth-1) + ")"
		case 3:
			return "(?:" + gen(depth-1) + ")*"
		case 4:
			return "(?:" + gen(depth-1) + ")+?"
		case 5:
			return "(?:" + gen(depth-1) + ")?"
		case 6:
			return fmt.Sprintf("(?:%s){%d}", gen(depth-1), rng.IntN(4))
		case 7:
			return fmt.Sprintf("(?:%s){%d,}", gen(depth-1), rng.IntN(4))
		}
		lo := rng.IntN(4)
		return fmt.Sprintf("(?:%s){%d,%d}", gen(depth-1), lo, lo+rng.IntN(4))
	}
	for range 3000 {
		p := gen(5)
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			continue // a repeat of nothing the parser refuses
		}
		want, err := types.RegexProgramSize(p)
		if err != nil {
			t.Fatal(err)
		}
		if least, bound := programLeast(re), programBound(re); least > uint64(want) || bound < uint64(want) {
			t.Errorf("%q: %d instructions, bounds %d to %d", p, want, least, bound)
		}
	}
}
