package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// importing returns jax/v3 and a version ex/v1 that imports it, with the
// given rules and tests; ex/v1 has no device_types.yaml of its own.
func importing(t *testing.T, rulesYAML, testsYAML string) fstest.MapFS {
	t.Helper()
	fsys := versionFS(t, "v3")
	fsys["ex/v1/manifest.yaml"] = &fstest.MapFile{Data: []byte("name: ex\nversion: v1\ndescription: test\nmirrors: {project: none}\n")}
	fsys["ex/v1/rules.yaml"] = &fstest.MapFile{Data: []byte(rulesYAML)}
	fsys["ex/v1/tests.yaml"] = &fstest.MapFile{Data: []byte(testsYAML)}
	return fsys
}

const exRules = `imports:
  jax: jax@v3
inputs:
  want_host: {type: bool, default: false}
rules:
  - id: host
    when: want_host || jax.error != null
    device: {type: kDLCPU, id: 0}
    copy: jax.error != null || jax.device_type != kDLCPU
  - id: same
    when: "true"
    device:
      type: jax.device_type
      id: jax.device_id
`

const exTests = `cases:
  - name: cuda stays
    input: {platform: gpu, platform_version: cuda 12030, local_hardware_id: 1}
    want: {device_type: kDLCUDA, device_id: 1, copy: false, rule: same}
`

func TestImportSeesTheImportedDecision(t *testing.T) {
	cat, err := engine.Load(importing(t, exRules, exTests), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cat.RuleSet("ex")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range rs.Inputs() {
		names = append(names, in.Name)
	}
	if got, want := strings.Join(names, ","), "platform,platform_version,memory_kind,local_hardware_id,shards,want_host"; got != want {
		t.Errorf("inputs %s, want %s (the import's first)", got, want)
	}
	if len(rs.DeviceTypes()) == 0 {
		t.Error("no device types inherited from jax@v3")
	}
	for _, tc := range []struct {
		in   engine.Input
		want string
	}{
		{engine.Input{"platform": "gpu", "platform_version": "rocm 60200", "local_hardware_id": 2},
			`{"device_type":"kDLROCM","device_type_code":10,"device_id":2,"rule":"same","ruleset":"ex@v1"}`},
		{engine.Input{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0},
			`{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"copy":true,"rule":"host","ruleset":"ex@v1"}`},
		{engine.Input{"platform": "cpu", "platform_version": "cpu", "want_host": true},
			`{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"rule":"host","ruleset":"ex@v1"}`},
	} {
		d, err := rs.Resolve(context.Background(), tc.in)
		if err != nil || d.String() != tc.want {
			t.Errorf("Resolve(%v) = %s, %v; want %s", tc.in, d, err, tc.want)
		}
	}
	for _, r := range rs.Test(context.Background()) {
		if !r.Pass {
			t.Errorf("case %s: got %s, want %s (%v)", r.Name, r.Got, r.Want, r.Err)
		}
	}
}

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(fs fstest.MapFS)
		rules   string
		code    engine.Code
		message string
	}{
		{"unpinned", nil, strings.Replace(exRules, "jax@v3", "jax", 1), engine.CodeImport, `import "jax" must name a version`},
		{"missing version", nil, strings.Replace(exRules, "jax@v3", "jax@v9", 1), engine.CodeImport, "there is no jax/v9"},
		{"cycle", func(fs fstest.MapFS) {
			fs["jax/v3/rules.yaml"].Data = []byte("imports:\n  ex: ex@v1\n" + string(fs["jax/v3/rules.yaml"].Data))
		}, exRules, engine.CodeImport, "a cycle of imports"},
		{"an input declared again", nil, strings.Replace(exRules, "want_host:", "platform: string\n  want_host:", 1), engine.CodeDuplicate, `input name "platform" is already declared`},
		{"a device type with another code", func(fs fstest.MapFS) {
			fs["ex/v1/device_types.yaml"] = &fstest.MapFile{Data: []byte("device_types:\n  kDLCUDA: 5\n")}
		}, exRules, engine.CodeDuplicate, "kDLCUDA is 2 in the imported rules; here 5"},
		{"a built-in name", nil, strings.Replace(exRules, "  want_host:", "  DLPACK_FLAG_BITMASK_IS_COPIED: int\n  want_host:", 1), engine.CodeDuplicate, "is built in"},
		{"copy on an error", nil, exRules + "  - id: e\n    when: \"true\"\n    error: {type: BufferError, message: \"'x'\"}\n    copy: \"true\"\n", engine.CodeSchema, "copy goes with a device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := importing(t, tc.rules, exTests)
			if tc.edit != nil {
				tc.edit(fsys)
			}
			_, err := engine.Load(fsys, engine.Options{})
			var found bool
			for _, e := range engine.Errors(err) {
				found = found || e.Code == tc.code && strings.Contains(e.Message, tc.message)
			}
			if !found {
				t.Errorf("Load: %v\nwant a %s error with %q", err, tc.code, tc.message)
			}
		})
	}
}

