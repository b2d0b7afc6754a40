//go:build race

package plan_test

// raceEnabled: this build has the race detector, which allocates.
const raceEnabled = true
