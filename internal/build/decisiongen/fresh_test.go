package main

import (
	"bytes"
	"os"
	"testing"
)

// TestCheckedInModuleIsFresh: wasm/decision/decision.wasm, which every
// host decides with, is what its C sources build to. A change to
// wasm/decision/src without `go generate ./wasm/decision` fails here.
func TestCheckedInModuleIsFresh(t *testing.T) {
	needBuildParts(t)
	module, err := built()
	if err != nil {
		t.Fatal(err)
	}
	checkedIn, err := os.ReadFile("../../../wasm/decision/decision.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(module, checkedIn) {
		t.Errorf("wasm/decision/decision.wasm (%d bytes) is not what wasm/decision/src builds to (%d bytes): run go generate ./wasm/decision (the checked-in module is Debian 12's clang 14.0.6 with binaryen 108's wasm-opt)", len(checkedIn), len(module))
	}
}
