package rules_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/dlroute/dlroute/rules"
)

// A version's evidence/ folder holds, for each release its manifest says
// was checked by run, what `python -m dlroute check` answered for it:
// one file per release run, <release>.yaml (a distribution's build:
// <release>+<distribution>.yaml), written by TestWriteEvidence
// (rules/README.md, "Evidence").
const evidenceDir = "evidence"

// evidence is one evidence file.
type evidence struct {
	Release string `yaml:"release"`
	// Build names a distribution's build of the release ("debian
	// 1:1.24.2-1+deb12u1"); empty for the project's own wheel.
	Build   string `yaml:"build,omitempty"`
	Ruleset string `yaml:"ruleset"`
	// RulesSHA256 and CasesSHA256 are the SHA-256 of the version's
	// rules.yaml and tests.yaml when it was run: a change to either
	// voids the evidence until it is run again.
	RulesSHA256 string `yaml:"rules_sha256"`
	CasesSHA256 string `yaml:"cases_sha256"`
	Run         int    `yaml:"run"`
	Agree       int    `yaml:"agree"`
	Differences int    `yaml:"differences"`
	Unreachable int    `yaml:"unreachable"`
	Python      string `yaml:"python"`
	Platform    string `yaml:"platform"`
	Date        string `yaml:"date"`
	Runner      string `yaml:"runner"`
}

// fileName is the name e must be kept under.
func (e evidence) fileName() string {
	name := e.Release
	if e.Build != "" {
		name += "+" + strings.Fields(e.Build)[0]
	}
	return name + ".yaml"
}