// A broken import is reported, and the version that imports it adds no
// "import jax@v3 does not load" of its own (TestBrokenImportIsOneError).
func TestImportOfABrokenVersion(t *testing.T) {
	fsys := importing(t, exRules, exTests)
	edit(t, fsys, "jax/v3/rules.yaml", "when: shards != 1", "when: shards > 'one'")
	_, err := engine.Load(fsys, engine.Options{})
	list := engine.Errors(err)
	if len(list) != 1 || list[0].Code != engine.CodeCELType || list[0].Pos == nil || list[0].Pos.File != "rules/jax/v3/rules.yaml" {
		t.Errorf("Load: %v\nwant the CEL type error in jax/v3 alone", err)
	}
}

// An export's capsule and flags must make a DLPack export; a rule that
// says otherwise fails at run time with bad_outcome, pointing at the rule.
func TestExportOutcomes(t *testing.T) {
	tests := []struct {
		name, fields string
		want         string // the decision, or the error message
	}{
		{"copied, versioned", "copy: \"true\"\n    capsule: \"'dltensor_versioned'\"\n    flags: \"[DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_READ_ONLY]\"",
			`{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"copy":true,"capsule":"dltensor_versioned","flags":["DLPACK_FLAG_BITMASK_READ_ONLY","DLPACK_FLAG_BITMASK_IS_COPIED"],"rule":"r","ruleset":"ex@v1"}`},
		{"flags in an unversioned capsule", "capsule: \"'dltensor'\"\n    flags: \"[DLPACK_FLAG_BITMASK_IS_COPIED]\"", "need a dltensor_versioned capsule"},
		{"flags without a capsule", "flags: \"[DLPACK_FLAG_BITMASK_IS_COPIED]\"", "need a dltensor_versioned capsule"},
		{"an unknown capsule", "capsule: \"'dlpack'\"", `capsule "dlpack" is not dltensor or dltensor_versioned`},
		{"not a flag", "capsule: \"'dltensor_versioned'\"\n    flags: \"[3]\"", "3 is not a DLPACK_FLAG_BITMASK_* flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := "imports:\n  jax: jax@v3\nrules:\n  - id: r\n    when: \"true\"\n    device: {type: kDLCPU, id: 0}\n    " + tc.fields + "\n"
			tests := "cases:\n  - name: any\n    input: {platform: cpu, platform_version: cpu}\n    want: {device_type: kDLCPU}\n"
			cat, err := engine.Load(importing(t, rules, tests), engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rs, _ := cat.RuleSet("ex")
			d, err := rs.Resolve(context.Background(), engine.Input{"platform": "cpu", "platform_version": "cpu"})
			var e *engine.Error
			switch {
			case strings.HasPrefix(tc.want, "{"):
				if err != nil || d.String() != tc.want {
					t.Errorf("got %s, %v; want %s", d, err, tc.want)
				}
			case !errors.As(err, &e) || e.Code != engine.CodeBadOutcome || !strings.Contains(e.Message, tc.want) || e.Pos == nil || e.Pos.File != "rules/ex/v1/rules.yaml":
				t.Errorf("got %s, %v; want a bad_outcome in rules/ex/v1/rules.yaml with %q", d, err, tc.want)
			}
		})
	}
}
