// Package ruletest makes variants of the embedded rules for tests of
// activation and serving: a marker added (a new revision that decides
// differently), a test that fails, an expression that does not compile.
package ruletest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// Rules returns a copy of the embedded jax and exchange rule sets, every
// version: the rules the host, bundle and live tests change and serve. It
// leaves out the other libraries' rule sets, which those tests do not
// read, so that their cost and their listings do not grow with every rule
// set added (each load compiles, and each gate tests, every version).
func Rules() fstest.MapFS {
	out := fstest.MapFS{}
	fs.WalkDir(rules.FS, ".", func(p string, d fs.DirEntry, err error) error {
		set, _, _ := strings.Cut(p, "/")
		if err == nil && !d.IsDir() && strings.Count(p, "/") == 2 && (set == "jax" || set == "exchange") {
			data, _ := rules.FS.ReadFile(p)
			out[p] = &fstest.MapFile{Data: data}
		}
		return nil
	})
	return out
}

// Newest returns a copy of the newest version of the embedded jax and
// exchange rule sets (and of what they import): the rules a test reads
// when it asks for "jax" or "exchange", for a host whose every load
// costs (the compiler module's): two versions of Rules' eight.
func Newest() fstest.MapFS {
	dirs := newestDirs()
	out := fstest.MapFS{}
	for p, f := range Rules() {
		if dirs[path.Dir(p)] {
			out[p] = f
		}
	}
	return out
}

// Matrix returns a copy of the newest embedded jax, jax-export and torch
// rule sets (and what they import): the fewest rules whose interop matrix
// has rows, jax's arrays into torch, for tests of how a matrix is
// served, published and cut short rather than of what it holds. A
// matrix of every shipped rule set costs seconds, eight times that under
// -race.
func Matrix() fstest.MapFS {
	dirs := matrixDirs()
	out := fstest.MapFS{}
	fs.WalkDir(rules.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && dirs[path.Dir(p)] {
			data, _ := rules.FS.ReadFile(p)
			out[p] = &fstest.MapFile{Data: data}
		}
		return nil
	})
	return out
}

var matrixDirs = sync.OnceValue(func() map[string]bool {
	return loadedDirs(rules.FS, "jax", "jax-export", "torch")
})

// newestDirs is the folders ("jax/v3", "exchange/v2") of the versions
// engine.Load compiles of Rules to answer "jax" and "exchange", imports
// included.
var newestDirs = sync.OnceValue(func() map[string]bool {
	return loadedDirs(Rules(), "jax", "exchange")
})

// loadedDirs is the folders of the versions engine.Load compiles of fsys
// to answer the rule sets named, imports included.
func loadedDirs(fsys fs.FS, names ...string) map[string]bool {
	cat, err := engine.Load(fsys, engine.Options{Select: names, SkipTests: true})
	if err != nil {
		panic("ruletest: the embedded rules do not load: " + err.Error())
	}
	dirs := map[string]bool{}
	for _, rs := range cat.RuleSets() {
		dirs[path.Join(rs.Name(), rs.Version())] = true
	}
	return dirs
}

const (
	rulesFile = "jax/v3/rules.yaml"
	testsFile = "jax/v3/tests.yaml"
	oneAPIRow = "      - {marker: oneapi, device: kDLOneAPI}\n"
)

// WithMarker adds a GPU marker to jax@v3 that decides kDLCUDA, with a
// case that tests it: "<marker> 1.0" on a gpu is then kDLCUDA, where the
// embedded rules say "Unknown GPU platform".
func WithMarker(fsys fstest.MapFS, marker string) fstest.MapFS {
	out := clone(fsys)
	row := "      - {marker: " + marker + ", device: kDLCUDA, pinned_host: kDLCUDAHost}\n"
	out[rulesFile] = &fstest.MapFile{Data: bytes.Replace(fsys[rulesFile].Data, []byte(oneAPIRow), []byte(oneAPIRow+row), 1)}
	return WithCase(out, marker)
}

