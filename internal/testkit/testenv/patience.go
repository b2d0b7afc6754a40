package testenv

import (
	"flag"
	"testing"
	"time"
)

// Patience is how long t waits for something that must happen (an answer,
// an event, a line a process prints, a refusal) before it fails saying what
// did not come: the time left before t's deadline (go test -timeout), less a
// tenth of it (at most a minute) for the failure to be reported before the
// binary's timeout panics. It is the deadline a busy machine cannot miss
// where a fast one would not: a fixed 10 s fails a test for being slow, not
// for being wrong. With no deadline (-timeout 0, or a benchmark) it is an
// hour.
//
// A wait that checks that something does NOT happen stays short and fixed:
// a slow machine only makes it miss an event, never fail a good run.
func Patience(t testing.TB) time.Duration {
	withDeadline, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return time.Hour
	}
	deadline, ok := withDeadline.Deadline()
	if !ok {
		return time.Hour
	}
	left := time.Until(deadline)
	return left - min(left/10, time.Minute)
}

// Timeout is the test binary's -test.timeout (go test -timeout), or an
// hour where it is 0 (none): for a bound a TestMain sets once for the whole
// binary, before any test has a deadline to ask. It parses the flags when
// they are not yet parsed, as testing.M.Run would.
func Timeout() time.Duration {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, ok := f.Value.(flag.Getter).Get().(time.Duration); ok && d > 0 {
			return d
		}
	}
	return time.Hour
}
