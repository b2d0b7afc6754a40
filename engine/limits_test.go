package engine_test

import (
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/engine"
)

// The limits on rule files (readfile.go, source.go): every attack here is
// refused with its code, at its place, without a load that takes seconds,
// gigabytes, or forever.

// aliasBomb is a YAML flow list of levels+1 anchors, each a list of ten
// aliases of the one before: a few hundred bytes that name 10^(levels+1)
// values.
func aliasBomb(levels int) string {
	parts := []string{"&l0 [" + strings.TrimSuffix(strings.Repeat("x, ", 10), ", ") + "]"}
	for i := 1; i <= levels; i++ {
		parts = append(parts, fmt.Sprintf("&l%d [%s]", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", ")))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// loadBounded loads fsys in a goroutine and returns its error and what it
// allocated, failing the test when Load has not returned after 5 s: a load
// that hangs fails the test instead of hanging it.
//
//lint:ignore ST1008 a test helper: Load's error, then what the load cost, read as a pair
func loadBounded(t *testing.T, fsys fs.FS) (error, uint64) {
	t.Helper()
	type result struct {
		err   error
		alloc uint64
	}
	done := make(chan result, 1)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := engine.Load(fsys, engine.Options{})
		runtime.ReadMemStats(&after)
		done <- result{err, after.TotalAlloc - before.TotalAlloc}
	}()
	select {
	case r := <-done:
		return r.err, r.alloc
	case <-time.After(5 * time.Second):
		t.Fatalf("Load has not returned after 5 s")
		return nil, 0
	}
}

// refusedWith returns the error of err with code, failing the test when
// there is none.
func refusedWith(t *testing.T, err error, code engine.Code) *engine.Error {
	t.Helper()
	for _, e := range engine.Errors(err) {
		if e.Code == code {
			return e
		}
	}
	t.Fatalf("Load error = %v; want one with code %s", err, code)
	return nil
}

// An alias bomb in each place where aliases are followed: a case's input,
// an input's default, a table's cell. Eight anchors, a hundred million
// values: seven (ten million) took 4 GB and 20 s before aliases had a
// budget.
func TestLoadRefusesAliasBombs(t *testing.T) {
	bomb := aliasBomb(7)
	tests := []struct{ name, file, old, new string }{
		{"a case input", "jax/v3/tests.yaml", "input: {platform: gpu, platform_version: cuda 12030, local_hardware_id: 0, shards: 2}",
			"input: {platform: gpu, platform_version: cuda 12030, local_hardware_id: 0, shards: 2, bomb: " + bomb + "}"},
		{"an input default", "jax/v3/rules.yaml", "    type: int\n    default: 1\n", "    type: int\n    default: " + bomb + "\n"},
		{"a table cell", "jax/v3/rules.yaml", "{marker: oneapi, device: kDLOneAPI}", "{marker: " + bomb + ", device: kDLOneAPI}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := versionFS(t, "v3")
			edit(t, fsys, tt.file, tt.old, tt.new)
			err, alloc := loadBounded(t, fsys)
			e := refusedWith(t, err, engine.CodeYAMLAliases)
			if first := engine.Errors(err)[0]; first != e {
				t.Errorf("the first error is %v; want the alias budget's, the cause of the others", first)
			}
			if e.Pos == nil || e.Pos.File != "rules/"+tt.file || e.Pos.Column < 1 || !strings.HasPrefix(e.Source[e.Pos.Column-1:], "*l") {
				t.Errorf("the refusal is at %v (line %q), want an alias of the bomb in %s", e.Pos, e.Source, tt.file)
			}
			t.Logf("refused after %d KiB: %v", alloc>>10, e)
			if alloc > 64<<20 {
				t.Errorf("Load allocated %d MiB refusing the bomb, want under 64", alloc>>20)
			}
		})
	}
}

func TestLoadRefusesAliasCycles(t *testing.T) {
	fsys := versionFS(t, "v3")
	text := edit(t, fsys, "jax/v3/tests.yaml", "shards: 2}", "shards: 2, loop: &a [x, *a]}")
	err, _ := loadBounded(t, fsys)
	e := refusedWith(t, err, engine.CodeYAMLAliases)
	line, col := positionOf(t, text, "*a]")
	if e.Pos.Line != line || e.Pos.Column != col {
		t.Errorf("the cycle is refused at %v, want line %d column %d", e.Pos, line, col)
	}
}

func TestLoadRefusesDeepValues(t *testing.T) {
	fsys := versionFS(t, "v3")
	deep := strings.Repeat("[", engine.MaxYAMLDepth+1) + strings.Repeat("]", engine.MaxYAMLDepth+1)
	edit(t, fsys, "jax/v3/tests.yaml", "shards: 2}", "shards: 2, deep: "+deep+"}")
	err, _ := loadBounded(t, fsys)
	refusedWith(t, err, engine.CodeYAMLDepth)
}

