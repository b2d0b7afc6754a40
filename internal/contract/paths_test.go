package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/rules"
)

// TestBinaryRefusesWhatJSONRefuses: a JSON field of a binary input is
// read as the JSON line path reads the same value, so both refuse it with
// the same code or both accept it. A JSON field used to stop at its first
// value, so `[1] [2]` read as [1].
func TestBinaryRefusesWhatJSONRefuses(t *testing.T) {
	cat, err := engine.Load(rules.FS, engine.Options{Select: []string{"exchange", "numpy"}, SkipTests: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref, input, value string
		code              engine.Code // "" accepts it
	}{
		{"exchange", "dl_device", `[1,0]`, ""},
		{"exchange", "dl_device", " [1,0]\t\n", ""}, // white space around a value is JSON's
		{"exchange", "dl_device", `[1] [2]`, engine.CodeJSON},
		{"exchange", "dl_device", `[1,0]x`, engine.CodeJSON},
		{"exchange", "dl_device", `[1,0]]`, engine.CodeJSON},
		{"exchange", "dl_device", `null null`, engine.CodeJSON},
		{"exchange", "dl_device", `[1,`, engine.CodeJSON},
		{"exchange", "dl_device", `["a"]`, engine.CodeWrongType},
		{"numpy", "keywords", `["copy"] ["device"]`, engine.CodeJSON},
		{"numpy", "keywords", "[\"\xff\"]", engine.CodeInvalidUTF8},
		{"numpy", "keywords", `[] `, ""},
		{"numpy", "keywords", `[]  []`, engine.CodeJSON},
		{"numpy", "keywords", `[`, engine.CodeJSON},
	}
	for _, tt := range tests {
		rs, err := cat.RuleSet(tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		// The line path: the value as the field of a JSON object, with
		// a value of each required input; the binary path: the value as a
		// JSON field, the same required values, the others absent.
		line := fmt.Sprintf(`{%q:%s`, tt.input, tt.value)
		var in []byte
		for _, d := range rs.Inputs() {
			switch {
			case d.Name == tt.input:
				in = append(in, contract.TagJSON, byte(len(tt.value)), 0, 0, 0)
				in = append(in, tt.value...)
			case d.Required:
				v := requiredValue(t, d)
				in, _ = contract.AppendField(in, v, true)
				j, _ := json.Marshal(v)
				line += fmt.Sprintf(`,%q:%s`, d.Name, j)
			default:
				in = append(in, contract.TagAbsent)
			}
		}
		_, lineErr := rs.DecodeInput([]byte(line + "}"))
		input, binErr := contract.BinaryInput(in, rs.Inputs())
		if binErr == nil {
			_, binErr = rs.Resolve(context.Background(), input)
			if list := engine.Errors(binErr); len(list) == 1 && !list[0].Code.Input() {
				binErr = nil // decided or not, the input was taken
			}
		}
		if got, want := codeOf(binErr), codeOf(lineErr); got != want || want != tt.code {
			t.Errorf("%s %s = %q: binary path %q (%v), JSON line path %q (%v); want %q for both",
				tt.ref, tt.input, tt.value, got, binErr, want, lineErr, tt.code)
		}
	}
}

// requiredValue is a value of a required input's type.
func requiredValue(t *testing.T, d engine.InputDecl) any {
	switch d.Type {
	case "string":
		return "cpu"
	case "int":
		return int64(0)
	case "bool":
		return false
	case "list(int)":
		return []any{int64(1), int64(0)}
	case "list(string)":
		return []any{}
	}
	t.Fatalf("input %s is a required %s; give the test a value of it", d.Name, d.Type)
	return nil
}

func codeOf(err error) engine.Code {
	if err == nil {
		return ""
	}
	if list := engine.Errors(err); len(list) == 1 {
		return list[0].Code
	}
	return "not one error: " + engine.Code(err.Error())
}
