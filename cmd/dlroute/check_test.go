package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// rules --json writes one object per version, oldest first, and exactly one
// version of each name is its default.
func TestRulesJSON(t *testing.T) {
	stdout, stderr, status := runDlroute(t, "rules", "--json")
	if status != 0 || stderr != "" {
		t.Fatalf("dlroute rules --json: status %d, stderr %q", status, stderr)
	}
	defaults := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var v struct {
			Ref      string `json:"ref"`
			Default  bool   `json:"default"`
			Manifest struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"manifest"`
			Inputs      []json.RawMessage `json:"inputs"`
			Rules       []string          `json:"rules"`
			DeviceTypes []json.RawMessage `json:"device_types"`
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		// imports: the versions whose rules a version reads (exchange's
		// every one, array-api-strict's numpy@v2), a non-empty list where
		// there are any.
		want := []string{"default", "device_types", "inputs", "manifest", "ref", "rules"}
		var imports []struct{ Alias, Ref string }
		if raw, ok := fields["imports"]; ok || strings.HasPrefix(line, `{"ref":"exchange@`) {
			want = []string{"default", "device_types", "imports", "inputs", "manifest", "ref", "rules"}
			if json.Unmarshal(raw, &imports) != nil || len(imports) == 0 || imports[0].Ref == "" {
				t.Errorf("line %d: imports %s, want a list of the versions it reads", i+1, raw)
			}
		}
		if keys := slices.Sorted(maps.Keys(fields)); !slices.Equal(keys, want) {
			t.Errorf("line %d has fields %v, want %v", i+1, keys, want)
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		if v.Ref != v.Manifest.Name+"@"+v.Manifest.Version || len(v.Inputs) == 0 || len(v.Rules) == 0 || len(v.DeviceTypes) == 0 {
			t.Errorf("line %d: ref %q, manifest %s@%s, %d inputs, %d rules, %d device types; want ref = name@version and none empty",
				i+1, v.Ref, v.Manifest.Name, v.Manifest.Version, len(v.Inputs), len(v.Rules), len(v.DeviceTypes))
		}
		if v.Default {
			if defaults[v.Manifest.Name] != "" {
				t.Errorf("both %s and %s are the default", defaults[v.Manifest.Name], v.Ref)
			}
			defaults[v.Manifest.Name] = v.Ref
		}
	}
	if defaults["jax"] == "" {
		t.Errorf("no jax version is the default:\n%s", stdout)
	}
}
