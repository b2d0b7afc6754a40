package engine

import (
	"encoding/json"
	"testing"
)

// TestMembers: members counts what encoding/json decodes, so that a line
// whose count matches its map has no key twice.
func TestMembers(t *testing.T) {
	tests := []struct {
		line string
		want int
	}{
		{`{}`, 0},
		{` { } `, 0},
		{`{"a":1}`, 1},
		{`{"a":1,"b":[1,2,{"c":3,"d":4}],"e":{"f":[5,6]}}`, 3},
		{`{"a":"x,y}{","b":"\"],"}`, 2},
		{`{"a\\":1,"b":"\\"}`, 2},
		{`{"a":1,"\u0061":2}`, 2},
		{"{\n\"a\" : null ,\n\"b\" : true\n}\n", 2},
	}
	for _, tt := range tests {
		if got := members([]byte(tt.line)); got != tt.want {
			t.Errorf("members(%s) = %d, want %d", tt.line, got, tt.want)
		}
	}
}

// FuzzMembers: where members matches the decoded map, duplicateKey finds
// no key twice, so DecodeInput's shortcut refuses what it always refused.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a":1,"\u0061":[2,{"b":"},"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		if key, dup := duplicateKey(data); dup && members(data) == len(obj) {
			t.Fatalf("%q has %q twice, but members counts %d, the map's length", data, key, len(obj))
		}
	})
}
