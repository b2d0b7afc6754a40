package main

// --rules DIR: a rules directory read at start-up, so an edit needs no rebuild.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/rules"
)

// copyRules copies jax and exchange, every version (ruletest.Rules), to
// a directory to edit: the other rule sets would only make each command
// load and test more. copyAllRules copies every rule set, for the tests
// of what an edit changes in the interop matrix.
func copyRules(t *testing.T) (dir, rulesFile, ref string)    { return ruletest.Copy(t, ruletest.Rules()) }
func copyAllRules(t *testing.T) (dir, rulesFile, ref string) { return ruletest.Copy(t, rules.FS) }

// insertAfter is ruletest.InsertAfter, failing the test on an error.
func insertAfter(t *testing.T, file, before, after string, lines ...string) int {
	t.Helper()
	line, err := ruletest.InsertAfter(file, before, after, lines...)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func runDlroute(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut strings.Builder
	status = run(args, strings.NewReader(""), &out, &errOut)
	return out.String(), withoutBuildProgress(errOut.String()), status
}

// A fork's marker added to the newest gpu_markers table takes effect on the
// next run, with no rebuild.
func TestRulesDirNewMarker(t *testing.T) {
	dir, rulesFile, ref := copyRules(t)
	nvfork := []string{"resolve", "--platform", "gpu", "--platform-version", "nvfork 1.0", "--local-hardware-id", "0"}

	// Neither "cuda" nor any other marker is a substring of "nvfork".
	wantUnknown := `{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: nvfork 1.0"},"rule":"gpu-unknown-platform","ruleset":"` + ref + `"}` + "\n"
	if stdout, stderr, status := runDlroute(t, nvfork...); stdout != wantUnknown || stderr != "" || status != 0 {
		t.Fatalf("embedded rules: dlroute %s\ngot  %q %q %d\nwant %q", strings.Join(nvfork, " "), stdout, stderr, status, wantUnknown)
	}
	if stdout, _, _ := runDlroute(t, append(nvfork, "--rules", dir)...); stdout != wantUnknown {
		t.Fatalf("the copy, unedited: got %q, want %q", stdout, wantUnknown)
	}

	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}")

	tests := []struct {
		args []string
		want string
	}{
		{append(nvfork, "--rules", dir), `{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"` + ref + `"}`},
		{append(nvfork, "--rules", dir, "--memory-kind", "pinned_host"), `{"device_type":"kDLCUDAHost","device_type_code":3,"device_id":0,"rule":"gpu","ruleset":"` + ref + `"}`},
		// The embedded rules are unchanged.
		{nvfork, strings.TrimSuffix(wantUnknown, "\n")},
	}
	for _, tt := range tests {
		stdout, stderr, status := runDlroute(t, tt.args...)
		if stdout != tt.want+"\n" || stderr != "" || status != 0 {
			t.Errorf("dlroute %s\ngot  %q %q %d\nwant %q", strings.Join(tt.args, " "), stdout, stderr, status, tt.want)
		}
	}
	// The edit breaks no case of any version.
	if stdout, stderr, status := runDlroute(t, "test", "--rules", dir); status != 0 || !strings.HasSuffix(stdout, " passed, 0 failed\n") {
		t.Errorf("dlroute test --rules DIR after the edit: status %d\n%s%s", status, stdout, stderr)
	}
}

