package rules

import _ "embed" // for Plans

// Plans is plans.bin, the plans of every embedded version
// (engine.WritePlans wrote it; plan.DecodeSet reads it), alone: what a
// host hands the decision module (wasm/decision), which holds no rules
// and no compiler, without the rules' text.
//
//go:embed plans.bin
var Plans []byte
