package engine_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// yamlMistakes are edits of rules/jax/v3/rules.yaml that break its YAML,
// each with the text the one error must point at (its first occurrence in
// the edited file).
var yamlMistakes = []struct {
	name, old, new string
	code           engine.Code
	at             string
}{
	{"an unclosed {", "{marker: oneapi, device: kDLOneAPI}", "{marker: oneapi, device: kDLOneAPI", engine.CodeYAML, "{marker: oneapi"},
	{"an unclosed [", "{marker: rocm,   device: kDLROCM,   pinned_host: kDLROCMHost}", "[rocm, kDLROCM, kDLROCMHost", engine.CodeYAML, "[rocm"},
	{"a } too many", "pinned_host: kDLROCMHost}", "pinned_host: kDLROCMHost}}", engine.CodeYAML, "}\n      - {marker: oneapi"},
	{"a key indented too little", "      pinned_host: device_type?", "     pinned_host: device_type?", engine.CodeYAML, "pinned_host: device_type?"},
	{"a key indented too much", "      device: device_type\n", "        device: device_type\n", engine.CodeYAML, "device: device_type\n"},
	{"a tab in the indentation", "      pinned_host: device_type?", "\tpinned_host: device_type?", engine.CodeYAML, "\tpinned_host"},
	{"a duplicate key", "      device: device_type\n", "      device: device_type\n      device: string\n", engine.CodeDuplicate, "device: string"},
	{"a stray ':'", "      marker: string", "      marker: string: or not", engine.CodeYAML, ": or not"},
	{"an alias with no anchor", "    default: 1\n", "    default: *one\n", engine.CodeYAML, "*one"},
}

// Each YAML mistake is one error, at the line and column of the mistake,
// with that line and a caret: no second error at the line go-yaml names,
// and no "import jax@v3 does not load" from the exchange versions that
// import the broken one.
func TestYAMLErrorsPointAtTheMistake(t *testing.T) {
	for _, tc := range yamlMistakes {
		t.Run(tc.name, func(t *testing.T) {
			fsys := edited(t, "jax/v3/rules.yaml", tc.old, tc.new)
			checkOneError(t, fsys, "jax/v3/rules.yaml", tc.code, tc.at)
		})
	}
}

// Small files whose mistakes are near or inside values that go on over
// lines, which a prefix of the file does not parse either.
func TestYAMLErrorsInValuesOverLines(t *testing.T) {
	for _, tc := range []struct {
		name, text, at string
	}{
		{"unclosed { after a list over lines", "inputs:\n  a: [1,\n    2]\n  b: {type: int\n  c: 1\n", "{type: int"},
		{"unclosed { around a closed [", "inputs:\n  b: {x: [1,\n      2], y: 3\n  c: 1\n", "{x: ["},
		{"unclosed [ at the end", "inputs:\n  a: {type: int}\n  b: [1, 2", "[1, 2"},
		{"] for {", "inputs:\n  b: {x: 1]\n", "{x: 1]"},
		{"unclosed quote", "inputs:\n  a: {type: int}\n  b: 'one\n", "'one"},
		{"stray : on the first line", "inputs: a: b\n", ": b"},
		{"@ starts a value", "inputs:\n  a: @x\n", "@x"},
		{"a tab after spaces", "inputs:\n  a:\n    type: int\n  \tdoc: x\n", "\tdoc"},
		{"a comment with a { does not count", "inputs:\n  a: {type: int} # {\n  b:\n   - 1\n  - 2\n", "- 2"},
		{"CRLF line ends", "inputs:\r\n  a: {type: int\r\nrules: []\r\n", "{type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := versionFS(t, "v3")
			fsys["jax/v3/rules.yaml"] = &fstest.MapFile{Data: []byte(tc.text)}
			checkOneError(t, fsys, "jax/v3/rules.yaml", engine.CodeYAML, tc.at)
		})
	}
}

// checkOneError loads fsys and wants exactly one error, of code, in file,
// at the first occurrence of at, showing that line and a caret under it.
// The files fsys shares with the embedded rules come from embeddedCache;
// a Cache keeps nothing that failed, so the mistake is found afresh.
func checkOneError(t *testing.T, fsys fstest.MapFS, file string, code engine.Code, at string) {
	t.Helper()
	_, err := engine.Load(fsys, engine.Options{Cache: embeddedCache})
	list := engine.Errors(err)
	if len(list) != 1 {
		t.Fatalf("Load: %d errors, want 1:\n%v", len(list), err)
	}
	e := list[0]
	text := strings.ReplaceAll(string(fsys[file].Data), "\r\n", "\n")
	line, col := positionOf(t, text, at)
	if e.Code != code || e.Pos == nil || e.Pos.File != "rules/"+file || e.Pos.Line != line || e.Pos.Column != col {
		t.Fatalf("Load: %s at %v, want %s at rules/%s:%d:%d (%q):\n%v", e.Code, e.Pos, code, file, line, col, at, e)
	}
	if want := strings.Split(text, "\n")[line-1]; e.Source != want {
		t.Errorf("error shows source %q, want %q", e.Source, want)
	}
	if !strings.HasSuffix(e.Error(), "\n | "+e.Source+"\n | "+strings.Repeat(".", col-1)+"^") && !strings.Contains(e.Source, "\t") {
		t.Errorf("error does not show the line and a caret under column %d:\n%v", col, e)
	}
}

// A mistake in jax@v3 is one error, in jax@v3: the exchange versions that
// import it add no "import jax@v3 does not load", whether the whole
// directory is loaded or only a version that imports it.
func TestBrokenImportIsOneError(t *testing.T) {
	fsys := edited(t, "jax/v3/rules.yaml", "when: platform == 'cpu'", "when: platfrom == 'cpu'")
	for _, sel := range [][]string{nil, {"exchange@v2"}} {
		_, err := engine.Load(fsys, engine.Options{Select: sel})
		list := engine.Errors(err)
		if len(list) != 1 || list[0].Code != engine.CodeCELType || list[0].Pos == nil || list[0].Pos.File != "rules/jax/v3/rules.yaml" {
			t.Errorf("Load(Select: %v): %d errors, want the one cel_type in rules/jax/v3/rules.yaml:\n%v", sel, len(list), err)
		}
	}
}
