package contract

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

func TestArchiveRoundTrip(t *testing.T) {
	in := fstest.MapFS{
		"jax/v3/rules.yaml":    {Data: []byte("rules: []\n")},
		"jax/v3/manifest.yaml": {Data: []byte("name: jax\n")},
		"exchange/v1/x.yaml":   {Data: nil},
	}
	archive, err := PackFS(in)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := PackFS(in)
	if string(archive) != string(again) {
		t.Fatal("PackFS is not deterministic")
	}
	out, err := UnpackFS(archive)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range in {
		got := out.(fstest.MapFS)[name]
		if got == nil || string(got.Data) != string(f.Data) {
			t.Errorf("%s: got %v, want %q", name, got, f.Data)
		}
	}
}

// TestPackTextLeavesParsedOut: PackText packs what PackFS does but the
// root's parsed.bin (a version folder's file of that name is rules text);
// neither packs the root's plans.bin, which may be larger than a rule file
// (the shipped one is) and which no reader of an archive reads.
func TestPackTextLeavesParsedOut(t *testing.T) {
	in := fstest.MapFS{
		"jax/v3/rules.yaml":           {Data: []byte("rules: []\n")},
		engine.ParsedFile:             {Data: []byte("not the host's word")},
		"jax/v3/" + engine.ParsedFile: {Data: []byte("a file of the version")},
		engine.PlansFile:              {Data: make([]byte, engine.MaxRuleFileSize+1)},
	}
	for _, c := range []struct {
		pack func(fs.FS) ([]byte, error)
		want []string
	}{
		{PackFS, []string{"jax/v3/parsed.bin", "jax/v3/rules.yaml", "parsed.bin"}},
		{PackText, []string{"jax/v3/parsed.bin", "jax/v3/rules.yaml"}},
	} {
		archive, err := c.pack(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := UnpackFS(archive)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(maps.Keys(out.(fstest.MapFS)))
		if !slices.Equal(got, c.want) {
			t.Errorf("packed %v, want %v", got, c.want)
		}
	}
}

func TestUnpackRefuses(t *testing.T) {
	entry := func(path, data string) string {
		b, _ := AppendField(nil, path, true)
		b2, _ := AppendField(nil, data, true)
		return string(b[1:]) + string(b2[1:]) // a string field is a tag, then the archive's u32-length form
	}
	good := entry("jax/v3/rules.yaml", "x")
	tests := map[string]string{
		"a path that leaves the directory": entry("../etc/passwd", "x"),
		"an absolute path":                 entry("/etc/passwd", "x"),
		"a backslash":                      entry(`jax\v3\rules.yaml`, "x"),
		"a path given twice":               good + good,
		"truncated in a path":              good[:3],
		"truncated in the data":            good[:len(good)-1],
	}
	for name, archive := range tests {
		if _, err := UnpackFS([]byte(archive)); err == nil {
			t.Errorf("%s: UnpackFS accepted it", name)
		}
	}
}

func TestFieldsRoundTrip(t *testing.T) {
	values := []any{"cuda 12030", nil, int64(-3), true, 1.5, []any{json.Number("2"), json.Number("0")}}
	var b []byte
	for _, v := range values {
		var err error
		if b, err = AppendField(b, v, true); err != nil {
			t.Fatal(err)
		}
	}
	b, _ = AppendField(b, nil, false)
	got, present, err := DecodeFields(b, len(values)+1)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if want, _ := json.Marshal(v); !present[i] || string(mustJSON(t, got[i])) != string(want) {
			t.Errorf("field %d: got %#v, want %#v", i, got[i], v)
		}
	}
	if present[len(values)] {
		t.Errorf("an absent field decoded as present")
	}
	for _, n := range []int{len(values), len(values) + 2} {
		if _, _, err := DecodeFields(b, n); err == nil {
			t.Errorf("DecodeFields of %d fields from %d accepted it", n, len(values)+1)
		}
	}
	if _, _, err := DecodeFields(b[:len(b)-3], len(values)+1); err == nil {
		t.Errorf("a truncated input decoded")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecisionRoundTrip(t *testing.T) {
	dev, err := DecodeDecision(AppendDevice(nil, 4, 2, 7))
	if err != nil || dev != (Decision{Kind: KindDevice, Rule: 4, Code: 2, ID: 7}) {
		t.Errorf("device: %+v, %v", dev, err)
	}
	exp, err := DecodeDecision(AppendExport(nil, 13, 1, 0, true, CapsuleVersioned, 1<<1))
	if err != nil || exp != (Decision{Kind: KindExport, Rule: 13, Code: 1, ID: 0, Copy: true, Capsule: CapsuleVersioned, Flags: 2}) {
		t.Errorf("export: %+v, %v", exp, err)
	}
	fullExport := AppendExport(nil, 13, 1, 0, true, CapsuleVersioned, 2)
	for n := range len(fullExport) {
		if _, err := DecodeDecision(fullExport[:n]); err == nil {
			t.Errorf("an export decision cut to %d bytes decoded", n)
		}
	}
	badCopy, badCapsule := slices.Clone(fullExport), slices.Clone(fullExport)
	badCopy[21], badCapsule[22] = 2, 3
	for name, b := range map[string][]byte{"copy 2": badCopy, "capsule 3": badCapsule} {
		if _, err := DecodeDecision(b); err == nil {
			t.Errorf("an export decision with %s decoded", name)
		}
	}
	msg := "Unknown GPU platform for __dlpack__: " + strings.Repeat("x", 300)
	exc, err := DecodeDecision(AppendException(nil, 2, "BufferError", msg))
	if err != nil || exc.Type != "BufferError" || exc.Message != msg || exc.Rule != 2 {
		t.Errorf("exception: %+v, %v", exc, err)
	}
	full := AppendException(nil, 2, "BufferError", "m")
	for n := range len(full) {
		if _, err := DecodeDecision(full[:n]); err == nil {
			t.Errorf("a decision cut to %d bytes decoded", n)
		}
	}
	if s := Pack(StatusTooSmall, 900); func() bool { st, v := Unpack(s); return st != StatusTooSmall || v != 900 }() {
		t.Errorf("Pack/Unpack do not round-trip")
	}
}

// TestJSONFieldNamesTheExtraValue: a JSON field of two values is refused
// at the byte where the second starts (counted from 0, as an invalid
// UTF-8 byte is), not past it.
func TestJSONFieldNamesTheExtraValue(t *testing.T) {
	for _, tt := range []struct {
		value string
		at    int
	}{{"[1] [2]", 4}, {"[1]\n\t x", 6}, {`{"a":1}2`, 7}} {
		b := append([]byte{TagJSON, byte(len(tt.value)), 0, 0, 0}, tt.value...)
		_, _, err := DecodeFields(b, 1)
		if want := fmt.Sprintf("after the JSON value (at byte %d)", tt.at); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error that says %q", tt.value, err, want)
		}
	}
}
