//go:build !race

package engine_test

// raceSlowdown scales a test's bound on wall time under the race
// detector (race_test.go); without it, 1.
const raceSlowdown = 1
