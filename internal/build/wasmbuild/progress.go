package wasmbuild

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a build in progress says it still runs: a
// person (or a test command that must not go quiet for a minute) sees it
// is not stuck.
const progressEvery = 20 * time.Second

// Still writes "still DOING, Ns so far..." to w every 20 s until the
// returned stop is called, as a build does: for another step that takes a
// minute, such as wazero's first compile of the module just built. A nil
// w writes nothing.
func Still(w io.Writer, doing string) (stop func()) {
	ticker := time.NewTicker(progressEvery)
	stopSaying := sayStill(w, doing, ticker.C)
	return func() {
		stopSaying()
		ticker.Stop()
	}
}

// sayStill writes "still DOING, Ns so far" to w at each tick until the
// returned stop is called; stop returns once nothing more will be
// written. A nil w writes nothing.
func sayStill(w io.Writer, doing string, tick <-chan time.Time) (stop func()) {
	if w == nil {
		return func() {}
	}
	start := time.Now()
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case now := <-tick:
				fmt.Fprintf(w, "still %s, %s so far...\n", doing, now.Sub(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}
