package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/interop"
)

// cellOf is the fields of a cell a user reads.
type cellOf struct {
	Producer string            `json:"producer"`
	Consumer string            `json:"consumer"`
	Outcome  string            `json:"outcome"`
	Error    *engine.Exception `json:"error"`
	Steps    []struct {
		Call     string          `json:"call"`
		Decision engine.Decision `json:"decision"`
	} `json:"steps"`
}

func interopT(t *testing.T, h uint64, req string) ([]byte, cellOf) {
	t.Helper()
	out, st := InteropJSON(context.Background(), h, []byte(req))
	if st != StatusOK {
		t.Fatalf("InteropJSON(%s): %s %s", req, st, out)
	}
	var c cellOf
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("InteropJSON(%s) = %s: %v", req, out, err)
	}
	return out, c
}

// The cells below are derived by hand from the rule files, as
// internal/interop's TestDecide derives them: the step and rule that
// decides, and the exception's text.
func TestInteropJSON(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	seed := `"array":{"platform":"gpu","platform_version":"<unknown>"}`
	for _, tc := range []struct {
		req                string
		outcome            string
		raises             string // "Type: message", or ""
		decider, rule, via string // the last step's call, rule and rule set
	}{
		// torch calls __dlpack_device__ first, and jax@v3's
		// gpu-unknown-platform raises.
		{`{"producer":"jax","consumer":"torch",` + seed + `}`, "error", "BufferError: Unknown GPU platform for __dlpack__: <unknown>",
			"__dlpack_device__", "gpu-unknown-platform", "jax@v3"},
		// numpy does not: jax-export exports kDLCUDA, and numpy@v2's import
		// refuses it.
		{`{"producer":"jax","consumer":"numpy",` + seed + `}`, "error", "BufferError: Unsupported device in DLTensor.",
			"from_dlpack", "unsupported-device", "numpy@v2"},
		// A numpy CPU array into torch: in place.
		{`{"producer":"numpy","consumer":"torch"}`, "in_place", "", "from_dlpack", "import", "torch@v3"},
		{`{"producer":"numpy@v2","consumer":"torch@v1","array":{"origin_device":[1,0]}}`, "in_place", "", "from_dlpack", "import", "torch@v1"},
		// numpy's copy=True: numpy's own __dlpack__ copies.
		{`{"producer":"numpy","consumer":"numpy","kwargs":{"copy":true}}`, "producer_copy", "", "from_dlpack", "import", "numpy@v2"},
		// jax as a consumer is jax-import's version for its release.
		{`{"producer":"numpy","consumer":"jax"}`, "in_place", "", "from_dlpack", "import", "jax-import@v3"},
		{`{"producer":"torch@v1","consumer":"jax==0.10.2"}`, "in_place", "", "from_dlpack", "import", "jax-import@v1.1"},
		{`{"producer":"torch","consumer":"jax==0.10.1","array":{"pinned":true}}`, "error", "TypeError: Array passed to from_dlpack is on unsupported device type (DLDeviceType: 3, array: ", "request", "unsupported-device-type", "jax-import@v1"},
	} {
		out, c := interopT(t, h, tc.req)
		raises := ""
		if c.Error != nil {
			raises = c.Error.Type + ": " + c.Error.Message
		}
		last := c.Steps[len(c.Steps)-1]
		got := fmt.Sprintf("%s %q %s %s %s", c.Outcome, raises, last.Call, last.Decision.Rule, last.Decision.RuleSet)
		want := fmt.Sprintf("%s %q %s %s %s", tc.outcome, tc.raises, tc.decider, tc.rule, tc.via)
		if got != want {
			t.Errorf("InteropJSON(%s) got %s, want %s\n%s", tc.req, got, want, out)
		}
		if bytes.HasSuffix(out, []byte("\n")) || bytes.Contains(out, []byte(`\u003c`)) {
			t.Errorf("InteropJSON(%s) = %q: want one line without its newline, < unescaped as the command writes it", tc.req, out)
		}
	}
}

