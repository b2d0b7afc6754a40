package wasmbuild

import (
	"bytes"
	"testing"
	"time"
)

// TestSayStill: a line at each tick, with the time so far, and
// none once stopped; a nil writer is fine.
func TestSayStill(t *testing.T) {
	var out bytes.Buffer
	tick := make(chan time.Time)
	stop := sayStill(&out, "building the WebAssembly module", tick)
	tick <- time.Now().Add(20 * time.Second)
	tick <- time.Now().Add(40 * time.Second)
	stop()
	want := "still building the WebAssembly module, 20s so far...\nstill building the WebAssembly module, 40s so far...\n"
	if out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
	select {
	case tick <- time.Now():
		t.Errorf("a tick was taken after stop")
	default:
	}
	sayStill(nil, "x", tick)()
}