// Aliases within the budget still work: a value written once in a case
// input and used again by the next.
func TestLoadFollowsAliasesWithinTheBudget(t *testing.T) {
	fsys := versionFS(t, "v3")
	edit(t, fsys, "jax/v3/tests.yaml", "input: {platform: cpu, platform_version: cpu, memory_kind: device, local_hardware_id: 0}",
		"input: {platform: &cpu cpu, platform_version: cpu, memory_kind: device, local_hardware_id: 0}")
	edit(t, fsys, "jax/v3/tests.yaml", "input: {platform: cpu, platform_version: cpu, local_hardware_id: 5}", "input: {platform: *cpu, platform_version: *cpu, local_hardware_id: 5}")
	if err, _ := loadBounded(t, fsys); err != nil {
		t.Fatal(err)
	}
}

// countingFS reports how many bytes were read from each file; its file
// big claims to be 100 MB.
type countingFS struct {
	fstest.MapFS
	big   string
	read  map[string]int64
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens[name]++
	f, err := c.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c, name: name}, nil
}

func (c *countingFS) Stat(name string) (fs.FileInfo, error) {
	st, err := c.MapFS.Stat(name)
	if err == nil && name == c.big {
		st = bigInfo{st}
	}
	return st, err
}

type countingFile struct {
	fs.File
	fs   *countingFS
	name string
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.fs.read[f.name] += int64(n)
	return n, err
}

func (f *countingFile) Stat() (fs.FileInfo, error) { return f.fs.Stat(f.name) }

type bigInfo struct{ fs.FileInfo }

func (bigInfo) Size() int64 { return 100 << 20 }

// A file larger than MaxRuleFileSize is refused from its size, before a
// byte of it is read; every other file is opened once (not again for
// Options.Reuse's key).
func TestLoadChecksSizeBeforeReading(t *testing.T) {
	c := &countingFS{MapFS: versionFS(t, "v3"), big: "jax/v3/tests.yaml", read: map[string]int64{}, opens: map[string]int{}}
	err, _ := loadBounded(t, c)
	e := refusedWith(t, err, engine.CodeTooLong)
	if e.Pos == nil || e.Pos.File != "rules/jax/v3/tests.yaml" {
		t.Errorf("too_long at %v, want rules/jax/v3/tests.yaml", e.Pos)
	}
	if n := c.read[c.big]; n != 0 {
		t.Errorf("Load read %d bytes of a 100 MB file before refusing it", n)
	}
	for _, name := range []string{"manifest.yaml", "device_types.yaml", "rules.yaml"} {
		if n := c.opens["jax/v3/"+name]; n != 1 {
			t.Errorf("Load opened %s %d times, want once", name, n)
		}
	}
}

// A file whose size was misreported is still read no further than one
// byte past the limit.
func TestLoadReadsNoFurtherThanTheLimit(t *testing.T) {
	fsys := versionFS(t, "v3")
	fsys["jax/v3/tests.yaml"].Data = make([]byte, 4*engine.MaxRuleFileSize)
	c := &countingFS{MapFS: fsys, read: map[string]int64{}, opens: map[string]int{}}
	small := &lyingFS{c}
	err, _ := loadBounded(t, small)
	refusedWith(t, err, engine.CodeTooLong)
	if n := c.read["jax/v3/tests.yaml"]; n > engine.MaxRuleFileSize+1 {
		t.Errorf("Load read %d bytes of a file it could refuse after %d", n, engine.MaxRuleFileSize+1)
	}
}

// lyingFS says every file is 10 bytes.
type lyingFS struct{ *countingFS }

func (l *lyingFS) Stat(name string) (fs.FileInfo, error) {
	st, err := l.countingFS.Stat(name)
	if err == nil && !st.IsDir() {
		st = smallInfo{st}
	}
	return st, err
}

func (l *lyingFS) Open(name string) (fs.File, error) {
	f, err := l.countingFS.Open(name)
	if err != nil {
		return nil, err
	}
	return lyingFile{f.(*countingFile)}, nil
}

type lyingFile struct{ *countingFile }

func (f lyingFile) Stat() (fs.FileInfo, error) {
	st, err := f.countingFile.File.Stat()
	if err == nil && !st.IsDir() {
		st = smallInfo{st}
	}
	return st, err
}

func (f lyingFile) Read(p []byte) (int, error) { return f.countingFile.Read(p) }

type smallInfo struct{ fs.FileInfo }

func (smallInfo) Size() int64 { return 10 }
