package engine_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// versionFS returns one embedded version as a rules directory of its own,
// jax/<version>/, in memory, so a test can break one file of it.
func versionFS(t testing.TB, version string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for _, name := range []string{engine.ManifestFile, engine.DeviceTypesFile, engine.RulesFile, engine.TestsFile} {
		data, err := fs.ReadFile(rules.FS, "jax/"+version+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		out["jax/"+version+"/"+name] = &fstest.MapFile{Data: data}
	}
	return out
}

// edit replaces old with new in one file, failing the test when old is not
// there (a test that edits nothing could never fail).
func edit(t *testing.T, fsys fstest.MapFS, file, old, new string) string {
	t.Helper()
	f := fsys[file]
	if !strings.Contains(string(f.Data), old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	text := strings.Replace(string(f.Data), old, new, 1)
	f.Data = []byte(text)
	return text
}

// positionOf is where the first occurrence of s starts in text, as line and
// byte column counted from 1.
func positionOf(t *testing.T, text, s string) (line, col int) {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q is not in the file", s)
	}
	before := text[:i]
	return strings.Count(before, "\n") + 1, i - strings.LastIndex(before, "\n")
}

// TestLoadRefusesBrokenRules breaks one thing in a copy of jax@v3 and
// checks that Load refuses the whole directory with the right code, at the
// right place, with the line of the file.
func TestLoadRefusesBrokenRules(t *testing.T) {
	const rulesFile = "jax/v3/rules.yaml"
	tests := []struct {
		name      string
		file      string
		old, new  string
		code      engine.Code
		at        string // the error points at the first occurrence of this text after the edit
		atColumnZ bool   // the error has a line but no column (YAML syntax errors)
	}{
		{"CEL syntax", rulesFile, "when: shards != 1", "when: shards >> 1", engine.CodeCELSyntax, "> 1", false},
		{"CEL type error", rulesFile, "when: shards != 1", "when: shards > 'one'", engine.CodeCELType, "> 'one'", false},
		{"undeclared name", rulesFile, "when: platform == 'cpu'", "when: platfrom == 'cpu'", engine.CodeCELType, "platfrom", false},
		{"condition is not a bool", rulesFile, "when: shards != 1", "when: shards + 1", engine.CodeNotBool, "shards + 1", false},
		{"message is not a string", rulesFile, `message: "'__dlpack__ only supported for unsharded arrays.'"`, "message: shards", engine.CodeWrongOutcomeType, "shards\n", false},
		{"error inside a quoted expression", rulesFile, `"'Unknown GPU platform for __dlpack__: ' + platform_version"`, `"'Unknown GPU platform for __dlpack__: ' + platform_versoin"`, engine.CodeCELType, "platform_versoin", false},
		{"error inside a folded expression", rulesFile, "memory_kind == 'pinned_host' &&", "memory_kind == 1 &&", engine.CodeCELType, "== 1", false},
		{"unknown device type in a table", rulesFile, "device: kDLROCM,", "device: kDLROCm,", engine.CodeUnknownDevice, "kDLROCm", false},
		{"unknown device type in an outcome", rulesFile, "{type: kDLCPU, id: 0}", "{type: kDLCPUs, id: 0}", engine.CodeCELType, "kDLCPUs", false},
		{"duplicate rule id", rulesFile, "id: tpu-no-hardware-id", "id: gpu-no-hardware-id", engine.CodeDuplicate, "gpu-no-hardware-id\n    when: platform == 'tpu'", false},
		{"unknown key", rulesFile, "  - id: cpu\n", "  - id: cpu\n    whn: true\n", engine.CodeSchema, "whn", false},
		{"rule without outcome", rulesFile, "    device: {type: kDLCPU, id: 0}\n", "", engine.CodeSchema, "id: cpu", false},
		{"bad input type", rulesFile, "type: int?", "type: integer", engine.CodeBadType, "integer", false},
		{"default of the wrong type", rulesFile, "default: 1", "default: one", engine.CodeWrongType, "one\n", false},
		{"a value sees only earlier values", rulesFile, "gpu_matches: gpu_markers", "gpu_matches: gpu_device + gpu_markers", engine.CodeCELType, "gpu_device +", false},
		{"YAML syntax", rulesFile, "rules:\n", "rules:\n  - id: [\n", engine.CodeYAML, "", true},
		{"manifest names another rule set", "jax/v3/manifest.yaml", "name: jax", "name: jaxx", engine.CodeSchema, "jaxx", false},
		{"duplicate device code", "jax/v3/device_types.yaml", "kDLCUDAHost: 3", "kDLCUDAHost: 2", engine.CodeDuplicate, "2\n  kDLOpenCL", false},
		{"test case with an unknown input", "jax/v3/tests.yaml", "{platform: cpu, platform_version: cpu, memory_kind: device, local_hardware_id: 0}", "{platform: cpu, platfrom_version: cpu}", engine.CodeUnknownField, "{platform: cpu, platfrom_version", false},
		{"test case wants an unknown rule", "jax/v3/tests.yaml", "rule: sharded}", "rule: shardd}", engine.CodeSchema, "shardd", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := versionFS(t, "v3")
			text := edit(t, fsys, tt.file, tt.old, tt.new)
			cat, err := engine.Load(fsys, engine.Options{})
			if cat != nil || err == nil {
				t.Fatalf("Load accepted the broken rules")
			}
			var found *engine.Error
			for _, e := range engine.Errors(err) {
				if e.Code == tt.code {
					found = e
					break
				}
			}
			if found == nil {
				t.Fatalf("Load error has no %s:\n%v", tt.code, err)
			}
			if found.Pos == nil || found.Pos.File != "rules/"+tt.file {
				t.Fatalf("error is not in rules/%s:\n%v", tt.file, found)
			}
			if tt.at == "" {
				if found.Pos.Line == 0 {
					t.Errorf("error has no line:\n%v", found)
				}
				return
			}
			line, col := positionOf(t, text, tt.at)
			if found.Pos.Line != line || found.Pos.Column != col {
				t.Errorf("error at %d:%d, want %d:%d (at %q):\n%v", found.Pos.Line, found.Pos.Column, line, col, tt.at, found)
			}
			if want := strings.Split(text, "\n")[line-1]; found.Source != want {
				t.Errorf("error shows source %q, want %q", found.Source, want)
			}
			if !strings.Contains(found.Error(), "\n | "+found.Source+"\n | ") || !strings.HasSuffix(found.Error(), "^") {
				t.Errorf("error does not show the line and a caret:\n%v", found)
			}
		})
	}
}

