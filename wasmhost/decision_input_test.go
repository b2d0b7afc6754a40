package wasmhost

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// The decision module's input reader (wasm/decision/src/jsonline.c,
// input.c) against the engine's (encoding/json, then the declared
// inputs' checks): a rule set written to declare every kind of input,
// with defaults of each, read by its rules, and lines that reach every
// message and offset the reader can give. The shipped rule sets declare
// no dyn or map input, and their tests are valid lines.

// kindsRules declares an input of every kind, nullable ones, a default
// of each kind (a map's, a dyn's), and rules and values that read each,
// so that the reader's conversions show in the decision's bytes: the
// error rule's message writes every scalar with string().
const kindsRules = `inputs:
  s: {type: string}
  i: {type: int, default: 7}
  u: {type: uint, default: 3}
  d: {type: double, default: 0.25}
  b: {type: bool, default: false}
  a: {type: dyn, default: null}
  y: {type: dyn, default: {k: [1, "x", 2.5, true, null]}}
  li: {type: list(int), default: [1, 2]}
  ls: {type: list(string), default: ["a", "é"]}
  mi: {type: "map(string, int)", default: {k: 1, j: -2}}
  md: {type: "map(string, dyn)", default: {}}
  ni: {type: "int?", default: null}
  nu: {type: "uint?", default: null}
  nd: {type: "double?", default: null}
  ns: {type: "string?", default: null}
  nl: {type: "list(string)?", default: null}
values:
  vs: s + "!"
  vi: i * 2
  vu: u + 1u
  vd: d * 2.0
  vb: "!b"
  va: a
  vy: y
  vli: li
  vls: ls
  vmi: mi
  vmd: md
  vni: "ni == null ? -1 : ni"
  vnl: "nl == null ? [] : nl"
  dyn_int: "a == 1"
  dyn_str: "a == 'x'"
  dyn_in: "'k' in md ? md['k'] : null"
rules:
  - id: cpu
    when: s == 'cpu'
    device: {type: kDLCPU, id: 0}
  - id: dyn-one
    when: a == 1 || a == 1.0 || a == 'one'
    device: {type: kDLCPU, id: 0}
  - id: show
    when: "true"
    error:
      type: ValueError
      message: >-
        's=' + s + ' i=' + string(i) + ' u=' + string(u) + ' d=' + string(d) + ' b=' + string(b) +
        ' li=' + string(li.size()) + ':' + (li.size() > 0 ? string(li[0]) : '-') +
        ' ls=' + (ls.size() > 0 ? ls[0] + ':' + string(ls.size()) : '-') +
        ' mi=' + string(mi.size()) + ('k' in mi ? ':' + string(mi['k']) : '') +
        ' md=' + string(md.size()) +
        ' ni=' + (ni == null ? 'null' : string(ni)) + ' nu=' + (nu == null ? 'null' : string(nu)) +
        ' nd=' + (nd == null ? 'null' : string(nd)) + ' ns=' + (ns == null ? 'null' : ns) +
        ' nl=' + (nl == null ? 'null' : string(nl.size()))
`

// kindsDecider is kindsRules natively and in the module.
func kindsDecider(t *testing.T) (*engine.RuleSet, *Decider) {
	t.Helper()
	return explainDecider(t, "kinds@v1", map[string]string{
		"kinds/v1/rules.yaml": kindsRules,
		"kinds/v1/tests.yaml": "cases:\n  - {name: cpu, input: {s: cpu}, want: {device_type: kDLCPU, rule: cpu}}\n",
	})
}

// kindsReader is a Decider of kindsRules that starts a new instance
// after a trap, which leaves an instance unusable (ABI.md, "Start-up"):
// one trapping line does not hide the lines after it.
type kindsReader struct {
	rs *engine.RuleSet
	d  *Decider
}

func newKindsReader(t *testing.T) *kindsReader {
	rs, d := kindsDecider(t)
	return &kindsReader{rs: rs, d: d}
}

