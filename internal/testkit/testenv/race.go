//go:build race

package testenv

// RaceDetector is whether this binary runs under the race detector
// (norace.go): see ContentOnly.
const RaceDetector = true
