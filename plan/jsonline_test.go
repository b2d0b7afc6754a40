package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// readObjectRef is the engine's reading of a line with encoding/json
// (engine.RuleSet.DecodeInput before the declared inputs are checked):
// the oracle readObject is held to.
func readObjectRef(data []byte) (map[string]any, string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
		}
		if errors.Is(err, io.EOF) {
			msg = "empty input; want a JSON object"
		}
		return nil, msg
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Sprintf("unexpected data after the JSON object (at byte %d)", dec.InputOffset())
	}
	obj, ok := fromJSONNumbers(v).(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("input is %s; want a JSON object", goTypeName(fromJSONNumbers(v)))
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.Token()
	seen := map[string]bool{}
	for dec.More() {
		t, _ := dec.Token()
		key := t.(string)
		if seen[key] {
			return nil, fmt.Sprintf("input has %q twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	return obj, ""
}

// asNumberText turns the small ints readObject gives as int64 into
// their text, as encoding/json's json.Number keeps it.
func asNumberText(v any) any {
	switch x := v.(type) {
	case int64:
		return jsonNumber(strconv.FormatInt(x, 10))
	case object: // as a map, for reflect.DeepEqual with encoding/json's
		m := make(map[string]any, len(x))
		for i, f := range x {
			if i > 0 && x[i-1].key >= f.key {
				panic("object's keys are not sorted, each once")
			}
			m[f.key] = asNumberText(f.val)
		}
		return m
	case []any:
		for i := range x {
			x[i] = asNumberText(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = asNumberText(x[k])
		}
	}
	return v
}

func fromJSONNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return jsonNumber(x)
	case []any:
		for i := range x {
			x[i] = fromJSONNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = fromJSONNumbers(x[k])
		}
	}
	return v
}

// sameRead says how readObject's reading of a line differs from
// encoding/json's, or "".
func sameRead(line []byte) string {
	want, wantMsg := readObjectRef(line)
	obj, gotErr := readObject(line, []Input{{Name: "a"}, {Name: "platform"}, {Name: "x"}}, []any{"gpu", "x"}, nil)
	var got map[string]any
	if obj != nil {
		got = asNumberText(obj).(map[string]any)
	}
	gotMsg := ""
	if gotErr != nil {
		gotMsg = gotErr.Message
		if gotErr.Code != CodeJSON {
			return fmt.Sprintf("readObject(%q): code %s", line, gotErr.Code)
		}
	}
	if gotMsg != wantMsg || !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("readObject(%q)\n got %#v, %q\nwant %#v, %q", line, got, gotMsg, want, wantMsg)
	}
	return ""
}

var jsonLines = []string{
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
}

// manyKeys is an object of n keys in reverse order, key a given again
// at b, past the insertion sort of a few keys.
func manyKeys(n, a, b int) string {
	s := "{"
	for i := n - 1; i >= 0; i-- {
		k := i
		if i == b {
			k = a
		}
		s += fmt.Sprintf(`"k%03d":%d,`, k, i)
	}
	return s[:len(s)-1] + "}"
}

// TestReadObjectMatchesEncodingJSON: readObject reads every line as the
// engine's encoding/json reading does, value and message.
func TestReadObjectMatchesEncodingJSON(t *testing.T) {
	for _, line := range jsonLines {
		if diff := sameRead([]byte(line)); diff != "" {
			t.Error(diff)
		}
	}
}

// FuzzReadObject compares readObject with encoding/json on any valid
// UTF-8 line:
//
//	go test ./plan -run '^$' -fuzz FuzzReadObject -fuzztime 60s
func FuzzReadObject(f *testing.F) {
	for _, line := range jsonLines {
		if len(line) < 200 {
			f.Add([]byte(line))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !utf8.Valid(line) {
			t.Skip() // decodeInput refuses it first
		}
		if diff := sameRead(line); diff != "" {
			t.Error(diff)
		}
	})
}
