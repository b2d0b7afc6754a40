// Package fuzzbound holds one call of a fuzz target to a bound of time
// and memory, so that an input that makes the code under test hang, or
// allocate far more than its size calls for, fails as a panic does.
//
// It is bundle/fuzz_test.go's readWithinBounds made shared: the call runs
// on a goroutine of its own, watched by a timer, so that a call that never
// returns fails too; what it allocates is runtime.MemStats.TotalAlloc's
// growth across the call, which counts every goroutine's allocations, and
// so is exact only while nothing else runs, as under a fuzzing worker.
package fuzzbound

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// Bound is what one call may cost.
type Bound struct {
	// Time bounds the call's wall-clock time.
	Time time.Duration
	// Alloc bounds the bytes it allocates, freed or not.
	Alloc uint64
}

// Call runs f, and fails t (with every goroutine's stack) when f runs
// longer than b.Time, or (with f's stack) when it panics, or when it
// allocates more than b.Alloc bytes. what names the call in the failure,
// as "Read of 12 bytes". A call that runs too long is left running: the
// test fails, and the fuzzing engine records the input.
func (b Bound) Call(t testing.TB, what string, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan string, 1) // the panic and its stack, or ""
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		f()
		done <- ""
	}()
	timer := time.NewTimer(b.Time)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != "" {
			t.Fatalf("%s panicked: %s", what, p)
		}
	case <-timer.C:
		stacks := make([]byte, 1<<20)
		t.Fatalf("%s took more than %v:\n%s", what, b.Time, stacks[:runtime.Stack(stacks, true)])
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > b.Alloc {
		t.Fatalf("%s allocated %d MiB; the bound is %d MiB", what, alloc>>20, b.Alloc>>20)
	}
}

// Time is the bound d while this test binary fuzzes (-test.fuzz is set):
// a fuzzing worker runs one input at a time in a process of its own, and
// d is what one input may cost. Without -fuzz the seeds run as ordinary
// tests, beside every other test of the run and perhaps under -race on a
// loaded machine, where the bound only has to tell a hang from slow work:
// it is then a minute. Call it when the test runs, not in a package
// variable: flags are parsed after package initialization.
func Time(d time.Duration) time.Duration {
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return d
	}
	return max(d, time.Minute)
}
