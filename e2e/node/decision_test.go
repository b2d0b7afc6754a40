package node

import (
	"context"
	"encoding/json"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/rules"
)

// nodeCase is one line check.mjs decides, with the native engine's
// answer.
type nodeCase struct {
	Ref    string `json:"ref"`
	Line   string `json:"line"`
	Status string `json:"status"`
	Want   string `json:"want"`
}

// decisionDir is the decision module's directory: check.mjs is there.
var decisionDir = filepath.Join(repoRoot, "wasm", "decision")

// decisionFiles writes the decision module and rules/plans.bin to a
// directory of the test's, and returns node's path and theirs.
func decisionFiles(t testing.TB) (node, module, plans string) {
	t.Helper()
	node = nodeBinary(t, "the decision module is not checked in Node.js")
	wasm, err := decisionwasm.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	module, plans = filepath.Join(dir, "decision.wasm"), filepath.Join(dir, "plans.bin")
	for path, data := range map[string][]byte{module: wasm, plans: rules.Plans} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return node, module, plans
}

// TestNodeDecides: in Node.js, through decision.mjs
// (wasm/decision/check.mjs), the decision module answers every case of
// every embedded version's tests.yaml, and lines that are not valid, with
// the native engine's bytes and status.
func TestNodeDecides(t *testing.T) {
	testenv.Short(t, "the decision module in Node.js")
	node, module, plans := decisionFiles(t)
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var cases []nodeCase
	for _, rs := range cat.RuleSets() {
		lines := []string{`{`, `{"nope":1}`, `{"platform":"<gpu>"}`}
		for _, c := range rs.Cases() {
			line, err := json.Marshal(c.Input)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(line))
		}
		for _, line := range lines {
			want, err := rs.ResolveJSON(ctx, []byte(line))
			status := contract.StatusOK
			if err != nil {
				want, status = contract.ErrorJSON(err), contract.Classify(err)
			}
			cases = append(cases, nodeCase{rs.Ref(), line, status.String(), string(want)})
		}
	}
	data, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	casesPath := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(casesPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "check.mjs", module, plans, casesPath)
	cmd.Dir = decisionDir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s%s", err, out, stderrOf(err))
	}
	if !strings.HasSuffix(string(out), " 0 failed\n") || !strings.HasPrefix(lastLine(out), strconv.Itoa(len(cases))+" passed") {
		t.Errorf("node check.mjs of %d cases:\n%s", len(cases), out)
	}
}

// BenchmarkNodeFirstDecision starts a fresh node process per iteration
// that loads the decision module and jax@v3's plan and decides one line,
// then 10,000 new inputs, and reports the means as metrics:
// ms from the process's start to its first decision (since-start-ms),
// from the script's start (load-to-first-ms), and µs per new input:
//
//	go -C e2e test ./node -run '^$' -bench BenchmarkNodeFirstDecision -benchtime 10x
func BenchmarkNodeFirstDecision(b *testing.B) {
	node, module, plans := decisionFiles(b)
	line := `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`
	var sum struct{ start, load, input float64 }
	for b.Loop() {
		cmd := exec.Command(node, "--no-warnings", "check.mjs", module, plans, "--first", "jax@v3", line, "10000")
		cmd.Dir = decisionDir
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("node check.mjs --first: %v\n%s%s", err, out, stderrOf(err))
		}
		var r struct {
			SinceStart  float64 `json:"since_start_ms"`
			LoadToFirst float64 `json:"load_to_first_ms"`
			NewInput    float64 `json:"new_input_us"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("node check.mjs --first printed %q: %v", out, err)
		}
		sum.start += r.SinceStart
		sum.load += r.LoadToFirst
		sum.input += r.NewInput
	}
	n := float64(b.N)
	b.ReportMetric(sum.start/n, "since-start-ms")
	b.ReportMetric(sum.load/n, "load-to-first-ms")
	b.ReportMetric(sum.input/n, "new-input-µs")
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