// A rule file with an error is refused: resolve, lint and test say where the
// error is, with the line and a caret, and exit 1.
func TestRulesDirBrokenRule(t *testing.T) {
	dir, rulesFile, _ := copyRules(t)
	line := insertAfter(t, rulesFile, "rules:", "rules:",
		"- id: typo",
		"  when: platfrom == 'cpu'",
		"  device: {type: kDLCPU, id: 0}") + 1
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	source := strings.Split(string(data), "\n")[line-1]
	pos := fmt.Sprintf("%s:%d:%d: rule typo: when: undeclared reference to 'platfrom'", rulesFile, line, strings.Index(source, "platfrom")+1)
	caret := "\n | " + source + "\n | " + strings.Repeat(".", strings.Index(source, "platfrom")) + "^\n"

	for _, args := range [][]string{
		{"resolve", "--rules", dir, "--platform", "cpu", "--platform-version", "cpu"},
		// An older version is refused too: the whole directory is.
		{"resolve", "--rules", dir + "/", "--ruleset", "jax@v1", "--platform", "cpu", "--platform-version", "cpu"},
		{"test", "--rules", dir},
		{"rules", "--rules", dir},
	} {
		stdout, stderr, status := runDlroute(t, args...)
		if !strings.HasPrefix(stderr, "error: "+pos) || !strings.Contains(stderr, caret) || stdout != "" || status != 1 {
			t.Errorf("dlroute %s\ngot stdout %q, status %d, stderr:\n%s\nwant stderr to start:\nerror: %s ...%s", strings.Join(args, " "), stdout, status, stderr, pos, caret)
		}
	}

	// lint reports on stdout the one error, not one more for each version
	// that imports the broken one (exchange@v1 and v2), and the count.
	stdout, stderr, status := runDlroute(t, "lint", "--rules", dir)
	if !strings.HasPrefix(stdout, pos) || !strings.Contains(stdout, caret) || strings.Contains(stdout, "import jax@v3") || !strings.HasSuffix(stdout, "\n1 error\n") || stderr != "" || status != 1 {
		t.Errorf("dlroute lint --rules DIR\ngot status %d, stderr %q, stdout:\n%s\nwant stdout to start:\n%s ...%s, hold no import error, and end: 1 error", status, stderr, stdout, pos, caret)
	}
}

// A case whose decision differs from its want fails dlroute test, which
// names the case, where it is, and both decisions.
func TestRulesDirFailingCase(t *testing.T) {
	dir, rulesFile, ref := copyRules(t)
	testsFile := filepath.Join(filepath.Dir(rulesFile), engine.TestsFile)
	line := insertAfter(t, testsFile, "cases:", "cases:",
		"- name: a wrong want",
		"  input: {platform: cpu, platform_version: cpu}",
		"  want: {device_type: kDLCUDA, device_id: 0, rule: cpu}")
	wantLine := `: case a wrong want: got {"device_type":"kDLCPU","device_type_code":1,"device_id":0,"rule":"cpu","ruleset":"` + ref + `"}, want {"device_type":"kDLCUDA","device_id":0,"rule":"cpu"}`

	stdout, stderr, status := runDlroute(t, "test", "--rules", dir)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], fmt.Sprintf("%s:%d:", testsFile, line)) || !strings.HasSuffix(lines[0], wantLine) ||
		!strings.HasSuffix(lines[1], " passed, 1 failed") || stderr != "" || status != 1 {
		t.Errorf("dlroute test --rules DIR\ngot status %d, stderr %q, stdout:\n%s\nwant status 1 and stdout:\n%s:%d:COL%s\nN passed, 1 failed", status, stderr, stdout, testsFile, line, wantLine)
	}
}

// A rule that fails while it is evaluated is no decision: resolve says which
// expression failed, and resolve --json answers {"eval_error":...}.
func TestRulesDirEvalError(t *testing.T) {
	dir, rulesFile, _ := copyRules(t)
	line := insertAfter(t, rulesFile, "rules:", "rules:",
		"- id: divides-by-zero",
		"  when: platform == 'boom' && 1 / (shards - 1) > 0",
		"  device: {type: kDLCPU, id: 0}") + 1

	stdout, stderr, status := runDlroute(t, "resolve", "--rules", dir, "--platform", "boom", "--platform-version", "x")
	if wantPrefix := fmt.Sprintf("error: %s:%d:", rulesFile, line); !strings.HasPrefix(stderr, wantPrefix) || !strings.Contains(stderr, "division by zero") || stdout != "" || status != 1 {
		t.Errorf("dlroute resolve --rules DIR --platform boom\ngot stdout %q, status %d, stderr:\n%s\nwant status 1 and stderr starting %q, saying division by zero", stdout, status, stderr, wantPrefix)
	}

	var out, errOut strings.Builder
	status = run([]string{"resolve", "--json", "--rules", dir}, strings.NewReader(`{"platform":"boom","platform_version":"x"}`+"\n"+cpuInput+"\n"), &out, &errOut)
	want := fmt.Sprintf(`{"eval_error":{"line":1,"code":"eval_error","message":"division by zero","position":{"file":%q,"line":%d,"column":11}}}`, rulesFile, line) + "\n" + cpuDecision + "\n"
	if out.String() != want || errOut.Len() > 0 || status != 1 {
		t.Errorf("dlroute resolve --json --rules DIR\ngot status %d, stderr %q, stdout:\n%swant status 1, stdout:\n%s", status, errOut.String(), out.String(), want)
	}
}

