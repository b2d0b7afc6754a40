package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestCheckedInModuleIsFresh: wasm/decision/decision.wasm, which every
// host decides with, is what its C sources build to. A change to
// wasm/decision/src without `go generate ./wasm/decision` fails here.
func TestCheckedInModuleIsFresh(t *testing.T) {
	testenv.Short(t, "decisiongen runs clang")
	if _, err := exec.LookPath("clang"); err != nil {
		testenv.Missing(t, "no clang, so the checked-in decision module cannot be rebuilt and compared: apt-get install -y "+Packages)
	}
	built, err := Build("clang", src)
	if err != nil {
		t.Fatal(err)
	}
	checkedIn, err := os.ReadFile("../../../wasm/decision/decision.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, checkedIn) {
		t.Errorf("wasm/decision/decision.wasm (%d bytes) is not what wasm/decision/src builds to (%d bytes): run go generate ./wasm/decision", len(checkedIn), len(built))
	}
}
