package python

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/ctest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// repoRoot is the repository's root, from this package's directory: the
// Python package, its tests and the pinned requirements are there.
const repoRoot = "../.."

// A pythonStack is one interpreter and the pinned requirements the Python
// tests run on: a virtual environment of base with requirements installed.
type pythonStack struct {
	name         string
	requirements string // relative to the repository root
	// base finds the interpreter, or says what is missing and how to
	// install it.
	base func() (python, missing string)
	// systemSite lets the environment see base's own packages (Debian's
	// python3-torch).
	systemSite bool
	// uv installs the requirements with uv (pinned, installed by pip
	// first): the multi-GB torch install is faster (e2e/RATIONALE.md, "Why
	// does the Python 3.12 stack install with uv?").
	uv bool
	// system names the releases base itself provides, outside
	// requirements (Debian's torch), and the version the runner checks
	// each against: it names no release range, so the nearest answers.
	system map[string]systemRelease
}

// A systemRelease is a library the interpreter provides: its installed
// version and the rule-set version the runner must choose for it.
type systemRelease struct{ release, ref string }

// checkedLibraries are the libraries each stack's runner must check: each
// is named, so one that is missing or does not import fails the run.
var checkedLibraries = []string{"numpy", "torch", "jax"}

// uvRequirement is the uv that installs the 3.12 stack.
const uvRequirement = "uv==0.9.5"

// uvInstall is how uv installs it: unlike pip, uv writes no bytecode
// unless asked, and the tests run with PYTHONDONTWRITEBYTECODE, so
// without it every interpreter the tests start (the runner's children,
// the forked answerers) compiled torch and jax again (BENCHMARKS.md,
// "Installing the Python 3.12 stack").
var uvInstall = []string{"pip", "install", "--quiet", "--compile-bytecode"}

var pythonStacks = []pythonStack{
	{
		name:         "py3.11-debian",
		requirements: "python/requirements-py311.txt",
		base:         debianPython,
		systemSite:   true,
		system:       map[string]systemRelease{"torch": {"1.13.0a0+gitunknown", "torch@v1"}},
	},
	{
		name:         "py3.12-pypi",
		requirements: "python/requirements-py312.txt",
		base:         pyenvPython("3.12"),
		uv:           true,
	},
}

// TestPython runs the Python package's tests (python/tests) with pytest
// over the library and the dlroute command built from this checkout
// (once for both), on each stack, the two side by side (e2e/RATIONALE.md,
// "Why do the Python stacks run side by side?"): Debian's Python 3.11 with its
// torch 1.13, jax 0.10.2 and numpy 2.4.6; and pyenv's Python 3.12 with
// PyPI's numpy, jax and torch of today. Each stack's
// virtual environment is made once in the user cache directory and kept
// by a hash of its requirements. $DLROUTE_PYTHON names one interpreter to
// run instead.
//
// Each step is a subtest, which the test command prints as it ends: the
// build of the library and the command, the stack's venv, each test file
// of pytest's one run, and check, which checks the conformance runner's
// report (`python -m dlroute check`), made once per stack inside that run
// (the session fixture report of python/tests/conftest.py, which
// test_real_libraries.py and test_check.py read) and handed over by the
// pytest plugin dlroute_e2e.py.
func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python tests take minutes")
	}
	// A step of its own, which the test command prints as it ends; the
	// command in TestPython's directory, which outlives the step.
	b := built{cli: filepath.Join(t.TempDir(), "dlroute")}
	if !t.Run("build", func(t *testing.T) {
		b.lib = filepath.Join(ctest.Library(t), "libdlroute.so")
		buildCLI(t, b.cli)
	}) {
		return
	}
	if p := os.Getenv("DLROUTE_PYTHON"); p != "" {
		runPythonTests(t, p, b, nil)
		return
	}
	for _, s := range pythonStacks {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			var python string
			t.Run("venv", func(t *testing.T) { python = venvFor(t, s) })
			if python == "" {
				t.SkipNow() // the venv step said why
			}
			runPythonTests(t, python, b, &s)
		})
	}
}

