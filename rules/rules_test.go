package rules_test

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// TestParsedFileIsFresh: parsed.bin holds exactly what the rules'
// expressions parse to now, and names the cel-go of go.mod as the one
// that parsed them (a test binary does not know its modules' versions,
// so WriteParsed here names none).
func TestParsedFileIsFresh(t *testing.T) {
	want, err := engine.WriteParsed(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	cel := ""
	for _, r := range mod.Require {
		if r.Mod.Path == "cel.dev/cel-go" {
			cel = r.Mod.Path + "@" + r.Mod.Version
		}
	}
	want = bytes.Replace(want, []byte("cel.dev/cel-go@unknown"), []byte(cel), 1)
	got, err := rules.FS.ReadFile(engine.ParsedFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rules/%s (%d bytes) is not what the rules parse to with %s (%d bytes): run go generate ./rules", engine.ParsedFile, len(got), cel, len(want))
	}
}
