package main

import (
	"context"
	"errors"
	"fmt"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/dlroute/dlroute/cmd/dlroute/internal/serve"
	"github.com/dlroute/dlroute/cmd/dlroute/internal/serve/wasmserve"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/rules"
)

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve")
	addr := fs.String("addr", serve.DefaultAddr, "listen on `HOST:PORT`; loopback unless told, since the API has no authentication")
	diagnosticAddr := fs.String("diagnostic-addr", "", "also answer /healthz, /v1/status and /metrics, and nothing else, on `HOST:PORT`, with a server of its own: probes there never wait behind the API's requests (default: none)")
	rulesDir := fs.String("rules", "", "serve the rules directory `DIR`, and pick up every change to it")
	bundleAt := fs.String("bundle", "", "serve the bundle at `URL|FILE`: a URL is polled (with If-None-Match), a file watched")
	var keys keyList
	fs.Var(&keys, "key", "accept only bundles signed by the public key in `PUB` (a file, or the key); may repeat")
	allowRollback := fs.Bool("allow-rollback", false, "activate a bundle older (by its sequence) than the one in force or kept, which is otherwise refused; logged")
	maxJump := fs.Uint64("max-sequence-jump", live.DefaultMaxSequenceJump, "refuse a bundle whose sequence, a counter (below 1000000000), is more than `N` ahead of the one in force or kept; a sequence that is a time is refused when more than a day after the clock")
	engineKind := engineFlag(fs)
	keep := fs.String("keep", "", "keep the last good bundle in `FILE`, served at start if the source has nothing good (default: under the user cache directory; off: none)")
	interval := fs.Duration("interval", live.DefaultInterval, "check the source every `DURATION` (and a watched folder or file on every change)")
	checkTimeout := fs.Duration("check-timeout", live.DefaultCheckTimeout, "refuse rules whose compile, tests and preparation take longer than `DURATION` (check_timeout); a newer change cancels a check under way")
	ruleset := fs.String("ruleset", "jax", "the rule set of a request that names none (`REF`: NAME, NAME@VERSION or NAME==RELEASE)")
	strict := strictReleaseFlag(fs)
	maxBody := fs.Int64("max-body", serve.DefaultMaxBody, "refuse request bodies over `BYTES`")
	maxInFlight := fs.Int64("max-in-flight", serve.DefaultMaxInFlight, "hold at most `BYTES` of request bodies and batch answers at once, in all; a request past it gets 503 and Retry-After")
	maxWorking := fs.Int("max-working", 0, "work on at most `N` requests to /v1/resolve at once, the others waiting their turn; a request waiting on its client (for its body, to send its answer) is not working (default: one fewer than the processors, so that one is free for probes and reading; at least 1)")
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	if !validEngine(*engineKind, stderr) {
		return 2
	}
	switch {
	case *maxWorking < 0:
		fmt.Fprintf(stderr, "error: --max-working %d: give a number of requests, or 0 for one fewer than the processors\n", *maxWorking)
		return 2
	case *rulesDir != "" && *bundleAt != "":
		fmt.Fprintln(stderr, "error: serve takes --rules DIR or --bundle URL|FILE, not both")
		return 2
	case len(keys) > 0 && *bundleAt == "":
		fmt.Fprintln(stderr, "error: --key checks the signature of a bundle; a rules directory is not signed")
		fmt.Fprintln(stderr, "hint: dlroute bundle build DIR -o rules.tar.gz --sign KEY, then serve --bundle rules.tar.gz --key PUB")
		return 2
	}

	// SIGTERM (and ^C) shut down gracefully: requests in flight finish.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	prepare, done, err := servePrepare(ctx, *engineKind, stderr)
	if err != nil {
		printServeError(stderr, err)
		return 1
	}
	defer done()
	err = serve.Run(ctx, serve.Options{
		Addr: *addr, DiagnosticAddr: *diagnosticAddr, Rules: *rulesDir, Bundle: *bundleAt, Embedded: rules.FS, Keys: keys, AllowRollback: *allowRollback, MaxSequenceJump: *maxJump,
		Prepare: prepare, CheckTimeout: *checkTimeout, Engine: *engineKind, Keep: *keep, Interval: *interval, RuleSet: *ruleset, StrictRelease: *strict, MaxBody: *maxBody,
		MaxInFlight: *maxInFlight, MaxWorking: *maxWorking, Log: log,
	})
	if err != nil {
		printServeError(stderr, err)
		return 1
	}
	return 0
}

// printServeError prints why serve could not start: each refusal (of the
// source, and of the kept bundle) with its hint.
func printServeError(w io.Writer, err error) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			printServeError(w, e)
		}
		return
	}
	var ref *live.Refusal
	if errors.As(err, &ref) {
		printRefusal(w, err)
		return
	}
	printError(w, err)
}

// servePrepare is what decides each snapshot serve puts in force: the
// native engine (nil: serve's default), or for --engine wasm the
// decision module built from this binary's source, compiled once per
// process (decisionModule), its instances started per snapshot with the
// plans the gate built (wasmserve.Prepare). done releases what
// servePrepare holds, after serve is done with it.
func servePrepare(ctx context.Context, kind string, progress io.Writer) (func(context.Context, *live.Snapshot) (io.Closer, error), func(), error) {
	if kind != "wasm" {
		return nil, func() {}, nil
	}
	module, err := decisionwasm.Bytes()
	if err != nil {
		return nil, nil, err
	}
	compiled, err := decisionModule(ctx, module)
	if err != nil {
		return nil, nil, err
	}
	// The compiled module is the process's, shared with the commands a
	// test runs beside serve; each snapshot's instances close with it.
	prepare := wasmserve.Prepare(compiled)
	return func(ctx context.Context, s *live.Snapshot) (io.Closer, error) {
		attached, err := prepare(ctx, s)
		// The memory of the instances that ran the tests and were closed
		// (about 6 MB each, one per version) goes back to the system now,
		// not at a collection minutes later in a server that allocates
		// little: serve's footprint is what it keeps.
		debug.FreeOSMemory()
		return attached, err
	}, func() {}, nil
}