// Every cell of the matrix is the cell InteropJSON decides for its
// producer, consumer and array, byte for byte: asking about a row's
// array by its input is asking about the row.
func TestInteropMatrixJSON(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	for _, kwargs := range []string{``, `,"kwargs":{"copy":true}`, `,"kwargs":{"copy":false}`} {
		out, st := InteropMatrixJSON(context.Background(), h, []byte(`{"producers":["jax","numpy","torch"],"consumers":["torch","numpy","jax"]`+kwargs+`}`))
		if st != StatusOK {
			t.Fatalf("InteropMatrixJSON: %s %s", st, out)
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) < 2*(10+3+5) {
			t.Errorf("InteropMatrixJSON%s: %d cells; want two for each array of jax@v3 (10), numpy@v2 (3) and torch@v1 (5)", kwargs, len(lines))
		}
		for _, line := range lines {
			var cell struct {
				Producer, Consumer string
				Array              struct{ Input json.RawMessage }
			}
			if err := json.Unmarshal([]byte(line), &cell); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			req := fmt.Sprintf(`{"producer":%q,"consumer":%q,"array":%s%s}`, cell.Producer, cell.Consumer, cell.Array.Input, kwargs)
			got, st := InteropJSON(context.Background(), h, []byte(req))
			if st != StatusOK || string(got) != line {
				t.Errorf("InteropJSON(%s) = %s %s, want the matrix's cell\n%s", req, st, got, line)
			}
		}
	}
}

func TestInteropJSONRefuses(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	for _, tc := range []struct {
		req    string
		status Status
		code   engine.Code
		says   string
	}{
		{`not json`, StatusInputError, engine.CodeJSON, "invalid character"},
		{`{"producer":"jax","consumer":"torch"} x`, StatusInputError, engine.CodeJSON, "unexpected data after"},
		{`{"producer":"jax","consumer":"torch","copy":true}`, StatusInputError, engine.CodeUnknownField, `unknown field "copy"`},
		{`{"producer":"jax"}`, StatusInputError, engine.CodeMissingField, "no consumer"},
		{`{"producer":"jax","consumer":"torch","array":[1]}`, StatusInputError, engine.CodeWrongType, "array is [1]"},
		{"{\"producer\":\"jax\xff\",\"consumer\":\"torch\"}", StatusInputError, engine.CodeInvalidUTF8, "UTF-8"},
		{`{"producer":"nosuch","consumer":"torch"}`, StatusNoRuleSet, engine.CodeNoRuleSet, "nosuch"},
		{`{"producer":"jax","consumer":"jax@v2"}`, StatusNoRuleSet, engine.CodeNoRuleSet, "jax@v2 cannot be a consumer: it mirrors no release of JAX"},
		{`{"producer":"jax-import","consumer":"numpy"}`, StatusNoRuleSet, engine.CodeNoRuleSet, "jax-import@v3 cannot be a producer"},
		{`{"producer":"exchange","consumer":"numpy"}`, StatusNoRuleSet, engine.CodeNoRuleSet, "cannot be a producer"},
		{`{"producer":"jax","consumer":"torch","array":{"copy":true}}`, StatusInputError, engine.CodeUnknownField, "names copy, which the exchange sets"},
		{`{"producer":"jax","consumer":"torch","array":{"platfrom":"gpu"}}`, StatusInputError, engine.CodeUnknownField, `unknown input "platfrom"`},
		{`{"producer":"jax","consumer":"torch","array":{"platform":7}}`, StatusInputError, engine.CodeWrongType, "input platform"},
		{`{"producer":"numpy","consumer":"numpy","kwargs":{"devcie":[1,0]}}`, StatusInputError, engine.CodeUnknownField, "numpy@v2 has no input devcie"},
		// A value of the wrong type fails at the consumer's request: the
		// message says which cell and which step.
		{`{"producer":"numpy","consumer":"numpy","kwargs":{"copy":"yes"}}`, StatusInputError, engine.CodeWrongType, "numpy@v2 into numpy@v2, the array (kDLCPU, 0) -: numpy@v2 request: input copy"},
	} {
		out, st := InteropJSON(context.Background(), h, []byte(tc.req))
		var e engine.Error
		if err := json.Unmarshal(out, &e); err != nil {
			t.Errorf("InteropJSON(%s) = %s %s: not an error object: %v", tc.req, st, out, err)
			continue
		}
		if st != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
			t.Errorf("InteropJSON(%s) got %s %s, want %s %s saying %q", tc.req, st, out, tc.status, tc.code, tc.says)
		}
	}
	if out, st := InteropMatrixJSON(context.Background(), h, []byte(`{"consumers":["exchange"]}`)); st != StatusNoRuleSet || !bytes.Contains(out, []byte(`"code":"no_ruleset"`)) || !bytes.Contains(out, []byte(`"hint":"producers: array-api-strict, cupy, jax, mlx, numpy, onnxruntime, paddle, pyarrow, tensorflow, torch, warp;`)) {
		t.Errorf("InteropMatrixJSON(consumer exchange) = %s %s, want no_ruleset with the libraries as the hint", st, out)
	}
	if out, st := InteropJSON(context.Background(), 0xdead, []byte(`{"producer":"jax","consumer":"torch"}`)); st != StatusBadHandle || len(out) != 0 {
		t.Errorf("InteropJSON(made-up handle) = %s %s, want bad_handle and nothing", st, out)
	}
	h2, _, _ := Open("", "")
	Close(h2)
	if _, st := InteropJSON(context.Background(), h2, []byte(`{"producer":"jax","consumer":"torch"}`)); st != StatusBadHandle {
		t.Errorf("InteropJSON(closed rules) = %s, want bad_handle", st)
	}
}

