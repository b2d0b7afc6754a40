package fuzzbound

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the failure and ends the
// goroutine, as testing's does.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure is what Call reports of f, "" when it passes.
func failure(t *testing.T, b Bound, f func()) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Call(r, "the call", f)
	}()
	<-done
	return r.failure
}

var sink []byte

// TestCall: each way a call can fail is told apart. Only the call that
// hangs meets the time bound: the others have a minute, so that a loaded
// machine, slow to allocate 16 MiB under -race, cannot turn their
// failure into a timeout.
func TestCall(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	tests := []struct {
		name string
		time time.Duration
		f    func()
		want string // in the failure; "" for none
	}{
		{"within", time.Minute, func() { sink = make([]byte, 1<<10) }, ""},
		{"panics", time.Minute, func() { panic("boom") }, "the call panicked: boom"},
		{"hangs", 200 * time.Millisecond, func() { <-hang }, "the call took more than 200ms"},
		{"allocates", time.Minute, func() {
			for range 16 {
				sink = make([]byte, 1<<20)
			}
		}, "the call allocated 16 MiB; the bound is 8 MiB"},
	}
	for _, tt := range tests {
		got := failure(t, Bound{Time: tt.time, Alloc: 8 << 20}, tt.f)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Call failed with %q; want %q", tt.name, firstLine(got), tt.want)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
