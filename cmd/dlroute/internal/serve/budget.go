package serve

import (
	"errors"
	"io"
	"runtime/debug"
	"sync/atomic"
)

// budget is the bytes that requests may hold in memory at once, across
// all of them (HandlerConfig.MaxInFlight): their bodies, from the first
// byte read until they are answered, and their batch answers as they are
// built. Nothing waits on it: a request that would pass it is refused
// (503, CodeBusy) and its bytes let go, so a burst can neither queue
// without end nor keep the host's memory, and /healthz, which holds
// nothing, never waits behind it.
//
// Once the requests of a burst that held half the budget or more are all
// answered, the heap they left is given back to the system
// (debug.FreeOSMemory, one at a time): otherwise the Go runtime keeps
// it, sized for the burst, until a later collection, minutes on an idle
// server.
type budget struct {
	max  int64
	held atomic.Int64
	// body and answer are held's two parts, for the metrics.
	body, answer atomic.Int64
	// peak is the most held since memory was last given back; returns
	// counts the times.
	peak    atomic.Int64
	returns atomic.Int64
}

// take reserves n bytes, or reports that they would pass the budget.
func (b *budget) take(n int64) bool {
	for {
		held := b.held.Load()
		if held+n > b.max {
			return false
		}
		if b.held.CompareAndSwap(held, held+n) {
			for p := b.peak.Load(); held+n > p && !b.peak.CompareAndSwap(p, held+n); p = b.peak.Load() {
			}
			return true
		}
	}
}

// give returns n bytes, and the heap of a burst once it is all answered.
func (b *budget) give(n int64) {
	if b.held.Add(-n) != 0 || b.peak.Load() < b.max/2 || !freeOSMemory() {
		return
	}
	b.peak.Store(0)
	b.returns.Add(1)
}

// freeing is set while freeOSMemory's collection runs.
var freeing atomic.Bool

// freeOSMemory gives the heap that garbage holds back to the system
// (debug.FreeOSMemory) in the background, one collection at a time: a
// call while one runs is dropped, as the one running returns that heap
// too. It reports whether it started one.
func freeOSMemory() bool {
	if !freeing.CompareAndSwap(false, true) {
		return false
	}
	go func() {
		defer freeing.Store(false)
		debug.FreeOSMemory()
	}()
	return true
}

// claim is what one request holds of the budget. It is used by the
// request's own goroutine only; release gives it all back.
type claim struct {
	b            *budget
	body, answer int64
}

func (c *claim) takeBody(n int64) bool {
	if !c.b.take(n) {
		return false
	}
	c.body += n
	c.b.body.Add(n)
	return true
}

func (c *claim) takeAnswer(n int64) bool {
	if !c.b.take(n) {
		return false
	}
	c.answer += n
	c.b.answer.Add(n)
	return true
}

func (c *claim) release() {
	c.b.body.Add(-c.body)
	c.b.answer.Add(-c.answer)
	c.b.give(c.body + c.answer)
	c.body, c.answer = 0, 0
}

// errBusy is what a claimedBody's Read returns past the budget.
var errBusy = errors.New("the server holds as many request bytes as it may")

// claimedBody reads a request body, claiming each byte as it is read: a
// body whose length is known up front claims no more than one whose
// length is not, and a client that sends slowly holds only what it has
// sent. Past the budget every Read returns errBusy and reads no more (a
// json.Decoder reads again after an error, and would wait on the client).
type claimedBody struct {
	r    io.Reader
	c    *claim
	busy bool
}

func (b *claimedBody) Read(p []byte) (int, error) {
	if b.busy {
		return 0, errBusy
	}
	n, err := b.r.Read(p)
	if n > 0 && !b.c.takeBody(int64(n)) {
		b.busy = true
		return 0, errBusy
	}
	return n, err
}
