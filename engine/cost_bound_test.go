package engine

import (
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
