//go:build unix

package live_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// Files in a watched folder that would stop a check or cost it gigabytes:
// each is refused, quickly, and the rules in force stay in force.

// within runs f and fails the test when it has not returned when the
// test's time runs out: a check that hangs fails, with its name, instead
// of hanging the test. (A bomb is refused by a bound on what it builds,
// not by how soon: a fixed time would fail a slow machine.)
func within[T any](t *testing.T, what string, f func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(testenv.Patience(t)):
		t.Fatalf("%s had not returned when the test's time ran out", what)
		var zero T
		return zero, nil
	}
}

// aliasBomb is tests.yaml of jax@v3 with eight anchors of ten aliases of
// the one before in a case's input: a hundred million values from a few
// hundred bytes.
func aliasBomb(t *testing.T) []byte {
	t.Helper()
	parts := []string{"&l0 [" + strings.TrimSuffix(strings.Repeat("x, ", 10), ", ") + "]"}
	for i := 1; i <= 7; i++ {
		parts = append(parts, fmt.Sprintf("&l%d [%s]", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", ")))
	}
	tests := ruletest.Rules()["jax/v3/tests.yaml"].Data
	old := []byte("local_hardware_id: 0, shards: 2}")
	if !bytes.Contains(tests, old) {
		t.Fatalf("jax/v3/tests.yaml has no %q", old)
	}
	return bytes.Replace(tests, old, []byte("local_hardware_id: 0, shards: 2, bomb: ["+strings.Join(parts, ", ")+"]}"), 1)
}

func TestDirRefusesFilesThatAreNotRegular(t *testing.T) {
	tests := []struct {
		name, file string
		mk         func(string) error
		code       engine.Code // "": CodeNotRegular
	}{
		{"a named pipe for tests.yaml", "tests.yaml", func(p string) error { return syscall.Mkfifo(p, 0o644) }, ""},
		{"a named pipe beside the rules", "notes", func(p string) error { return syscall.Mkfifo(p, 0o644) }, ""},
		// Refused before its kind is looked at: it leads out of the folder.
		{"a link to /dev/zero", "tests.yaml", func(p string) error { return os.Symlink("/dev/zero", p) }, live.CodeOutsideRoot},
		{"a socket", "s", func(p string) error {
			l, err := net.Listen("unix", p)
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
			return err
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A socket's path must be short: the folder is one of its own.
			dir, err := os.MkdirTemp("", "rules")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "jax", "v3", tt.file)
			os.Remove(path)
			if err := tt.mk(path); err != nil {
				t.Fatal(err)
			}
			_, err = within(t, "Fetch", func() (*live.Candidate, error) { return live.Dir(dir).Fetch(context.Background()) })
			want := cmp.Or(tt.code, live.CodeNotRegular)
			var se *live.SourceError
			if !errors.As(err, &se) || se.Code != want || !strings.Contains(se.Message, path) {
				t.Fatalf("Fetch = %v, want a SourceError %s naming %s", err, want, path)
			}
		})
	}
}

// A named pipe swapped in after Fetch looked is refused by the gate, not
// waited on: the candidate's folder opens nothing but regular files.
func TestDirCandidateRefusesAPipeSwappedIn(t *testing.T) {
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	c, err := live.Dir(dir).Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := filepath.Join(dir, "jax", "v3", "tests.yaml")
	os.Remove(tests)
	if err := syscall.Mkfifo(tests, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = within(t, "Gate.Admit", func() (*live.Snapshot, error) { return live.Gate{}.Admit(context.Background(), c) })
	var e *engine.Error
	if r := refusal(t, err); r.Stage != live.StageVerify || !errors.As(err, &e) || e.Code != engine.CodeNotRegular {
		t.Fatalf("Admit = %v (stage %s), want refused at verify for a file that is %s", err, r.Stage, engine.CodeNotRegular)
	}
}

// A watched folder outlasts a named pipe and an alias bomb: each is
// refused while the rules before stay in force, and the next good edit is
// activated.
func TestDirWatchOutlastsHostileFiles(t *testing.T) {
	dir := t.TempDir()
	base := ruletest.Rules()
	if err := ruletest.WriteDir(dir, base); err != nil {
		t.Fatal(err)
	}
	r, events := watch(t, live.Dir(dir))
	good := r.Current()

	pipe := filepath.Join(dir, "jax", "v3", "notes")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	e := waitFor(t, events, "the named pipe's refusal", func(e live.Event) bool { return e.Outcome == live.Refused })
	if e.Refusal.Code != live.CodeNotRegular || r.Current() != good {
		t.Fatalf("a named pipe: refused with %s (%s), current changed %v; want %s, the rules before in force", e.Refusal.Code, e.Refusal.Reason, r.Current() != good, live.CodeNotRegular)
	}
	if err := os.Remove(pipe); err != nil {
		t.Fatal(err)
	}

	ruletest.WriteFile(filepath.Join(dir, "jax", "v3", "tests.yaml"), aliasBomb(t))
	e = waitFor(t, events, "the alias bomb's refusal", func(e live.Event) bool { return e.Outcome == live.Refused })
	if e.Refusal.Code != engine.CodeYAMLAliases || r.Current() != good {
		t.Fatalf("an alias bomb: refused with %s (%s), current changed %v; want %s, the rules before in force", e.Refusal.Code, e.Refusal.Reason, r.Current() != good, engine.CodeYAMLAliases)
	}

	ruletest.WriteDir(dir, ruletest.WithMarker(base, "nvfork"))
	activated(t, events, "the good edit after them", func(s *live.Snapshot) bool { return decide(t, s, "nvfork 1.0").DeviceType == "kDLCUDA" })
}
