package playground

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/rulesource"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// runDlroute runs the dlroute binary of this checkout with args and no
// stdin, and returns what it writes and its exit status.
func runDlroute(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := exec.Command(dlroute(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &exit) {
		t.Fatalf("dlroute %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestRulesFromThePagesDownload: the .tar the playground downloads (made
// here by the page's own encoder, share.js's tarball, in node) is a
// --rules path as it is, without unpacking; it has no signature, so a key
// refuses it.
func TestRulesFromThePagesDownload(t *testing.T) {
	testenv.Short(t, "the page's tar encoder under node")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed, so the page's tar encoder does not run (apt-get install -y nodejs)")
	}
	dir, rulesFile, ref := copyRules(t)
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA}")
	files := map[string]string{}
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Count(filepath.ToSlash(rel), "/") != 2 {
			return nil // the page's rules.json has only <name>/<version>/<file>
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(files)
	share, _ := filepath.Abs(filepath.Join(pageDir, "share.js"))
	archive := filepath.Join(t.TempDir(), "rules.tar")
	script := `import { tarball } from ` + strconv.Quote("file://"+share) + `;
import { readFileSync, writeFileSync } from "node:fs";
const files = new Map(Object.entries(JSON.parse(readFileSync(0, "utf8"))));
writeFileSync(process.argv[1], tarball("rules", files));`
	cmd := exec.Command(node, "--input-type=module", "-e", script, archive)
	cmd.Stdin = bytes.NewReader(input)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node tarball: %v\n%s", err, out)
	}

	stdout, stderr, status := runDlroute(t, "resolve", "--rules", archive, "--platform", "gpu", "--platform-version", "nvfork 1.0", "--local-hardware-id", "0")
	want := `{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"` + ref + `"}` + "\n"
	if status != 0 || stdout != want {
		t.Errorf("resolve --rules rules.tar: %d %q %s, want the edited marker's decision %s", status, stdout, stderr, want)
	}
	if stdout, _, status := runDlroute(t, "test", "--rules", archive); status != 0 || !strings.HasSuffix(stdout, " 0 failed\n") {
		t.Errorf("test --rules rules.tar: %d %s", status, stdout)
	}
	// Where a key is given (the C library's and the Python package's
	// load(path, key)), a plain tar is refused: it has nothing to check.
	if _, err := rulesource.Open(archive, []string{"a key"}, ""); err == nil || !strings.Contains(err.Error(), "a plain tar of rules, which has no signature to check") {
		t.Errorf("a plain tar with a key: %v, want it refused", err)
	}
}
