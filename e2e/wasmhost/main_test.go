package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/machine"
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
	code := m.Run()
	if r, err := runner(); err == nil {
		r.Close(context.Background())
	}
	os.Exit(code)
}

// shipped is every shipped rule set, loaded natively once per test
// binary: the tests only read it.
var shipped = sync.OnceValues(func() (*engine.Catalog, error) {
	return engine.Load(rules.FS, engine.Options{})
})

// runner is a runner with every shipped rule set loaded in the guest,
// started once per test binary (a load of every set takes seconds), with
// the host's copier for the exchanges: the tests that decide with it, or
// carry an exchange out, share it, one after another.
var runner = sync.OnceValues(func() (*wasmhost.Runner, error) {
	ctx := context.Background()
	r, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Host: wasmhost.Host{Copier: machine.HostCopier{}}})
	if err != nil {
		return nil, err
	}
	if err := r.Load(ctx, rules.FS); err != nil {
		r.Close(ctx)
		return nil, err
	}
	return r, nil
})

// shippedEngines is shipped and runner, or fails t.
func shippedEngines(t testing.TB) (*engine.Catalog, *wasmhost.Runner) {
	t.Helper()
	cat, err := shipped()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner()
	if err != nil {
		t.Fatal(err)
	}
	return cat, r
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
