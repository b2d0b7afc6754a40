package machine

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"unsafe"
)

// machineFS loads testdata/machines/<name>.txtar (see its README) into the
// file system of that machine.
func machineFS(t *testing.T, name string) fstest.MapFS {
	t.Helper()
	data, err := os.ReadFile("testdata/machines/" + name + ".txtar")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	var path string
	var body strings.Builder
	flush := func() {
		if path != "" {
			fsys[path] = &fstest.MapFile{Data: []byte(body.String()), Mode: 0o444}
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if name, ok := txtarMarker(line); ok {
			flush()
			path = name
			continue
		}
		body.WriteString(line)
	}
	flush()
	return fsys
}

// txtarMarker reads a "-- name --" line.
func txtarMarker(line string) (string, bool) {
	line = strings.TrimSuffix(line, "\n")
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < 7 {
		return "", false
	}
	return strings.TrimSpace(line[3 : len(line)-3]), true
}

// noLibrary is a dlopen failure as glibc words it.
func noLibrary(lib string) error {
	return errors.New(lib + ": cannot open shared object file: No such file or directory")
}

// fakes gives probeDrivers whose libraries are the fakes set, and missing
// (as dlopen says) where nil.
type fakes struct {
	cuda      cudaDriverAPI
	nvml      nvmlAPI
	levelZero levelZeroAPI
}

func (f fakes) drivers() probeDrivers {
	return probeDrivers{
		cuda: func(Env) (cudaDriverAPI, error) {
			if f.cuda == nil {
				return nil, loadFailed(libCUDA, noLibrary(libCUDA))
			}
			return f.cuda, nil
		},
		nvml: func(Env) (nvmlAPI, error) {
			if f.nvml == nil {
				return nil, loadFailed(libNVML, noLibrary(libNVML))
			}
			return f.nvml, nil
		},
		levelZero: func(Env) (levelZeroAPI, error) {
			if f.levelZero == nil {
				return nil, loadFailed(libLevelZero, noLibrary(libLevelZero))
			}
			return f.levelZero, nil
		},
	}
}

// fakeCUDA is a CUDA driver: each call returns its status field, and on
// success writes version and count. A panicking one stands for a bug.
type fakeCUDA struct {
	initStatus, versionStatus, countStatus int32
	version, count                         int32
	panics                                 bool
	inits                                  atomic.Int32
}

func (f *fakeCUDA) Init(flags uint32) int32 {
	f.inits.Add(1)
	if f.panics {
		panic("fake driver bug")
	}
	return f.initStatus
}

func (f *fakeCUDA) DriverGetVersion(v *int32) int32 {
	if f.versionStatus == 0 {
		*v = f.version
	}
	return f.versionStatus
}

func (f *fakeCUDA) DeviceGetCount(n *int32) int32 {
	if f.countStatus == 0 {
		*n = f.count
	}
	return f.countStatus
}

// fakeNVML is NVML, in the same way.
type fakeNVML struct {
	initStatus int32
	version    int32
	count      uint32
	driver     string
	shutdowns  atomic.Int32
}

func (f *fakeNVML) Init() int32 { return f.initStatus }
func (f *fakeNVML) SystemGetCudaDriverVersion(v *int32) int32 {
	*v = f.version
	return 0
}
func (f *fakeNVML) SystemGetDriverVersion(buf []byte) int32 {
	if f.driver == "" {
		return 3 // NVML_ERROR_NOT_SUPPORTED
	}
	copy(buf, f.driver+"\x00")
	return 0
}
func (f *fakeNVML) DeviceGetCount(n *uint32) int32 {
	*n = f.count
	return 0
}
func (f *fakeNVML) Shutdown() int32 {
	f.shutdowns.Add(1)
	return 0
}

// fakeLevelZero has one device count per driver; handles are 1, 2, ...
type fakeLevelZero struct {
	initStatus uint32
	devices    []uint32
}

func (f *fakeLevelZero) Init(flags uint32) uint32 {
	if flags != zeInitFlagGPUOnly {
		return 0x78000004 // ZE_RESULT_ERROR_INVALID_ARGUMENT
	}
	return f.initStatus
}

func (f *fakeLevelZero) DriverGet(n *uint32, drivers *uintptr) uint32 {
	if drivers == nil {
		*n = uint32(len(f.devices))
		return 0
	}
	// As in C: *n is the array's length; write that many handles at most.
	handles := unsafe.Slice(drivers, *n)
	*n = uint32(min(len(handles), len(f.devices)))
	for i := range *n {
		handles[i] = uintptr(i + 1)
	}
	return 0
}

func (f *fakeLevelZero) DeviceGet(driver uintptr, n *uint32, devices *uintptr) uint32 {
	if driver < 1 || int(driver) > len(f.devices) || devices != nil {
		return 0x78000004
	}
	*n = f.devices[driver-1]
	return 0
}

// fakeRun answers a command with fixed output, or fails with err.
func fakeRun(out string, err error) func(context.Context, string, ...string) ([]byte, error) {
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return []byte(out), err
	}
}

// fakeLibrary is a Library of fixed symbols: addresses that must never be
// called, for tests that stop before any call.
type fakeLibrary struct {
	missing string
	closed  *atomic.Int32
}

func (l fakeLibrary) Sym(name string) (uintptr, error) {
	if name == l.missing {
		return 0, errors.New("/usr/lib/x86_64-linux-gnu/libcuda.so.1: undefined symbol: " + name)
	}
	return 0xdead0000, nil
}

func (l fakeLibrary) Close() error {
	if l.closed != nil {
		l.closed.Add(1)
	}
	return nil
}
