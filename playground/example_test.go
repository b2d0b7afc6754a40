package playground_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/playground"
	"github.com/dlroute/dlroute/rules"
)

// The playground as a handler: the embedded rules, and the module built
// from this checkout, compressed (both cached after the first time). It
// prints
//
//	application/wasm gzip
//
// The example has no Output comment, so go test compiles it and does not
// run it: it builds the WebAssembly module, which `go test -short` never
// does. TestExample runs it and checks what it prints.
func Example() {
	module, gz, err := wasmbuild.Gzipped(context.Background(), wasmbuild.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := playground.New(playground.Options{Rules: rules.FS, Source: "embedded", Module: module, ModuleGzip: gz})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req := httptest.NewRequest("GET", srv.URL+"/dlroute.wasm", nil)
	req.RequestURI = ""
	req.Header.Set("Accept-Encoding", "gzip") // as a browser does
	resp, err := srv.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
}

// TestExample runs Example, outside -short, and checks what it prints.
func TestExample(t *testing.T) {
	testenv.ContentOnly(t)
	testenv.Short(t, "Example builds the WebAssembly module; it")
	if got, want := testenv.Stdout(t, Example), "application/wasm gzip\n"; got != want {
		t.Errorf("Example printed %q, want %q", got, want)
	}
}
