package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/machine"
)

// TestExchangeFixture: testdata/array.bin is what exchange.txt says it is,
// the float32 values 0 to 1023, little-endian.
func TestExchangeFixture(t *testing.T) {
	want := make([]byte, 0, 4096)
	for i := range 1024 {
		want = binary.LittleEndian.AppendUint32(want, math.Float32bits(float32(i)))
	}
	if got, err := os.ReadFile("testdata/array.bin"); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("testdata/array.bin: %d bytes (%v), want the 4096 bytes of float32 0..1023", len(got), err)
	}
}

// source is a copy of testdata/array.bin in a test's own directory, with
// an old modification time: the test fails if anything writes to it.
type source struct {
	path, dir string
	data      []byte
	mtime     time.Time
}

func newSource(t *testing.T) source {
	t.Helper()
	data, err := os.ReadFile("testdata/array.bin")
	if err != nil {
		t.Fatal(err)
	}
	s := source{dir: t.TempDir(), data: data, mtime: time.Date(2026, 8, 27, 12, 0, 0, 0, time.UTC)}
	s.path = filepath.Join(s.dir, "array.bin")
	if err := os.WriteFile(s.path, data, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(s.path, s.mtime, s.mtime); err != nil {
		t.Fatal(err)
	}
	return s
}

// intact fails the test if the source's bytes or modification time
// changed, or if anything but the files named was left in its directory
// (a temporary file of --out).
func (s source) intact(t *testing.T, what string, others ...string) {
	t.Helper()
	data, err := os.ReadFile(s.path)
	st, serr := os.Stat(s.path)
	if err != nil || serr != nil || !bytes.Equal(data, s.data) || !st.ModTime().Equal(s.mtime) {
		t.Errorf("%s: the source changed (%v, %v)", what, err, serr)
	}
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if e.Name() != "array.bin" && !slices.Contains(others, e.Name()) {
			t.Errorf("%s: left %s in the directory", what, e.Name())
		}
	}
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

var engines = []string{"native", "wasm"}

// TestExchangeEnginesAgree carries out exchanges with both engines over
// the same buffer file: the outputs are identical, and the seed's case
// makes a real copy, written to --out, whose bytes are the source's.
func TestExchangeEnginesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the WebAssembly module; skipped with -short")
	}
	src := newSource(t)
	isCopied := "DLPACK_FLAG_BITMASK_IS_COPIED"
	tests := []struct {
		name  string
		input []string
		check func(out exchangeOutput, written []byte) string
	}{
		{"the seed's unknown platform is copied into host memory",
			[]string{"--platform", "gpu", "--platform-version", "<unknown>", "--local-hardware-id", "0", "--max-version", "1,1"},
			func(out exchangeOutput, written []byte) string {
				b := out.Buffer
				if b == nil || b.DeviceType != "kDLCPU" || b.DeviceTypeCode != 1 || b.DeviceID != 0 || !b.Copied || !slices.Contains(b.Flags, isCopied) {
					return fmt.Sprintf("buffer %+v, want a copy on (kDLCPU, 0) with IS_COPIED", b)
				}
				if !bytes.Equal(written, src.data) || b.SHA256 != sha(written) || b.SHA256 != out.Source.SHA256 || b.Size != 4096 {
					return fmt.Sprintf("--out holds %d bytes (sha256 %s); want the source's 4096, sha256 %s", len(written), b.SHA256, out.Source.SHA256)
				}
				return ""
			}},
		{"CUDA memory with no request is exported in place",
			[]string{"--platform", "gpu", "--platform-version", "cuda 12030", "--local-hardware-id", "0"},
			func(out exchangeOutput, written []byte) string {
				if b := out.Buffer; b == nil || b.Copied || b.DeviceType != "kDLCUDA" || b.SHA256 != sha(src.data) || written != nil {
					return fmt.Sprintf("buffer %+v, --out %d bytes; want the source on kDLCUDA and no copy", b, len(written))
				}
				return ""
			}},
		{"copy=False on the unknown platform is a BufferError",
			[]string{"--platform", "gpu", "--platform-version", "<unknown>", "--local-hardware-id", "0", "--copy", "false"},
			func(out exchangeOutput, written []byte) string {
				if out.Buffer != nil || !strings.Contains(string(out.Decision), `"type":"BufferError"`) || written != nil {
					return fmt.Sprintf("decision %s, buffer %+v; want a BufferError and no buffer", out.Decision, out.Buffer)
				}
				return ""
			}},
		{"pinned host memory is exported on the host in place",
			[]string{"--platform", "gpu", "--platform-version", "cuda 12030", "--memory-kind", "pinned_host", "--local-hardware-id", "0", "--dl-device", "1,0", "--max-version", "1,0"},
			func(out exchangeOutput, written []byte) string {
				if b := out.Buffer; b == nil || b.Copied || b.DeviceType != "kDLCPU" || len(b.Flags) != 0 || b.SHA256 != sha(src.data) || written != nil {
					return fmt.Sprintf("buffer %+v; want the source on kDLCPU, no flags, no copy", b)
				}
				return ""
			}},
	}
	for _, tt := range tests {
		var outputs []string
		for _, kind := range engines {
			out := filepath.Join(src.dir, kind+".out")
			args := append([]string{"exchange", "--engine", kind, "--buffer", src.path, "--out", out}, tt.input...)
			stdout, stderr, status := runDlroute(t, args...)
			written, _ := os.ReadFile(out)
			os.Remove(out)
			var got exchangeOutput
			if status != 0 || stderr != "" || json.Unmarshal([]byte(stdout), &got) != nil {
				t.Errorf("%s, --engine %s: status %d, stdout %s, stderr %s", tt.name, kind, status, stdout, stderr)
				continue
			}
			if msg := tt.check(got, written); msg != "" {
				t.Errorf("%s, --engine %s: %s", tt.name, kind, msg)
			}
			outputs = append(outputs, stdout)
			src.intact(t, tt.name)
		}
		if len(outputs) == 2 && outputs[0] != outputs[1] {
			t.Errorf("%s: the engines differ:\nnative %s\nwasm   %s", tt.name, outputs[0], outputs[1])
		}
	}
}