// engineAnswer is what a host answers for line natively: a line over
// contract.MaxLineLen is too_long before the engine reads it (as
// contract.Answerer), else engine.RuleSet.ResolveJSON's bytes or error.
func engineAnswer(rs *engine.RuleSet, line []byte) ([]byte, contract.Status) {
	if len(line) > contract.MaxLineLen {
		return contract.ErrorJSON(contract.TooLong()), contract.StatusInputError
	}
	out, err := rs.ResolveJSON(context.Background(), line)
	if err != nil {
		return contract.ErrorJSON(err), contract.Classify(err)
	}
	return out, contract.StatusOK
}

// same decides line with the module and the engine and reports where
// their bytes or statuses differ, the line cut short; explain compares
// the explanations too.
func (r *kindsReader) same(t *testing.T, line []byte, explain bool) {
	t.Helper()
	ctx := context.Background()
	rs := r.rs
	defer func() {
		if t.Failed() {
			_, r.d = kindsDecider(t) // the failure may have been a trap
		}
	}()
	want, wantStatus := engineAnswer(rs, line)
	got, status, err := r.d.Decide(ctx, line)
	if err != nil {
		t.Errorf("Decide(%.200q) (%d bytes) = %.300v\nwant %s %.600s", line, len(line), err, wantStatus, want)
		return
	}
	if status != wantStatus || !bytes.Equal(got, want) {
		t.Errorf("Decide(%.200q) (%d bytes)\n got %s %.600s\nwant %s %.600s", line, len(line), status, got, wantStatus, want)
		return
	}
	if !explain || len(line) > contract.MaxLineLen {
		return
	}
	wantX, werr := rs.ExplainJSON(ctx, line)
	gotX, gerr := r.d.ExplainJSON(ctx, line)
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil || !bytes.Equal(contract.ErrorJSON(werr), contract.ErrorJSON(gerr)) {
			t.Errorf("ExplainJSON(%.200q) (%d bytes) = %.300v\nwant the error %v, or %.300s", line, len(line), gerr, werr, wantX)
		}
		return
	}
	if !bytes.Equal(gotX, wantX) {
		t.Errorf("ExplainJSON(%.200q)\n got %.600s\nwant %.600s", line, gotX, wantX)
	}
}

