package plan

import "sync/atomic"

// scratch is a decision's working memory: the frame, and room for the
// input line's fields. A decision takes the spare one and gives it back
// when its answer is written, so that a decision allocates only its
// values: in WebAssembly an allocation, and the collections that the
// bytes allocated bring on, are among a decision's costliest steps
// (plan/RATIONALE.md, "Why does a decision reuse one spare scratch?").
type scratch struct {
	frame  frame
	fields [8]field
}

// spare is the scratch kept between decisions: one, which is all the
// decision module (one thread) uses. Decisions at the same time on
// several goroutines take it in turn or allocate their own.
var spare atomic.Pointer[scratch]

func takeScratch() *scratch {
	if s := spare.Swap(nil); s != nil {
		return s
	}
	return new(scratch)
}

// giveBack clears s, so that it keeps no input's values alive, and keeps
// it as the spare. Nothing of a decision may refer to s after it.
func (s *scratch) giveBack() {
	*s = scratch{}
	spare.Store(s)
}