// built is what the Python tests run on, built from this checkout once
// for every stack: the library and the dlroute command.
type built struct{ lib, cli string }

// buildCLI builds the dlroute command of this checkout as bin, for the
// tests' dlroute_cli fixture (python/tests/conftest.py), which builds it
// itself where $DLROUTE_CLI does not name one.
func buildCLI(t *testing.T, bin string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", bin, "github.com/dlroute/dlroute/cmd/dlroute")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dlroute: %v\n%s", err, out)
	}
}

// runPythonTests runs pytest on python/tests with python, each test file
// a subtest of t, then checks the conformance runner's report that the
// run made, in the subtest check: every case agrees and, where s is not
// nil, the releases checked are those s pins (checkTargets).
func runPythonTests(t *testing.T, python string, b built, s *pythonStack) {
	report, passed := pytest(t, python, b)
	if report == nil && !passed {
		return // pytest's failure says why
	}
	t.Run("check", func(t *testing.T) {
		if report == nil {
			t.Fatalf("pytest's run handed over no conformance report: the %s fixture of %s did not run (or %s no longer finds it)", "report", "python/tests/conftest.py", "e2e/python/dlroute_e2e.py")
		}
		t.Logf("python -m dlroute check %s, as pytest's run made it:\n%s", strings.Join(checkedLibraries, " "), report.Table)
		for _, d := range report.Report.Differences {
			t.Errorf("%s: %s\n    rules:   %s\n    library: %s", d.Ref, d.Case, d.Want, d.Got)
		}
		if s != nil {
			checkTargets(t, *s, report.Report)
		}
	})
}

// A pytestEvent is a line the plugin dlroute_e2e.py writes.
type pytestEvent struct {
	Event   string // "start" (a test starts), "step" (the runner's), "end" (it ended) or "report"
	Test    string // the test's node id, tests/<file>::<name>
	Step    string // the rule-set version the runner starts, or "exchanges"
	Outcome string // passed, failed or skipped
	Report  runnerReport
	Table   string // the report as the command prints it
}

// pytest runs pytest on python/tests in one process, with the plugin
// dlroute_e2e.py, and reports each test of it as a subtest of t, under
// one for its file, each ending as pytest's test does and failing where
// it failed; the conformance runner's steps inside a test are subtests
// of it. It returns the conformance runner's report the run handed
// over (nil if none), and whether pytest passed; the run's output is
// logged in t once it ends.
func pytest(t *testing.T, python string, b built) (*pytestEvent, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	args := []string{"-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "dlroute_e2e", "python/tests"}
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), wasmbuild.EnvLibrary+"="+b.lib, "DLROUTE_CLI="+b.cli, "PYTHONDONTWRITEBYTECODE=1",
		"PYTHONPATH=python"+string(filepath.ListSeparator)+"e2e/python", "DLROUTE_E2E_FD=3")
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = []*os.File{w} // fd 3
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan pytestEvent)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 64<<20) // the report is one line
		for sc.Scan() {
			var e pytestEvent
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				e = pytestEvent{Event: fmt.Sprintf("unreadable (%v): %.200q", err, sc.Bytes())}
			}
			lines <- e
		}
	}()
	var report *pytestEvent
	// next is the next start or end event, the report kept aside.
	next := func() (pytestEvent, bool) {
		for e := range lines {
			if e.Event == "report" {
				report = &e
				continue
			}
			return e, true
		}
		return pytestEvent{}, false
	}
	e, more := next()
	for more {
		file, _, _ := strings.Cut(e.Test, "::")
		if e.Event != "start" {
			t.Errorf("dlroute_e2e.py wrote %s %s, where a test's start was due", e.Event, e.Test)
			e, more = next()
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			for more && e.Event == "start" && strings.HasPrefix(e.Test, file+"::") {
				test := e.Test
				t.Run(strings.TrimPrefix(test, file+"::"), func(t *testing.T) {
					e, more = next()
					// The conformance runner's steps, each a subtest
					// that ends as the next event comes.
					for more && e.Event == "step" {
						t.Run(e.Step, func(t *testing.T) { e, more = next() })
					}
					switch {
					case !more || e.Event != "end" || e.Test != test:
						t.Fatalf("pytest went on to %s %s before %s ended", e.Event, e.Test, test)
					case e.Outcome == "failed":
						t.Errorf("%s failed (pytest's output, logged once it ends, says why)", test)
					case e.Outcome == "skipped":
						t.Skipf("%s skipped (pytest's output says why)", test)
					}
				})
				if more && e.Event == "end" && e.Test == test {
					e, more = next()
				}
			}
		})
	}
	err = cmd.Wait()
	t.Logf("%s %s:\n%s", python, strings.Join(args, " "), out.String())
	if ctx.Err() != nil {
		t.Fatalf("pytest ran past its time, %s", testenv.Patience(t))
	}
	if err != nil {
		t.Errorf("pytest: %v", err)
		return report, false
	}
	return report, true
}

