package plan

import "testing"

// TestFlatObject: the lines flatObject takes without scanValue are well
// formed objects with nothing after them, as scanValue finds them; it
// leaves to scanValue every line with an escape, a nested value, a
// number JSON does not write, or anything after the object.
func TestFlatObject(t *testing.T) {
	tests := []struct {
		line string
		flat bool
	}{
		{`{"platform":"gpu","platform_version":"fork 1","local_hardware_id":0}`, true},
		{` { "a" : -0.5e+3 , "b":true,"c":false, "d":null, "e":"é" } ` + "\n", true},
		{`{}`, true},
		{`{"a":12,"a":1E9}`, true},
		{`{"a":"x\"y"}`, false},
		{`{"a":[1]}`, false},
		{`{"a":{}}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":-}`, false},
		{`{"a":1e}`, false},
		{`{"a":tru}`, false},
		{`{"a":1} x`, false},
		{`{"a":1}{}`, false},
		{`{"a" 1}`, false},
		{`{"a":1,}`, false},
		{`{a:1}`, false},
		{"{\"a\":\"\t\"}", false},
		{`{"a":1`, false},
		{`[1]`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := flatObject([]byte(tt.line)); got != tt.flat {
			t.Errorf("flatObject(%q) = %v; want %v", tt.line, got, tt.flat)
		}
		if !tt.flat {
			continue
		}
		end, msg := scanValue([]byte(tt.line), 0)
		if _, extra := trailing([]byte(tt.line), end); msg != "" || extra {
			t.Errorf("flatObject(%q) is true, and scanValue says %q, more after it: %v", tt.line, msg, extra)
		}
	}
}
