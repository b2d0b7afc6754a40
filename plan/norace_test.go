//go:build !race

package plan_test

// raceEnabled: this build has no race detector.
const raceEnabled = false
