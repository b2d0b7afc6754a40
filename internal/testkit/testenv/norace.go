//go:build !race

package testenv

// RaceDetector is whether this binary runs under the race detector
// (race.go): see ContentOnly.
const RaceDetector = false