// A cell that raises carries its remedy, as `dlroute interop --json`
// writes it: a CUDA tensor into numpy is copied to the host first.
func TestInteropJSONRemedy(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	out, _ := interopT(t, h, `{"producer":"torch","consumer":"numpy","array":{"device_type":"cuda","device_index":0}}`)
	var c struct{ Remedy *interop.Remedy }
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	if want := (interop.Remedy{Kind: interop.RemedyHostCopy, Fix: "x.cpu()", Outcome: interop.InPlace}); c.Remedy == nil || *c.Remedy != want {
		t.Errorf("remedy %v, want %+v\n%s", c.Remedy, want, out)
	}
	// CuPy's x.get() is a NumPy array: numpy's rules are asked though
	// neither side names them.
	out, _ = interopT(t, h, `{"producer":"cupy","consumer":"torch","array":{"managed":true}}`)
	if !bytes.Contains(out, []byte(`"remedy":{"kind":"host_copy","fix":"x.get()"`)) {
		t.Errorf("cupy managed into torch: %s; want the remedy x.get()", out)
	}
}

// A catch request answers each producer into each consumer with its
// catch set, as `dlroute interop --catch --json` writes it.
func TestInteropCatchJSON(t *testing.T) {
	testenv.ContentOnly(t)
	h := openRulesT(t, "")
	out, st := InteropMatrixJSON(context.Background(), h, []byte(`{"producers":["numpy","torch@v1"],"consumers":["torch@v1"],"catch":true}`))
	if st != StatusOK {
		t.Fatalf("InteropMatrixJSON(catch) = %s %s", st, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per pair:\n%s", len(lines), out)
	}
	var numpy, torch interop.Catch
	if json.Unmarshal([]byte(lines[0]), &numpy) != nil || json.Unmarshal([]byte(lines[1]), &torch) != nil {
		t.Fatalf("not catch sets:\n%s", out)
	}
	// torch 1.13 aborts on a negative stride (numpy's reversed view),
	// and refuses numpy's kDLCUDAHost array.
	if !slices.Contains(numpy.Types, "RuntimeError") || !slices.Contains(numpy.Uncatchable, "SIGABRT") || len(numpy.ProducerVersions) != 8 || numpy.Except == "" {
		t.Errorf("numpy into torch@v1: %s; want RuntimeError, SIGABRT apart, numpy's 8 versions, an except line", lines[0])
	}
	if !slices.Equal(torch.ProducerVersions, []string{"torch@v1"}) || !slices.Equal(torch.ConsumerVersions, []string{"torch@v1"}) {
		t.Errorf("torch@v1 into torch@v1: %s; want that one version of each", lines[1])
	}
	for _, tc := range []struct {
		req    string
		status Status
		code   engine.Code
	}{
		{`{"producers":["numpy"],"catch":true}`, StatusInputError, engine.CodeMissingField},
		{`{"producers":["numpy"],"consumers":["torch"],"kwargs":{"copy":true},"catch":true}`, StatusInputError, engine.CodeUnknownField},
		{`{"producers":["nosuch"],"consumers":["torch"],"catch":true}`, StatusNoRuleSet, engine.CodeNoRuleSet},
		{`{"producers":["numpy"],"consumers":["exchange"],"catch":true}`, StatusNoRuleSet, engine.CodeNoRuleSet},
	} {
		out, st := InteropMatrixJSON(context.Background(), h, []byte(tc.req))
		var e engine.Error
		if json.Unmarshal(out, &e) != nil || st != tc.status || e.Code != tc.code {
			t.Errorf("InteropMatrixJSON(%s) = %s %s, want %s %s", tc.req, st, out, tc.status, tc.code)
		}
	}
}