// A runnerReport is the conformance runner's report, as `python -m
// dlroute check --json` prints it: the parts these tests read.
type runnerReport struct {
	Targets []struct {
		Library, Ruleset, Release, Ref string
		Covered                        bool
	}
	// Summary is a row per library (or exchange, "numpy->jax") and version.
	Summary []struct {
		Library, Ref                    string
		Run, Agree, Differ, Unreachable int
	}
	Differences []struct {
		Ref, Case string
		Want, Got json.RawMessage
	}
}

// checkTargets asserts that the runner's report checked the
// releases s pins (its requirements file, and its system releases): each
// library's targets are that release, covered by the rule-set version
// chosen, or, for a system release, its expected nearest version.
func checkTargets(t *testing.T, s pythonStack, report runnerReport) {
	t.Helper()
	pins, err := pinnedReleases(filepath.Join(repoRoot, s.requirements))
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range checkedLibraries {
		want, ok := pins[lib]
		sys, isSystem := s.system[lib]
		if isSystem {
			want = sys.release
		} else if !ok {
			t.Fatalf("%s pins no %s and the stack names no system release of it", s.requirements, lib)
		}
		n := 0
		for _, tg := range report.Targets {
			if tg.Library != lib {
				continue
			}
			n++
			if tg.Release != want {
				t.Errorf("%s: the runner checked %s %s, want %s (%s)", s.name, lib, tg.Release, want, s.requirements)
			}
			switch {
			case isSystem && tg.Ref != sys.ref:
				t.Errorf("%s: %s %s was checked by %s, want %s", s.name, lib, tg.Release, tg.Ref, sys.ref)
			case !tg.Covered:
				t.Errorf("%s: %s %s: %s is only the nearest version; no version covers it", s.name, lib, tg.Release, tg.Ref)
			}
		}
		if n == 0 {
			t.Errorf("%s: the runner checked no %s", s.name, lib)
		}
	}
	// jax as a consumer of numpy's arrays: every exchange of the run,
	// which is the stack's one run of the whole runner, agrees (none
	// unreachable, none differing), as python/tests/test_check.py's
	// test_jax_as_a_consumer_is_run states.
	intoJax := 0
	for _, row := range report.Summary {
		if row.Library != "numpy->jax" {
			continue
		}
		intoJax += row.Run
		if row.Agree != row.Run || row.Unreachable != 0 {
			t.Errorf("%s: numpy->jax by %s: %d run, %d agree, %d unreachable; want every exchange run and agreeing", s.name, row.Ref, row.Run, row.Agree, row.Unreachable)
		}
	}
	if intoJax == 0 {
		t.Errorf("%s: the runner exchanged none of numpy's arrays into jax", s.name)
	}
	// jax is checked by its three rule sets: __dlpack_device__ (jax), its
	// export (jax-export) and its from_dlpack (jax-import).
	ruleSets := map[string]bool{}
	for _, tg := range report.Targets {
		if tg.Library == "jax" {
			ruleSets[tg.Ruleset] = true
		}
	}
	for _, name := range []string{"jax", "jax-export", "jax-import"} {
		if !ruleSets[name] {
			t.Errorf("%s: the runner checked jax by no version of %s", s.name, name)
		}
	}
}

