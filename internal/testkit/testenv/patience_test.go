package testenv

import (
	"flag"
	"testing"
	"time"
)

// TestPatienceEndsBeforeTheDeadline: a wait of Patience ends before the
// binary's timeout panics, with time left to report, and is not zero.
func TestPatienceEndsBeforeTheDeadline(t *testing.T) {
	p := Patience(t)
	deadline, ok := t.Deadline()
	if !ok {
		if p != time.Hour {
			t.Fatalf("Patience with no deadline = %v, want an hour", p)
		}
		return
	}
	if end := time.Now().Add(p); p <= 0 || !end.Before(deadline) {
		t.Fatalf("Patience = %v, ending at %v; want a positive wait that ends before the deadline %v", p, end, deadline)
	}
}

// TestTimeoutIsTheFlag: Timeout is go test -timeout as the binary got it.
func TestTimeoutIsTheFlag(t *testing.T) {
	want := flag.Lookup("test.timeout").Value.(flag.Getter).Get().(time.Duration)
	if want == 0 {
		want = time.Hour
	}
	if got := Timeout(); got != want {
		t.Fatalf("Timeout() = %v, want %v (-test.timeout)", got, want)
	}
}