func digest(fsys fs.FS, name string) (string, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// runReleases reads a version's mirrors.releases.checked: the releases
// it says were run, as written.
func runReleases(fsys fs.FS, dir string) (map[string]bool, error) {
	data, err := fs.ReadFile(fsys, path.Join(dir, "manifest.yaml"))
	if err != nil {
		return nil, err
	}
	var m struct {
		Mirrors struct {
			Releases struct {
				Checked map[string]string `yaml:"checked"`
			} `yaml:"releases"`
		} `yaml:"mirrors"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	run := map[string]bool{}
	for release, how := range m.Mirrors.Releases.Checked {
		if how == "run" {
			run[release] = true
		}
	}
	return run, nil
}

// TestEvidenceMatchesTheCases: every evidence file of the embedded rules
// is the runner's clean result for the version's rules and cases as they
// are now, for a release its manifest says was run; and a version that
// keeps evidence keeps it for every release it says was run. Changing a
// version's rules.yaml or tests.yaml fails here until each release is run
// again (TestWriteEvidence).
func TestEvidenceMatchesTheCases(t *testing.T) {
	dirs, err := fs.Glob(rules.FS, "*/*/"+evidenceDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no version of the embedded rules keeps evidence; numpy's do")
	}
	for _, dir := range dirs {
		problems, err := evidenceProblems(rules.FS, path.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// evidenceProblems says what is wrong with the evidence of version
// (rules/<name>/<version>) in fsys, one line each; an error where a
// file cannot be read at all.
func evidenceProblems(fsys fs.FS, version string) ([]string, error) {
	set, v := path.Split(version)
	ref := strings.TrimSuffix(set, "/") + "@" + v
	rulesSum, err := digest(fsys, path.Join(version, "rules.yaml"))
	if err != nil {
		return nil, err
	}
	casesSum, err := digest(fsys, path.Join(version, "tests.yaml"))
	if err != nil {
		return nil, err
	}
	run, err := runReleases(fsys, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", version, err)
	}
	files, err := fs.ReadDir(fsys, path.Join(version, evidenceDir))
	if err != nil {
		return nil, err
	}
	var problems []string
	kept := map[string]bool{}
	for _, f := range files {
		name := path.Join(version, evidenceDir, f.Name())
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var e evidence
		if err := yaml.Unmarshal(data, &e); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		switch {
		case e.fileName() != f.Name():
			problems = append(problems, fmt.Sprintf("%s holds the evidence of %s; keep it as %s", name, e.Release, e.fileName()))
		case e.Ruleset != ref:
			problems = append(problems, fmt.Sprintf("%s is evidence for %s, not %s", name, e.Ruleset, ref))
		case !run[e.Release]:
			problems = append(problems, fmt.Sprintf("%s: %s's manifest does not say %s was checked by run (mirrors.releases.checked)", name, ref, e.Release))
		case e.RulesSHA256 != rulesSum || e.CasesSHA256 != casesSum:
			problems = append(problems, fmt.Sprintf("%s: %s's rules.yaml or tests.yaml changed since %s was run (%s): run it again (rules/README.md, \"Evidence\")", name, ref, e.Release, e.Date))
		case e.Differences != 0 || e.Run == 0 || e.Agree != e.Run:
			problems = append(problems, fmt.Sprintf("%s: %d cases run, %d agree, %d differences: not evidence that %s holds", name, e.Run, e.Agree, e.Differences, ref))
		case e.Python == "" || e.Platform == "" || e.Date == "" || e.Runner == "":
			problems = append(problems, fmt.Sprintf("%s: python, platform, date and runner are each required", name))
		}
		kept[e.Release] = true
	}
	for release := range run {
		if !kept[release] {
			problems = append(problems, fmt.Sprintf("%s's manifest says %s was checked by run, and %s holds no evidence of it", ref, release, path.Join(version, evidenceDir)))
		}
	}
	slices.Sort(problems)
	return problems, nil
}

// TestEvidenceCheckRefusesChangedCases: the check above fails for
// evidence whose cases changed after the run, and for a release run that
// has no evidence.
func TestEvidenceCheckRefusesChangedCases(t *testing.T) {
	dirs, err := fs.Glob(rules.FS, "*/*/"+evidenceDir)
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no evidence to change: %v", err)
	}
	// A version with two releases' evidence or more, so that one can go.
	version := ""
	for _, dir := range dirs {
		if files, _ := fs.ReadDir(rules.FS, dir); len(files) > 1 {
			version = path.Dir(dir)
			break
		}
	}
	if version == "" {
		t.Fatal("no version keeps two releases' evidence")
	}
	copyOf := func() fstest.MapFS {
		files := fstest.MapFS{}
		fs.WalkDir(rules.FS, version, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := rules.FS.ReadFile(p)
				files[p] = &fstest.MapFile{Data: data}
			}
			return nil
		})
		return files
	}
	tests := path.Join(version, "tests.yaml")
	for name, change := range map[string]func(fstest.MapFS){
		"a case added": func(f fstest.MapFS) {
			f[tests] = &fstest.MapFile{Data: append(f[tests].Data, "  - name: another\n    input: {call: __dlpack_device__}\n    want: {device_type: kDLCPU}\n"...)}
		},
		"a release run without evidence": func(f fstest.MapFS) {
			for p := range f {
				if path.Dir(p) == path.Join(version, evidenceDir) {
					delete(f, p)
					break
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			files := copyOf()
			if problems, err := evidenceProblems(files, version); err != nil || len(problems) != 0 {
				t.Fatalf("before the change: %v %v", problems, err)
			}
			change(files)
			problems, err := evidenceProblems(files, version)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) == 0 {
				t.Errorf("%s: the evidence check passed", name)
			}
		})
	}
}

// TestWriteEvidence runs `python -m dlroute check` with the interpreter
// $DLROUTE_EVIDENCE_PYTHON names (a virtual environment holding the
// library and its own dependencies) and writes, for each rule-set version
// that covers the release installed there, its evidence file; it fails,
// writing nothing for it, where a case differs. Skipped without it:
//
//	DLROUTE_EVIDENCE_PYTHON=/tmp/venv-1.24.4/bin/python go test ./rules -run TestWriteEvidence -count=1
//
// The package run is this checkout's python/ (or $DLROUTE_EVIDENCE_PACKAGE);
// $DLROUTE_EVIDENCE_LIBRARIES names the libraries to check (default:
// every one installed there), $DLROUTE_EVIDENCE_BUILD a distribution's
// build ("debian 1:1.24.2-1+deb12u1"), $DLROUTE_EVIDENCE_RUNNER how the
// runner is described; $DLROUTE_LIB, a built libdlroute, saves the build.
func TestWriteEvidence(t *testing.T) {
	python := os.Getenv("DLROUTE_EVIDENCE_PYTHON")
	if python == "" {
		t.Skip("set DLROUTE_EVIDENCE_PYTHON to the interpreter of the stack to run (rules/README.md, \"Evidence\")")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	pkg := os.Getenv("DLROUTE_EVIDENCE_PACKAGE")
	if pkg == "" {
		pkg = filepath.Join(filepath.Dir(root), "python")
	}
	env := append(os.Environ(), "PYTHONPATH="+pkg+string(os.PathListSeparator)+os.Getenv("PYTHONPATH"))
	about, err := exec.Command(python, "-c", "import platform, sys; print(platform.python_version()); print(sys.platform + '-' + platform.machine())").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	pyVersion, platform, _ := strings.Cut(strings.TrimSpace(string(about)), "\n")
	args := []string{"-m", "dlroute", "check", "--json", "--no-exchanges", "--rules", root}
	cmd := exec.Command(python, append(args, strings.Fields(os.Getenv("DLROUTE_EVIDENCE_LIBRARIES"))...)...)
	cmd.Env, cmd.Dir = env, os.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("python -m dlroute check: %v\n%s", err, stderr.String())
	}
	var report struct {
		Targets []struct {
			Library, Ruleset, Release, Ref string
			Covered                        bool
		}
		Summary []struct {
			Library, Ref                    string
			Run, Agree, Differ, Unreachable int
		}
		Differences []struct{ Ref, Case string }
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("python -m dlroute check --json: %v\n%s", err, out)
	}
	runner := os.Getenv("DLROUTE_EVIDENCE_RUNNER")
	if runner == "" {
		runner = "python -m dlroute check --no-exchanges (" + pkg + ")"
	}
	for _, target := range report.Targets {
		if !target.Covered {
			t.Errorf("%s %s: no version covers it (%s is the nearest): write one, or extend a range, first", target.Library, target.Release, target.Ref)
			continue
		}
		for _, row := range report.Summary {
			if row.Library != target.Library || row.Ref != target.Ref {
				continue
			}
			if row.Differ != 0 {
				for _, d := range report.Differences {
					if d.Ref == target.Ref {
						t.Errorf("%s %s differs: %s", target.Ref, target.Release, d.Case)
					}
				}
				continue
			}
			version := strings.Replace(target.Ref, "@", "/", 1)
			e := evidence{Release: target.Release, Build: os.Getenv("DLROUTE_EVIDENCE_BUILD"), Ruleset: target.Ref,
				Run: row.Run, Agree: row.Agree, Differences: row.Differ, Unreachable: row.Unreachable,
				Python: pyVersion, Platform: platform, Date: time.Now().UTC().Format(time.DateOnly), Runner: runner}
			dir := os.DirFS(root)
			if e.RulesSHA256, err = digest(dir, path.Join(version, "rules.yaml")); err != nil {
				t.Fatal(err)
			}
			if e.CasesSHA256, err = digest(dir, path.Join(version, "tests.yaml")); err != nil {
				t.Fatal(err)
			}
			data, err := yaml.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			head := fmt.Sprintf("# python -m dlroute check's result for %s %s (rules/README.md, \"Evidence\").\n", target.Library, target.Release)
			name := filepath.Join(root, filepath.FromSlash(version), evidenceDir, e.fileName())
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, append([]byte(head), data...), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s: %d cases run, %d agree, %d unreachable", name, row.Run, row.Agree, row.Unreachable)
		}
	}
}