func TestLoadRefusesMissingFiles(t *testing.T) {
	fsys := versionFS(t, "v3")
	delete(fsys, "jax/v3/tests.yaml")
	_, err := engine.Load(fsys, engine.Options{})
	errs := engine.Errors(err)
	if len(errs) != 1 || errs[0].Code != engine.CodeMissingFile || errs[0].Pos.File != "rules/jax/v3/tests.yaml" {
		t.Fatalf("Load without tests.yaml: got %v, want one %s for rules/jax/v3/tests.yaml", err, engine.CodeMissingFile)
	}
}

// TestLoadReportsEveryError: lint's promise is every error in one run.
func TestLoadReportsEveryError(t *testing.T) {
	fsys := versionFS(t, "v3")
	edit(t, fsys, "jax/v3/rules.yaml", "when: shards != 1", "when: shards >> 1")
	edit(t, fsys, "jax/v3/rules.yaml", "when: platform == 'cpu'", "when: platform")
	edit(t, fsys, "jax/v3/rules.yaml", "device: kDLROCM,", "device: kDLROCm,")
	_, err := engine.Load(fsys, engine.Options{})
	var codes []engine.Code
	for _, e := range engine.Errors(err) {
		codes = append(codes, e.Code)
	}
	if len(codes) != 3 {
		t.Fatalf("got %d errors %v, want 3 (unknown device type, CEL syntax, not bool):\n%v", len(codes), codes, err)
	}
}

func TestLoadRefusesBadVersionNames(t *testing.T) {
	fsys := versionFS(t, "v3")
	for name, f := range fsys {
		fsys[strings.Replace(name, "/v3/", "/latest/", 1)] = f
		delete(fsys, name)
	}
	_, err := engine.Load(fsys, engine.Options{})
	if errs := engine.Errors(err); len(errs) != 1 || errs[0].Code != engine.CodeBadVersion {
		t.Fatalf("Load of jax/latest: got %v, want %s", err, engine.CodeBadVersion)
	}
}

func TestLoadRefusesLargeFiles(t *testing.T) {
	fsys := versionFS(t, "v3")
	fsys["jax/v3/rules.yaml"].Data = append(fsys["jax/v3/rules.yaml"].Data, strings.Repeat("#", engine.MaxRuleFileSize)...)
	_, err := engine.Load(fsys, engine.Options{})
	if !hasCode(err, engine.CodeTooLong) {
		t.Fatalf("Load of a %d-byte rules.yaml: got %v, want %s", engine.MaxRuleFileSize, err, engine.CodeTooLong)
	}
}

func TestLoadEmptyDirectory(t *testing.T) {
	_, err := engine.Load(fstest.MapFS{}, engine.Options{Root: "nowhere"})
	if !hasCode(err, engine.CodeNoRuleSet) {
		t.Fatalf("Load of an empty directory: got %v, want %s", err, engine.CodeNoRuleSet)
	}
}

func hasCode(err error, code engine.Code) bool {
	for _, e := range engine.Errors(err) {
		if e.Code == code {
			return true
		}
	}
	return false
}

func TestCatalogRuleSet(t *testing.T) {
	cat := loadEmbedded(t, engine.Options{})
	tests := []struct {
		ref, want string
		code      engine.Code
	}{
		{"jax", "jax@v3", ""},
		{"jax@v1", "jax@v1", ""},
		{"jax@v2", "jax@v2", ""},
		{"jax@v9", "", engine.CodeNoRuleSet},
		{"nosuchlib", "", engine.CodeNoRuleSet},
	}
	for _, tt := range tests {
		rs, err := cat.RuleSet(tt.ref)
		switch {
		case tt.code != "" && !hasCode(err, tt.code):
			t.Errorf("RuleSet(%q) error %v, want %s", tt.ref, err, tt.code)
		case tt.code == "" && (err != nil || rs.Ref() != tt.want):
			t.Errorf("RuleSet(%q) = %v, %v; want %s", tt.ref, rs, err, tt.want)
		}
	}
}

func TestErrorsOfOtherErrors(t *testing.T) {
	if got := engine.Errors(errors.New("plain")); got != nil {
		t.Errorf("Errors(plain) = %v, want nil", got)
	}
}