// readerLines are plan/jsonline_test.go's jsonLines, the Go reader's
// own cases against encoding/json, copied: whole lines, and each as the
// dyn input a of a valid line.
var readerLines = []string{
	``, `   `, "\t\n", `{}`, ` {} `, `{"a":1}`, `{"a":1,"b":[1,2.5,-3e2,{"c":null}],"d":true,"e":false}`,
	`{"a":1,"a":2}`, `{"a":{"x":1,"x":2}}`, `{"a":1,"b":2,"a":3,"b":4}`, `{"\u0061":1,"a":2}`,
	`[]`, `[1]`, `1`, `-0`, `1.5`, `1e400`, `9007199254740993`, `1.0`, `"s"`, `true`, `null`,
	`{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `[`, `"abc`, `tru`, `nul`, `-`, `1.`, `1e`, `1e+`,
	`{a}`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":1}}`, `{"a":1}]`, `{"a":1} {}`, `{"a":1} []`,
	`{"a":1} 1`, `{"a":1} 1x`, `{"a":1} "s"`, `{"a":1} "s`, `{"a":1} tru`, `{"a":1} x`, `{"a":1} :`,
	`{"a":1} ,`, `1x`, `"a"b`, `truex`, `nulx`, `[1,]`, `{"a":1,}`, `{,}`, `[,]`, `01`, `-01`, `.5`,
	`+1`, `1.e5`, `{"a":"\x"}`, `{"a":"\u12G4"}`, "{\"a\":\"\x01\"}", `{"a":"\ud800"}`,
	`{"a":"\ud800\udc00"}`, `{"a":"\ud800\u0041"}`, `{"a":"\udc00\ud800"}`, `{"a":"\ud800\\"}`,
	`{"a":"\/\b\f\n\r\t\"\\"}`, `{"a":"é"}`, `{é}`, `[é]`, `{"a":'x'}`, `{"a":1}x`, "{\"a\":1}\n\n",
	strings.Repeat("[", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"a":1} ` + strings.Repeat(" ", 600) + `{`, strings.Repeat(" ", 700) + `{"a":1} x`,
	`{"a":1}` + strings.Repeat(" ", 1000) + `"` + strings.Repeat("x", 2000) + `"`,
	`{"a":"` + strings.Repeat("y", 3000) + `"} 7`,
	manyKeys(40, 7, 31), manyKeys(13, 0, 12), `{"o":` + manyKeys(30, 3, 4) + `}`,
	// plan/json_test.go's strings, which an error's JSON escapes.
	`"a<b>&c"`, `"\u0001\n\t"`, `"bad \u2028 \u2029 é"`, `"  when: a \u0026\u0026 b"`,
}

// manyKeys is an object of n keys in reverse order, key a given again
// at b (plan/jsonline_test.go's).
func manyKeys(n, a, b int) string {
	var s strings.Builder
	s.WriteString("{")
	for i := n - 1; i >= 0; i-- {
		k := i
		if i == b {
			k = a
		}
		fmt.Fprintf(&s, `"k%03d":%d,`, k, i)
	}
	return strings.TrimSuffix(s.String(), ",") + "}"
}

// kindsLines are lines written for kindsRules: each input with a value
// of each JSON type, numbers at the edges of int64, uint64 and double,
// every escape, lone surrogates, bytes that are not UTF-8, strings,
// lists and maps at their limits and one past, duplicate keys, unknown
// and missing fields, nulls, trailing data, nesting and the line limit.
func kindsLines() []string {
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	// Each input with a value of every JSON type.
	wrong := []string{`null`, `true`, `0`, `-1`, `1.5`, `"x"`, `""`, `[]`, `[1]`, `["x"]`, `{}`, `{"k":1}`, `{"k":"x"}`, `[null]`, `{"k":null}`, `[[1]]`, `{"k":{"j":1}}`}
	for _, in := range []string{"s", "i", "u", "d", "b", "a", "y", "li", "ls", "mi", "md", "ni", "nu", "nd", "ns", "nl"} {
		for _, v := range wrong {
			if in == "s" {
				add(`{"s":` + v + `}`)
			} else {
				add(`{"s":"x","` + in + `":` + v + `}`)
			}
		}
	}
	// Numbers at the edges.
	numbers := []string{`0`, `-0`, `0.0`, `-0.0`, `1e2`, `1E2`, `1e+2`, `100e-2`, `1.5`, `1.0`, `10.0e-1`,
		`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
		`18446744073709551615`, `18446744073709551616`, `-18446744073709551615`, `99999999999999999999999`,
		`9223372036854775807.0`, `9.223372036854775807e18`, `922337203685477580.7e1`,
		`1e400`, `-1e400`, `1e-400`, `-1e-400`, `4.9e-324`, `5e-324`, `2.4e-324`, `2.5e-324`, `2.4703282292062328e-324`,
		`2.2250738585072011e-308`, `2.2250738585072014e-308`, `1.7976931348623157e308`, `1.7976931348623158e308`,
		`1.7976931348623159e308`, `1e308`, `1e309`, `0.1`, `0.30000000000000004`, `123456789012345678901234567890`,
		`0.` + strings.Repeat("0", 400) + `1`, `1` + strings.Repeat("0", 400), `1.` + strings.Repeat("9", 900),
		`1e99999999999999999999`, `1e-99999999999999999999`, `0e999`, `-0e-999`, `7e0`, `1e-0`,
	}
	for _, n := range numbers {
		for _, in := range []string{"i", "u", "d", "a", "ni", "nu", "nd"} {
			add(`{"s":"x","` + in + `":` + n + `}`)
		}
		add(`{"s":"x","li":[`+n+`]}`, `{"s":"x","mi":{"k":`+n+`}}`, `{"s":"x","md":{"k":`+n+`}}`, `{"s":"x","y":[`+n+`,`+n+`]}`)
	}
	// Strings: every escape, surrogates, bytes that are not UTF-8, raw
	// controls.
	strs := []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0000`, `\u001f`, `\u0020`, `\u007f`, `\u00e9`, `\u00E9`,
		`\u2028`, `\u2029`, `\ufeff`, `\uffff`, `\ufffd`, `\ud800`, `\udbff`, `\udc00`, `\udfff`, `\ud800\ud800`, `\ud800x`,
		`\ud800\u`, `\ud800\udc0`, `\ud83d\ude00`, `\uD83D\uDE00`, `\udbff\udfff`, `\ud800\n`, `x\ud800`, `\ud800\udc00\ud800`,
		`<&>`, `\u003c\u0026\u003e`, `é`, "\U0001F600", "\x7f", `\a`, `\'`, `\U0001`, `\u`, `\u12`, `\`,
		"\x00", "\x1f", "\t", "\n", "\xff", "\xfe", "\xc0\x80", "\xc3", "\xc3(", "\xed\xa0\x80", "\xed\xbf\xbf", "\xef\xbf\xbf",
		"\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xe2\x82", "\xe2\x82\xac", "\x80", "a\xffb",
	}
	for _, e := range strs {
		for _, in := range []string{"s", "a", "ns"} {
			if in == "s" {
				add(`{"s":"` + e + `"}`)
			} else {
				add(`{"s":"x","` + in + `":"` + e + `"}`)
			}
		}
		add(`{"s":"x","ls":["`+e+`"]}`, `{"s":"x","mi":{"`+e+`":1}}`, `{"s":"x","md":{"k":"`+e+`"}}`,
			`{"s":"x","y":{"`+e+`":["`+e+`"]}}`, `{"s":"x","`+e+`":1}`, `{"s":"x"}`+e, `{"s":"x"} "`+e+`"`)
	}
	// Strings, lists and maps at their limits and one past.
	limit := engine.MaxStringLen
	for _, n := range []int{limit - 1, limit, limit + 1} {
		x := strings.Repeat("x", n)
		add(`{"s":"`+x+`"}`, `{"s":"x","a":"`+x+`"}`, `{"s":"x","ls":["`+x+`"]}`, `{"s":"x","mi":{"`+x+`":1}}`,
			`{"s":"x","md":{"k":"`+x+`"}}`, `{"s":"x","y":[[{"k":"`+x+`"}]]}`, `{"s":"x","ns":"`+x+`"}`, `{"s":"x","`+x+`":1}`)
	}
	add(`{"s":"`+strings.Repeat("x", limit-1)+`é"}`, `{"s":"`+strings.Repeat("x", limit-2)+`é"}`,
		`{"s":"`+strings.Repeat(`\n`, limit)+`"}`, `{"s":"`+strings.Repeat(`\n`, limit+1)+`"}`,
		`{"s":"`+strings.Repeat(`\u00e9`, limit/2)+`"}`, `{"s":"`+strings.Repeat(`\u00e9`, limit/2)+`x"}`,
		`{"s":"`+strings.Repeat(`\ud800`, limit/3)+`"}`, `{"s":"`+strings.Repeat(`\ud800`, limit/3+1)+`"}`,
		`{"s":"x","ls":["`+strings.Repeat("x", limit+1)+`","`+strings.Repeat("\xff", 3)+`"]}`)
	for _, n := range []int{engine.MaxListLen - 1, engine.MaxListLen, engine.MaxListLen + 1} {
		ints := strings.TrimSuffix(strings.Repeat("1,", n), ",")
		strs := strings.TrimSuffix(strings.Repeat(`"x",`, n), ",")
		var keys strings.Builder
		for k := range n {
			fmt.Fprintf(&keys, `"k%d":%d,`, k, k)
		}
		obj := "{" + strings.TrimSuffix(keys.String(), ",") + "}"
		add(`{"s":"x","li":[`+ints+`]}`, `{"s":"x","ls":[`+strs+`]}`, `{"s":"x","mi":`+obj+`}`, `{"s":"x","md":`+obj+`}`,
			`{"s":"x","a":[`+ints+`]}`, `{"s":"x","a":`+obj+`}`, `{"s":"x","y":{"k":[`+ints+`]}}`, `{"s":"x","nl":[`+strs+`]}`,
			`{"s":"x","li":[`+ints+`,"x"]}`, `{"s":"x","y":[[`+ints+`],[`+ints+`]]}`)
	}
	// Duplicate keys, unknown and missing fields, nulls, trailing data.
	add(`{"s":"x","s":"y"}`, `{"s":"x","i":1,"i":1}`, `{"s":"x","mi":{"k":1,"k":2}}`, `{"s":"x","md":{"k":{"j":1,"j":2}}}`,
		`{"s":"x","a":[{"k":1,"k":1}]}`, `{"s":"x","y":{"k":1},"y":{"k":1}}`, `{"s":"x","\u0073":"y"}`, `{"s":"x","i":"1","i":2}`,
		`{"s":"x","nope":1}`, `{"nope":1}`, `{"s":"x","nope":1,"zzz":2}`, `{"zzz":1,"s":"x","nope":2}`, `{"S":"x"}`, `{"s ":"x"}`,
		`{"i":1}`, `{}`, `{"s":null}`, `{"s":"x","i":null}`, `{"s":"x","li":null}`, `{"s":"x","li":[null]}`, `{"s":"x","mi":null}`,
		`{"s":"x","mi":{"k":null}}`, `{"s":"x","ls":[1]}`, `{"s":"x","ni":null,"nu":null,"nd":null,"ns":null,"nl":null}`,
		`{"s":"x","ni":-5,"nu":5,"nd":-0.5,"ns":"n","nl":["p","q"]}`, `{"s":"cpu"}`, `{"s":"x","a":1}`, `{"s":"x","a":"one"}`,
		`{"s":"x","a":1.0}`, `{"s":"x","a":true}`, `{"s":"x","md":{"k":[1,{"j":"x"}]}}`, `{"s":"x","u":-0}`, `{"s":"x","u":0.0}`,
		`{"s":"x"} `, `{"s":"x"}`+"\n", `{"s":"x"}`+"\r\n", `{"s":"x"}`+"\t", `{"s":"x"} {"s":"x"}`, `{"s":"x"}{`, `{"s":"x"}}`,
		`{"s":"x"} null`, `{"s":"x"} 1e400`, `{"s":"x"} -`, `{"s":"x"} "\ud800`, `{"s":"x"}`+"\x00", `{"s":"x"}`+"\xff",
		"\xef\xbb\xbf"+`{"s":"x"}`, "\x00", "\xff", `{"s":"x",}`, `{"s":"x" , "i" : 1 }`, " \t\r\n{\"s\":\"x\"}\r\n\t ")
	// Nesting at encoding/json's limit and one past, in a dyn input.
	for _, n := range []int{9998, 9999, 10000, 10001} {
		add(`{"s":"x","a":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`}`,
			`{"s":"x","y":`+strings.Repeat(`{"k":`, n)+"1"+strings.Repeat("}", n)+`}`,
			`{"s":"x","md":{"k":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`}}`,
			strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n),
			`{"s":"x","a":`+strings.Repeat("[", n))
	}
	// The line limit: a valid line of contract.MaxLineLen bytes, padded
	// with spaces, and one byte more.
	for _, n := range []int{contract.MaxLineLen - 1, contract.MaxLineLen, contract.MaxLineLen + 1} {
		head := `{"s":"x"`
		add(head + strings.Repeat(" ", n-len(head)-1) + "}")
		head = `{"s":"x","a":"`
		add(head + strings.Repeat("x", n-len(head)-2) + `"}`)
	}
	return lines
}

// TestDecisionReadsInputsAsEngine: on a rule set declaring every kind of
// input, the module answers the Go reader's own lines, alone and as a
// dyn input, and lines at every edge of the reader and the checks, with
// the engine's bytes and status (explanations for every seventh).
func TestDecisionReadsInputsAsEngine(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	r := newKindsReader(t)
	var lines []string
	for _, l := range readerLines {
		lines = append(lines, l, `{"s":"x","a":`+l+`}`, `{"s":"x","md":{"k":`+l+`}}`)
	}
	lines = append(lines, kindsLines()...)
	for i, line := range lines {
		r.same(t, []byte(line), i%7 == 0)
	}
}

// TestDecisionExplainsDeepInputs: a dyn input nested as deep as
// encoding/json reads (10,000 levels, the line's object one of them) is
// explained with the engine's bytes, as it is decided: every level of it
// shows in the explanation's values.
func TestDecisionExplainsDeepInputs(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	r := newKindsReader(t)
	for _, n := range []int{1000, 5000, 5460, 5461, 8000, 9999} {
		r.same(t, []byte(`{"s":"x","a":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`}`), true)
		r.same(t, []byte(`{"s":"x","y":`+strings.Repeat(`{"k":`, n)+"1"+strings.Repeat("}", n)+`}`), true)
		r.same(t, []byte(`{"s":"x","md":{"k":`+strings.Repeat("[", n-1)+strings.Repeat("]", n-1)+`}}`), true)
	}
}

// mutate changes line by one to three byte-wise edits: insert, delete or
// replace a byte, or repeat a span, the bytes drawn mostly from JSON's
// own.
func mutate(rng *rand.Rand, line []byte) []byte {
	const alphabet = "{}[]:,\" \\-+.eE0123456789tfnrulasxu\t\n\x00\x1f\x7f\xc3\xa9\xff"
	out := append([]byte(nil), line...)
	pick := func() byte {
		if rng.IntN(8) == 0 {
			return byte(rng.IntN(256))
		}
		return alphabet[rng.IntN(len(alphabet))]
	}
	for range 1 + rng.IntN(3) {
		at := rng.IntN(len(out) + 1)
		switch rng.IntN(4) {
		case 0:
			out = append(out[:at], append([]byte{pick()}, out[at:]...)...)
		case 1:
			if at < len(out) {
				out = append(out[:at], out[at+1:]...)
			}
		case 2:
			if at < len(out) {
				out[at] = pick()
			}
		default:
			end := min(len(out), at+1+rng.IntN(12))
			span := append([]byte(nil), out[at:end]...)
			out = append(out[:end], append(span, out[end:]...)...)
		}
	}
	return out
}

// TestDecisionReadsMutatedLinesAsEngine: valid lines of every input
// kind, changed byte-wise under fixed seeds, get from the module the
// engine's answers: encoding/json's messages and offsets for the lines
// they break, the checks' messages for the lines they do not.
func TestDecisionReadsMutatedLinesAsEngine(t *testing.T) {
	testenv.Short(t, "the decision module in wazero")
	r := newKindsReader(t)
	valid := []string{
		`{"s":"cpu"}`,
		`{"s":"x","i":-12,"u":18446744073709551615,"d":-1.5e-3,"b":true}`,
		`{"s":"x","a":[1,"x",{"k":[true,null,2.5]}],"y":{"k":"v","j":[{"i":1}]}}`,
		`{"s":"x","li":[1,-2,3],"ls":["a","\u00e9","\ud83d\ude00"],"mi":{"k":1,"j":2},"md":{"k":[1,{"j":"x"}]}}`,
		`{"s":"x","ni":9223372036854775807,"nu":0,"nd":1e308,"ns":"\"\\\/\b\f\n\r\t","nl":["p"]}`,
		`{"s":"a<b>&c é \u2028","a":"one"}`,
		` {"s" : "x" , "d" : 0.000001 , "a" : [ [ ] , { } ] } `,
	}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 37))
		for k := range 1500 {
			line := mutate(rng, []byte(valid[rng.IntN(len(valid))]))
			r.same(t, line, k%16 == 0)
			if t.Failed() {
				return // the first line that differs says enough
			}
		}
	}
}
