package node

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/e2e/jstools"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// tscFlags are how the declarations are checked: strict, as the projects
// that use them are, resolving "dlroute" as Node.js does (package.json's
// "exports", which names index.d.ts).
var tscFlags = []string{"--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext"}

// TestTypes checks wasm/node/index.d.ts with tsc (pinned in e2e/jstools):
// test/types-usage.ts, which uses every export as a TypeScript project
// would, and test/types-misuse.ts, whose every line under
// `// @ts-expect-error` must be refused, type-check with --strict; then
// types-usage.ts, compiled, runs against the module, so that the
// declarations also say what the package does. By hand, the check alone
// is `tsc --strict --noEmit` with tscFlags, from wasm/node.
func TestTypes(t *testing.T) {
	testenv.Short(t, "tsc on index.d.ts, and its usage run in Node.js,")
	tsc := jstools.Path(t, ".bin/tsc")
	node := nodeBinary(t, "tsc does not run")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = packageDir
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// One tsc run type-checks both files and writes the usage's JavaScript
	// into a project with the package in node_modules, to be run there.
	project := t.TempDir()
	pkg, _ := filepath.Abs(packageDir)
	os.Mkdir(filepath.Join(project, "node_modules"), 0o755)
	if err := os.Symlink(pkg, filepath.Join(project, "node_modules", "dlroute")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	declared := exportsDeclared(t)
	usage, _ := os.ReadFile(filepath.Join(packageDir, "test", "types-usage.ts"))
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if !regexp.MustCompile(`(?m)^  ` + name + `,$`).Match(usage) {
			t.Errorf("index.d.ts declares %s, and test/types-usage.ts does not import it", name)
		}
	}
	var values []string
	for name, isValue := range declared {
		if isValue {
			values = append(values, name)
		}
	}
	slices.Sort(values)
	if got := strings.Fields(run(node, "--input-type=module", "-e", `console.log(Object.keys(await import("./index.mjs")).sort().join(" "))`)); !slices.Equal(got, values) {
		t.Errorf("index.mjs exports %v; index.d.ts declares the values %v", got, values)
	}

	run(node, append([]string{tsc, "--outDir", project, "--rootDir", "test"}, append(tscFlags, "test/types-usage.ts", "test/types-misuse.ts")...)...)
	module, _, err := wasmbuild.Module(context.Background(), wasmbuild.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	modulePath := filepath.Join(project, "dlroute.wasm")
	if err := os.WriteFile(modulePath, module, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(project, "types-usage.js"))
	cmd.Dir = packageDir
	cmd.Env = append(os.Environ(), wasmbuild.EnvModule+"="+modulePath)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "types-usage: ok" {
		t.Fatalf("node types-usage.js: %v\n%s", err, out)
	}
}

// exportsDeclared reads index.d.ts's exports: each name, and whether it is
// a value (a const, function or class) rather than a type.
func exportsDeclared(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(packageDir, "index.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^export (const|function|class|interface|type) (\w+)`).FindAllStringSubmatch(string(src), -1) {
		names[m[2]] = m[1] != "interface" && m[1] != "type"
	}
	if len(names) == 0 {
		t.Fatal("index.d.ts declares no exports that exportsDeclared can read")
	}
	return names
}
