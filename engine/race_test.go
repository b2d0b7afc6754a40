//go:build race

package engine_test

// raceSlowdown scales a test's bound on wall time under the race
// detector, which runs the engine's Go code (regexp's NFA included) about
// ten times slower.
const raceSlowdown = 10
