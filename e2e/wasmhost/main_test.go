package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/rules"
	"github.com/dlroute/dlroute/wasmhost"
)

// module is the dlroute module built from this checkout (cached by source
// hash in the user cache, so only the first run after a change builds).
var module []byte

func TestMain(m *testing.M) {
	var err error
	module, _, err = wasmbuild.Module(context.Background(), wasmbuild.Options{Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the module for the host tests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// newRunner starts a runner with every shipped rule set loaded.
func newRunner(t testing.TB, host wasmhost.Host) *wasmhost.Runner {
	t.Helper()
	ctx := context.Background()
	r, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	if err := r.Load(ctx, rules.FS); err != nil {
		t.Fatal(err)
	}
	return r
}

// encode is v as one line of JSON, as a host sends it.
func encode(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
