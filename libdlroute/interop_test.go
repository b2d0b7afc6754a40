package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ctest"
	"github.com/dlroute/dlroute/libdlroute/internal/capi"
)

// TestInterop runs testdata/interop.c: each request answered through the
// C library is, byte for byte and status for status, what libdlroute/internal/capi
// answers it in Go: the cell or the matrix as `dlroute interop --json`
// writes it (libdlroute/internal/capi's tests pin that), or the error object.
func TestInterop(t *testing.T) {
	prog := ctest.Program(t, ".", "testdata/interop.c")
	h, out, st := capi.Open("", "")
	if st != capi.StatusOK {
		t.Fatalf("capi.Open: %s %s", st, out)
	}
	defer capi.Close(h)
	for _, tc := range []struct {
		mode     string
		answer   func(context.Context, uint64, []byte) ([]byte, capi.Status)
		requests []string
	}{
		{"cell", capi.InteropJSON, []string{
			`{"producer":"jax","consumer":"torch","array":{"platform":"gpu","platform_version":"<unknown>"}}`,
			`{"producer":"jax","consumer":"numpy","array":{"platform":"gpu","platform_version":"<unknown>"}}`,
			`{"producer":"numpy","consumer":"torch"}`,
			`{"producer":"torch","consumer":"numpy","array":{"device_type":"cpu","pinned":true},"kwargs":{"copy":false}}`,
			`{"producer":"jax","consumer":"exchange"}`,
			`{"producer":"nosuch","consumer":"torch"}`,
			`{"producer":"jax","consumer":"torch","array":{"platform":7}}`,
			`not json`,
		}},
		{"matrix", capi.InteropMatrixJSON, []string{
			`{"producers":["jax"],"consumers":["torch","numpy"]}`,
			`{"producers":["numpy"],"consumers":["numpy"],"kwargs":{"copy":true}}`,
			`{"consumers":["jax-export"]}`,
		}},
	} {
		var want bytes.Buffer
		for _, req := range tc.requests {
			out, st := tc.answer(context.Background(), h, []byte(req))
			want.WriteString(st.String() + " ")
			want.Write(out)
			want.WriteByte('\n')
		}
		cmd := exec.Command(prog, tc.mode)
		cmd.Stdin = strings.NewReader(strings.Join(tc.requests, "\n") + "\n")
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("interop %s: %v", tc.mode, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("interop %s:\n got %s\nwant %s", tc.mode, got, want.Bytes())
		}
	}
}
