//go:build !race

package playground_test

// raceDetector is whether the tests run under the race detector
// (race_test.go): see contentOnly.
const raceDetector = false