// pinnedReleases reads a requirements file's name==release pins, by the
// lower-cased name.
func pinnedReleases(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pins := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		name, release, ok := strings.Cut(strings.TrimSpace(line), "==")
		if ok {
			pins[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(release)
		}
	}
	return pins, nil
}

// venvFor returns the interpreter of s's virtual environment, making it
// on first use (once per change of its requirements).
func venvFor(t *testing.T, s pythonStack) string {
	t.Helper()
	base, missing := s.base()
	if missing != "" {
		testenv.Missing(t, missing)
	}
	reqs, err := os.ReadFile(filepath.Join(repoRoot, s.requirements))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append([]byte(base+"\n"+uvRequirement+" "+strings.Join(uvInstall, " ")+"\n"), reqs...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	venv := filepath.Join(cache, "dlroute", "venv-"+s.name+"-"+hex.EncodeToString(sum[:])[:16])
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(filepath.Join(venv, ".complete")); err == nil {
		return python
	}
	t.Logf("making %s (once per change of %s)", venv, s.requirements)
	os.RemoveAll(venv)
	mk := []string{base, "-m", "venv"}
	if s.systemSite {
		mk = append(mk, "--system-site-packages")
	}
	steps := [][]string{append(mk, venv)}
	req := filepath.Join(repoRoot, s.requirements)
	if s.uv {
		steps = append(steps,
			[]string{python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", uvRequirement},
			append(append([]string{filepath.Join(venv, "bin", "uv")}, uvInstall...), "--python", python, "-r", req))
	} else {
		steps = append(steps, []string{python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", req})
	}
	for _, args := range steps {
		start := time.Now()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		t.Logf("%s: %s", strings.Join(args[:3], " "), time.Since(start).Round(time.Second))
	}
	if err := os.WriteFile(filepath.Join(venv, ".complete"), reqs, 0o644); err != nil {
		t.Fatal(err)
	}
	return python
}

// debianPython is Debian's /usr/bin/python3 where it sees python3-torch.
func debianPython() (string, string) {
	base := "/usr/bin/python3"
	if _, err := os.Stat(base); err != nil {
		return "", "no /usr/bin/python3, so the Python 3.11 stack does not run (apt-get install -y python3 python3-venv python3-torch)"
	}
	// find_spec finds them without importing torch, which takes seconds.
	if exec.Command(base, "-c", "import importlib.util as u, sys; sys.exit(not (u.find_spec('torch') and u.find_spec('venv')))").Run() != nil {
		return "", "/usr/bin/python3 lacks torch or venv, so the Python 3.11 stack does not run (apt-get install -y python3-venv python3-torch)"
	}
	return base, ""
}

// pyenvPython finds pyenv's interpreter of a minor version: `pyenv prefix`,
// else the newest ~/.pyenv/versions/<minor>.*.
func pyenvPython(minor string) func() (string, string) {
	return func() (string, string) {
		if out, err := exec.Command("pyenv", "prefix", minor).Output(); err == nil {
			p := filepath.Join(strings.TrimSpace(string(out)), "bin", "python")
			if _, err := os.Stat(p); err == nil {
				return p, ""
			}
		}
		home, _ := os.UserHomeDir()
		found, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", minor+".*", "bin", "python"))
		if len(found) == 0 {
			return "", "no Python " + minor + " (pyenv install " + minor + "), so the Python " + minor + " stack does not run"
		}
		sort.Slice(found, func(i, j int) bool { return newerPatch(found[i], found[j]) })
		return found[0], ""
	}
}

// newerPatch orders .../3.12.10/bin/python before .../3.12.9/bin/python.
func newerPatch(a, b string) bool {
	pa, pb := filepath.Base(filepath.Dir(filepath.Dir(a))), filepath.Base(filepath.Dir(filepath.Dir(b)))
	na, nb := strings.Split(pa, "."), strings.Split(pb, ".")
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			if len(na[i]) != len(nb[i]) {
				return len(na[i]) > len(nb[i])
			}
			return na[i] > nb[i]
		}
	}
	return len(na) > len(nb)
}
