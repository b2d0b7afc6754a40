package wasmbuild

import (
	"context"
	"fmt"
	"os"

	"github.com/dlroute/dlroute"
)

// EnvDecision names a prebuilt decision module that Decision uses instead
// of building.
const EnvDecision = "DLROUTE_DECISION_WASM"

// decisionModule is the decision module (./wasm/decision, ABI version
// 2), built from the source this binary carries (dlroute.DecisionSource),
// or from Options.SourceDir.
var decisionModule = target{
	what: "the decision module", pkg: "./wasm/decision", env: []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
	envVar: EnvDecision, subdir: "wasm", base: "decision-", ext: ".wasm", source: dlroute.DecisionSource,
}

// Decision returns the decision module's bytes and the path they were
// read from: the file named by $DLROUTE_DECISION_WASM, or the cached
// build for the current source, building it first when it is missing.
func Decision(ctx context.Context, opts Options) ([]byte, string, error) {
	path, err := build(ctx, opts, decisionModule)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if err != nil && os.Getenv(EnvDecision) != "" {
		err = fmt.Errorf("reading the module named by $%s: %w", EnvDecision, err)
	}
	return data, path, err
}