// TestExchangeBadInput: each bad input is a clear error or the rules'
// exception, with its exit status; --out is never written and the source
// never changes. The module's part runs where it has one of its own (a
// copy it refuses): wasmhost's TestExchangeEnginesAgree compares every
// case's decision across the engines, and a module costs seconds a start
// under -race.
func TestExchangeBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the WebAssembly module; skipped with -short")
	}
	src := newSource(t)
	empty := filepath.Join(src.dir, "empty.bin")
	os.WriteFile(empty, nil, 0o444)
	out := filepath.Join(src.dir, "copy.out")
	cuda := []string{"--platform", "gpu", "--platform-version", "cuda 12030", "--local-hardware-id", "0"}
	tests := []struct {
		name   string
		args   []string
		status int
		want   string // in stdout for status 0, else in stderr
		wasm   bool   // with --engine wasm too (free for what fails before the engine starts)
	}{
		{"a missing buffer file", []string{"--buffer", filepath.Join(src.dir, "nothing.bin"), "--platform", "cpu", "--platform-version", "cpu"}, 1,
			"error: reading the buffer: open " + filepath.Join(src.dir, "nothing.bin"), true},
		{"an empty buffer file", []string{"--buffer", empty, "--platform", "cpu", "--platform-version", "cpu"}, 1, "is empty\nhint: ", true},
		{"a dl_device that is not a pair", append([]string{"--buffer", src.path, "--dl-device", "1"}, cuda...), 0,
			`{"type":"ValueError","message":"dl_device must be a pair (device_type, device_id); got 1 values"}`, false},
		{"a dl_device of an unknown type code", append([]string{"--buffer", src.path, "--dl-device", "99,0"}, cuda...), 0,
			`{"type":"ValueError","message":"dl_device names device type 99, which is not a DLPack device type"}`, false},
		{"copy=True on the GPU", append([]string{"--buffer", src.path, "--copy", "true"}, cuda...), 1,
			"error: rule copy-on-device copies the array on (kDLCUDA, 0), and this host copies only into host memory (kDLCPU, 0)\nhint: there is no device copier here", true},
		{"--out names the source", []string{"--buffer", src.path, "--out", src.path, "--platform", "cpu", "--platform-version", "cpu", "--copy", "true"}, 2,
			"is the --buffer file; the source is never written", true},
	}
	for _, tt := range tests {
		for _, kind := range engines {
			if kind == "wasm" && !tt.wasm {
				continue
			}
			args := append([]string{"exchange", "--engine", kind, "--out", out}, tt.args...)
			stdout, stderr, status := runDlroute(t, args...)
			where := stderr
			if tt.status == 0 {
				where = stdout
			}
			if status != tt.status || !strings.Contains(where, tt.want) {
				t.Errorf("%s, --engine %s: status %d, stdout %q, stderr %q; want status %d and %q", tt.name, kind, status, stdout, stderr, tt.status, tt.want)
			}
			if tt.status == 0 && !strings.HasSuffix(stdout, `"buffer":null}`+"\n") || tt.status != 0 && stdout != "" {
				t.Errorf("%s, --engine %s: stdout %q; want a decision with no buffer, or nothing on an error", tt.name, kind, stdout)
			}
			src.intact(t, tt.name+", --engine "+kind, "empty.bin")
		}
	}
	// A copy made, and --out in a directory that does not exist.
	stdout, stderr, status := runDlroute(t, "exchange", "--buffer", src.path, "--out", filepath.Join(src.dir, "no-dir", "copy.out"), "--platform", "cpu", "--platform-version", "cpu", "--copy", "true")
	if status != 1 || stdout != "" || !strings.Contains(stderr, "error: writing the copy: ") || !strings.Contains(stderr, "hint: nothing was written to ") {
		t.Errorf("--out in a missing directory: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	src.intact(t, "--out in a missing directory", "empty.bin")
}

// halfCopier is a copy that fails half way: it writes half of the
// destination and returns an error, as a device that goes away during a
// transfer would.
type halfCopier struct{}

func (halfCopier) CopyToHost(_ context.Context, src machine.Buffer) (machine.Buffer, error) {
	dst := make([]byte, len(src.Data))
	n := copy(dst, src.Data[:len(src.Data)/2])
	return machine.Buffer{}, fmt.Errorf("the device went away after %d of %d bytes", n, len(dst))
}

// TestExchangeCopierFailsHalfWay: a copier that fails half way is reported
// with its own error and a hint by both engines, the same words (through
// the module, copy_to_host returns HostFailed, the guest reports
// host_error, and the host names the copier's error); no --out file, no
// temporary file, and the source intact.
func TestExchangeCopierFailsHalfWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the WebAssembly module; skipped with -short")
	}
	old := copier
	copier = halfCopier{}
	t.Cleanup(func() { copier = old })
	src := newSource(t)
	want := "error: copying the array into host memory failed: the device went away after 2048 of 4096 bytes\n" +
		"hint: nothing was exported, and the array is as it was\n"
	for _, kind := range engines {
		out := filepath.Join(src.dir, "copy.out")
		stdout, stderr, status := runDlroute(t, "exchange", "--engine", kind, "--buffer", src.path, "--out", out,
			"--platform", "gpu", "--platform-version", "<unknown>", "--local-hardware-id", "0", "--max-version", "1,1")
		if status != 1 || stdout != "" || stderr != want {
			t.Errorf("--engine %s: status %d, stdout %q, stderr:\n%swant status 1 and:\n%s", kind, status, stdout, stderr, want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--engine %s: --out exists after a failed copy (%v)", kind, err)
		}
		src.intact(t, "a copier that fails, --engine "+kind)
	}
}
