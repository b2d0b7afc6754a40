package serve

import (
	"context"
	"io"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// FreeProcessors is how many processors (GOMAXPROCS) the work of
// /v1/resolve leaves to everything else unless HandlerConfig.MaxWorking
// says otherwise: one, so that a goroutine that wakes (a /healthz
// probe's, an accepted connection's, a body's reader) finds a processor
// at once, rather than waiting for the scheduler to preempt a request
// that decodes or decides, 10 ms at a time. serve works on
// GOMAXPROCS-FreeProcessors requests at once, and on one where there is
// one processor. `serve --engine wasm` keeps its module's instances to
// one fewer than the processors for the same reason.
const FreeProcessors = 1

// defaultMaxWorking is HandlerConfig.MaxWorking's default.
func defaultMaxWorking() int { return max(1, runtime.GOMAXPROCS(0)-FreeProcessors) }

// working is the requests to /v1/resolve worked on at once: a
// semaphore of HandlerConfig.MaxWorking places. A request holds a place
// only while it works (reads the bytes that have arrived, decodes,
// decides, builds its answer), and gives it back while it waits on its
// client (for more of its body, to write its answer): a slow client
// holds none, so that no number of them keeps a request that has
// arrived from its turn, as a limit on connections would. Waiters are
// parked, not runnable, and take places in the order they asked.
type working struct {
	places  chan struct{}
	waiting prometheus.Gauge
}

func newWorking(n int, waiting prometheus.Gauge) *working {
	if n <= 0 {
		n = defaultMaxWorking()
	}
	return &working{places: make(chan struct{}, n), waiting: waiting}
}

// turn is one request's hold on a place of working. It is used by the
// request's own goroutine only.
type turn struct {
	w    *working
	held bool
}

// take waits for a place, until ctx ends (the client went away).
func (t *turn) take(ctx context.Context) error {
	if t.held {
		return nil
	}
	select {
	case t.w.places <- struct{}{}:
		t.held = true
		return nil
	default:
	}
	t.w.waiting.Inc()
	defer t.w.waiting.Dec()
	select {
	case t.w.places <- struct{}{}:
		t.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give gives the place back, if the turn holds one.
func (t *turn) give() {
	if t.held {
		t.held = false
		<-t.w.places
	}
}

// yield gives the place back and waits for it again, so that a request
// waiting for its turn works before a long one goes on. Past ctx it goes
// on without a place: what it has left to do ends at ctx too.
func (t *turn) yield(ctx context.Context) {
	t.give()
	t.take(ctx)
}

// turnReader reads a request body, giving its turn back while each Read
// waits on the client and taking it again to work on what arrived.
type turnReader struct {
	ctx context.Context
	r   io.Reader
	t   *turn
}

func (r *turnReader) Read(p []byte) (int, error) {
	r.t.give()
	n, err := r.r.Read(p)
	if terr := r.t.take(r.ctx); terr != nil {
		return 0, terr
	}
	return n, err
}
