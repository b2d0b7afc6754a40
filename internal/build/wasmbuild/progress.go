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

// sayStillBuilding writes "still building WHAT, Ns so far" to w at each
// tick until the returned stop is called; stop returns once nothing more
// will be written. A nil w writes nothing.
func sayStillBuilding(w io.Writer, what string, tick <-chan time.Time) (stop func()) {
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
				fmt.Fprintf(w, "still building %s, %s so far...\n", what, now.Sub(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}