// WithCase adds a case to jax@v3 that wants "<marker> 1.0" on a gpu to be
// kDLCUDA; without the marker, that case fails.
func WithCase(fsys fstest.MapFS, marker string) fstest.MapFS {
	out := clone(fsys)
	c := "  - name: the " + marker + " marker\n" +
		"    input: {platform: gpu, platform_version: " + marker + " 1.0, local_hardware_id: 0}\n" +
		"    want: {device_type: kDLCUDA, device_id: 0, rule: gpu}\n"
	out[testsFile] = &fstest.MapFile{Data: append(bytes.Clone(fsys[testsFile].Data), c...)}
	return out
}

// WithTypo misspells an input in a rule of jax@v3, so the rules do not
// compile.
func WithTypo(fsys fstest.MapFS) fstest.MapFS {
	out := clone(fsys)
	out[rulesFile] = &fstest.MapFile{Data: bytes.Replace(fsys[rulesFile].Data, []byte("platform_version.contains(m.marker)"), []byte("platform_versoin.contains(m.marker)"), 1)}
	return out
}

// SlowPlatform is the platform WithSlowRules's rules are slow for.
const SlowPlatform = "slow"

// WithSlowRules puts n rules before jax@v3's first, each a costly but
// valid expression for platform "slow" that never holds: 14,400
// comparisons over a table of 120 rows, about two thirds of the CEL cost
// limit, so it loads and every rule is evaluated in turn (about 5 ms each
// natively, 130 ms in the WebAssembly module, on a busy machine). An input on
// the slow platform keeps an evaluation busy for as long as n says, with
// no regular expression and nothing that a cost limit refuses; the tests
// of the other platforms are untouched.
func WithSlowRules(fsys fstest.MapFS, n int) fstest.MapFS {
	out := clone(fsys)
	var b strings.Builder
	b.WriteString("\n  slow_rows:\n    doc: rows for the slow rules to go over\n    columns:\n      n: int\n    rows:\n")
	for i := range 120 {
		fmt.Fprintf(&b, "      - {n: %d}\n", i)
	}
	b.WriteString("\nvalues:\n")
	data := bytes.Replace(fsys[rulesFile].Data, []byte("\nvalues:\n"), []byte(b.String()), 1)
	b.Reset()
	b.WriteString("rules:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: slow-%d\n    when: platform == '%s' && !slow_rows.all(a, slow_rows.all(b, platform_version != 'x%d'))\n    device: {type: kDLCPU, id: 0}\n\n", i, SlowPlatform, i)
	}
	out[rulesFile] = &fstest.MapFile{Data: bytes.Replace(data, []byte("\nrules:\n"), []byte("\n"+b.String()), 1)}
	return out
}

// Without removes every file of the folder dir, such as "jax/v3".
func Without(fsys fstest.MapFS, dir string) fstest.MapFS {
	out := clone(fsys)
	for p := range out {
		if strings.HasPrefix(p, dir+"/") {
			delete(out, p)
		}
	}
	return out
}

// AsVersion returns a version's manifest as the manifest of a copy of the
// version named version: the version renamed, and its mirrors.releases
// left out, since two versions never claim one release (engine.Load
// refuses them, overlapping_releases).
func AsVersion(manifest []byte, version string) []byte {
	m := versionLine.ReplaceAll(manifest, []byte("version: "+version))
	return releasesBlock.ReplaceAll(m, nil)
}

var (
	versionLine   = regexp.MustCompile(`(?m)^version: .*$`)
	releasesBlock = regexp.MustCompile(`(?m)^  releases:.*\n(?:    .*\n)*`)
)

// Bundle packs fsys.
func Bundle(fsys fs.FS, opts bundle.BuildOptions) ([]byte, *bundle.Manifest, error) {
	var buf bytes.Buffer
	m, err := bundle.Build(&buf, fsys, opts)
	return buf.Bytes(), m, err
}