// A parsed.bin beside byte-for-byte shipped text (issue 25's: `true` is
// `false`) does not change what --rules DIR decides, natively or in the
// module: a directory's expressions are parsed from their text.
func TestRulesDirParsedFileIsNotTaken(t *testing.T) {
	dir, _, _ := copyRules(t)
	backdoor, err := ruletest.Backdoor()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, engine.ParsedFile), backdoor, 0o644); err != nil {
		t.Fatal(err)
	}
	// As in a process of its own: the programs loads keeps from the
	// embedded rules would hide what the directory's file does.
	kept := loads
	loads = engine.NewCache()
	defer func() { loads = kept }()
	engines := []string{"native"}
	if !testing.Short() {
		engines = append(engines, "wasm")
	}
	for _, kind := range engines {
		stdout, stderr, status := runDlroute(t, "resolve", "--rules", dir, "--engine", kind, "--platform", "mystery", "--platform-version", "backdoor 1")
		if !strings.Contains(stdout, "unsupported-platform") || status != 0 {
			t.Errorf("dlroute resolve --rules DIR --engine %s (a hand-made parsed.bin in DIR)\ngot status %d, stdout %q, stderr:\n%s\nwant the catch-all rule unsupported-platform", kind, status, stdout, stderr)
		}
	}
}

// --rules takes a bundle as it takes a directory: every command decides,
// tests and lints the same rules, with the fork's marker a bundle carries;
// a bundle with a changed byte is refused, naming the file and the hint.
func TestRulesBundle(t *testing.T) {
	dir, rulesFile, ref := copyRules(t)
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA}")
	archive := filepath.Join(t.TempDir(), "rules.tar.gz")
	if _, stderr, status := runDlroute(t, "bundle", "build", dir, "-o", archive); status != 0 {
		t.Fatalf("bundle build: %d %s", status, stderr)
	}
	for _, args := range [][]string{
		{"resolve", "--platform", "gpu", "--platform-version", "nvfork 1.0", "--local-hardware-id", "0"},
		{"resolve", "--ruleset", "exchange", "--platform", "gpu", "--platform-version", "nvfork 1.0", "--local-hardware-id", "0", "--copy", "true"},
		{"resolve", "--engine", "wasm", "--platform", "gpu", "--platform-version", "nvfork 1.0", "--local-hardware-id", "0"},
		{"test"},
		{"lint"},
		{"rules"},
	} {
		if testing.Short() && slices.Contains(args, "wasm") {
			continue // the module's start: the full run's
		}
		fromDir, errDir, statusDir := runDlroute(t, append(args, "--rules", dir)...)
		fromBundle, errBundle, statusBundle := runDlroute(t, append(args, "--rules", archive)...)
		if statusBundle != 0 || errBundle != "" || fromBundle != fromDir || statusDir != 0 {
			t.Errorf("dlroute %s --rules BUNDLE: %d %q %q\nwith the folder: %d %q %q", strings.Join(args, " "), statusBundle, fromBundle, errBundle, statusDir, fromDir, errDir)
		}
	}
	if out, _, _ := runDlroute(t, "resolve", "--rules", archive, "--platform", "gpu", "--platform-version", "nvfork 1.0", "--local-hardware-id", "0"); !strings.Contains(out, `"device_type":"kDLCUDA"`) || !strings.Contains(out, ref) {
		t.Errorf("the bundle's marker does not decide: %s", out)
	}

	// One byte changed in a file's text: its digest no longer matches.
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.tar.gz")
	if err := os.WriteFile(tampered, flipInGzip(t, data, "nvfork", "nvfurk"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, status := runDlroute(t, "test", "--rules", tampered)
	if status != 1 || !strings.Contains(stderr, "reading the bundle ") || !strings.Contains(stderr, "jax/v3/rules.yaml") || !strings.Contains(stderr, "hint: --rules takes") {
		t.Errorf("dlroute test --rules TAMPERED: %d %q; want status 1, the file whose digest differs, and the hint", status, stderr)
	}
}

// flipInGzip replaces old with new (the same length) in a gzip stream's
// text and compresses it again: a tar member's bytes changed, its header
// and the manifest not.
func flipInGzip(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(plain, []byte(old)) {
		t.Fatalf("%q not in the archive (%v)", old, err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(bytes.Replace(plain, []byte(old), []byte(new), 1))
	zw.Close()
	return out.Bytes()
}