// WriteDir writes fsys under dir, each file by a rename so that a watcher
// never reads half of one.
func WriteDir(dir string, fsys fstest.MapFS) error {
	for p, f := range fsys {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := WriteFile(path, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// Copy writes fsys (Rules, or the embedded rules whole) into a new
// directory of t's, as a person copies the rules to edit them, and
// returns it with the path of the rules.yaml of the version that answers
// "jax" there and that version's ref.
func Copy(t testing.TB, fsys fs.FS) (dir, rulesFile, ref string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
	for d := range newestDirs() {
		if path.Dir(d) == "jax" {
			return dir, filepath.Join(dir, filepath.FromSlash(d), engine.RulesFile), "jax@" + path.Base(d)
		}
	}
	t.Fatal("ruletest: no jax in the embedded rules")
	return
}

// WriteFile writes data to a temporary file beside path and renames it
// over path.
func WriteFile(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func clone(fsys fstest.MapFS) fstest.MapFS {
	out := fstest.MapFS{}
	for p, f := range fsys {
		out[p] = f
	}
	return out
}

// SetMember sets one member of a bundle archive, replacing its body or
// adding it at the end, and leaves the manifest as it was: a tampered
// bundle.
func SetMember(archive []byte, name string, body []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	put := func(name string, body []byte) {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
		tw.Write(body)
	}
	found := false
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		old, _ := io.ReadAll(tr)
		if hdr.Name == name {
			old, found = body, true
		}
		put(hdr.Name, old)
	}
	if !found {
		put(name, body)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes(), nil
}

// WriteWithRulesFirst writes the embedded jax@v3 alone into dir (as
// dir/jax/v3), with text, rules in rules.yaml's syntax, put before its
// first rule, and returns the line of rules.yaml where text begins: the
// rule sets the budget tests grow past a limit.
func WriteWithRulesFirst(dir, text string) (int, error) {
	sub, err := fs.Sub(rules.FS, "jax/v3")
	if err != nil {
		return 0, err
	}
	vdir := filepath.Join(dir, "jax", "v3")
	if err := os.CopyFS(vdir, sub); err != nil {
		return 0, err
	}
	path := filepath.Join(vdir, "rules.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	head, tail, ok := strings.Cut(string(data), "\nrules:\n")
	if !ok {
		return 0, errors.New("jax@v3's rules.yaml has no rules: line")
	}
	return strings.Count(head, "\n") + 3, os.WriteFile(path, []byte(head+"\nrules:\n"+text+tail), 0o644)
}

// WithSlowTests is Rules with WithSlowRules's ten slow rules in jax@v3
// and 2,000 cases on the slow platform, each of another input and each
// going through every slow rule: minutes of tests on any machine, for a
// compile of a fraction of a second. A check of these rules outlasts any
// budget a test gives it.
func WithSlowTests() fstest.MapFS {
	fsys := WithSlowRules(Rules(), 10)
	var slow strings.Builder
	slow.WriteString("cases:\n")
	for i := range 2000 {
		fmt.Fprintf(&slow, "  - name: the slow platform %d\n    input: {platform: %s, platform_version: v%d, local_hardware_id: 0}\n    want: {device_type: kDLCPU, device_id: 0}\n", i, SlowPlatform, i)
	}
	fsys[testsFile] = &fstest.MapFile{Data: bytes.Replace(fsys[testsFile].Data, []byte("cases:\n"), []byte(slow.String()), 1)}
	return fsys
}

// InsertAfter inserts lines into file after the first line that reads
// after (leading spaces aside) at or below the first that reads before,
// indented as the line that follows it: a row added to a table, a case to
// tests.yaml, as a person would. It returns the first inserted line's
// number.
func InsertAfter(file, before, after string, lines ...string) (int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	all := strings.Split(string(data), "\n")
	seen := false
	for i, line := range all {
		seen = seen || strings.TrimSpace(line) == before
		if !seen || strings.TrimSpace(line) != after || i+1 == len(all) {
			continue
		}
		next := all[i+1]
		indent := next[:len(next)-len(strings.TrimLeft(next, " "))]
		added := make([]string, len(lines))
		for j, l := range lines {
			added[j] = indent + l
		}
		all = append(all[:i+1], append(added, all[i+1:]...)...)
		return i + 2, os.WriteFile(file, []byte(strings.Join(all, "\n")), 0o644)
	}
	return 0, fmt.Errorf("%s has no line %q after %q", file, after, before)
}
