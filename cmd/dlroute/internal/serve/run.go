package serve

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dlroute/dlroute/cmd/dlroute/internal/httpserve"

	"github.com/dlroute/dlroute/live"
)

// DefaultAddr is where serve listens unless told: loopback only, since
// the API has no authentication of its own.
const DefaultAddr = "127.0.0.1:8181"

// Options are what `dlroute serve` was asked for.
type Options struct {
	Addr string // "" means DefaultAddr
	// DiagnosticAddr, if set, is a second address that answers GET
	// /healthz, /v1/status and /metrics (as Addr does too) and nothing
	// else, with a server of its own: a probe there never waits on the
	// API's requests. "" means none.
	DiagnosticAddr string
	// Rules is a rules directory, watched; Bundle is a bundle file
	// (watched) or http(s) URL (polled). With neither, the embedded rules
	// (Embedded) are served.
	Rules, Bundle string
	Embedded      fs.FS
	Keys          []string // public keys; a bundle must be signed by one
	// AllowRollback activates a bundle ordered before the one in force or
	// the kept one (live.Gate.AllowRollback); each such activation is
	// logged as a warning.
	AllowRollback bool
	// MaxSequenceJump bounds how far a counter sequence may jump ahead of
	// the bundle in force (live.Gate.MaxSequenceJump); 0 means
	// live.DefaultMaxSequenceJump.
	MaxSequenceJump uint64
	// CheckTimeout bounds the check of a candidate (live.Gate.Timeout);
	// 0 means live.DefaultCheckTimeout.
	CheckTimeout time.Duration
	// Prepare is the gate's live.Gate.Prepare: what decides each snapshot
	// (cmd/dlroute gives cmd/dlroute/internal/serve/wasmserve.Prepare for the module); nil
	// means NativePrepare(0). Engine
	// names it in /v1/status and the log: "native" (the default) or
	// "wasm".
	Prepare func(context.Context, *live.Snapshot) (io.Closer, error)
	Engine  string
	// Keep is the file the last good bundle is kept in: "" means a file
	// under the user cache directory named for the source, "off" none.
	Keep     string
	Interval time.Duration // how often the source is checked; 0 means live.DefaultInterval
	RuleSet  string        // the default rule set of a request
	// StrictRelease is HandlerConfig.StrictRelease.
	StrictRelease bool
	MaxBody       int64
	// MaxInFlight is HandlerConfig.MaxInFlight: the bytes of bodies and
	// answers that requests hold at once; 0 means DefaultMaxInFlight.
	MaxInFlight int64
	// MaxWorking is HandlerConfig.MaxWorking: the requests worked on at
	// once; 0 means one fewer than the processors (FreeProcessors).
	MaxWorking int
	Log        *slog.Logger
	// Listening, when set, is called with the address once serve listens
	// (on it and on DiagnosticAddr); ListeningDiagnostic with
	// DiagnosticAddr's.
	Listening, ListeningDiagnostic func(net.Addr)
}

// Run serves until ctx ends: it makes the rules live, listens, watches
// the source, and shuts down gracefully when ctx ends.
func Run(ctx context.Context, opts Options) error {
	log := cmp.Or(opts.Log, slog.New(slog.DiscardHandler))
	addr := cmp.Or(opts.Addr, DefaultAddr)
	src, err := source(opts)
	if err != nil {
		return err
	}
	_, static := src.(interface{ isStatic() })
	keepPath, err := keepFile(opts.Keep, src, static)
	if err != nil {
		return err
	}
	gate := live.Gate{Keys: opts.Keys, Prepare: opts.Prepare, AllowRollback: opts.AllowRollback, MaxSequenceJump: opts.MaxSequenceJump, Timeout: opts.CheckTimeout}
	if gate.Prepare == nil {
		gate.Prepare = NativePrepare(0)
	}
	metrics := NewMetrics()
	rules, err := live.Open(ctx, live.Config{
		Source: src, Gate: gate, Keep: keepPath, Interval: opts.Interval,
		Observe: func(e live.Event) { logEvent(log, e); metrics.Observe(e); giveBackCandidate(e) },
	})
	if err != nil {
		return err
	}
	defer rules.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var diag net.Listener
	if opts.DiagnosticAddr != "" {
		if diag, err = net.Listen("tcp", opts.DiagnosticAddr); err != nil {
			ln.Close()
			return fmt.Errorf("the diagnostic address: %w", err)
		}
	}
	listening := []any{"url", openable(ln.Addr())}
	for _, a := range []struct{ what, addr string }{{"the API", addr}, {"the diagnostic address", opts.DiagnosticAddr}} {
		if a.addr != "" && !httpserve.IsLoopback(a.addr) {
			log.Warn("listening beyond loopback: "+a.what+" has no authentication or TLS of its own; put a proxy that has them in front", "addr", a.addr)
		}
	}
	if diag != nil {
		listening = append(listening, "diagnostic", openable(diag.Addr()))
	}
	log.Info("listening", append(listening, "source", src.String(), "engine", cmp.Or(opts.Engine, "native"), "keep", keepPath)...)
	if opts.Listening != nil {
		opts.Listening(ln.Addr())
	}
	if diag != nil && opts.ListeningDiagnostic != nil {
		opts.ListeningDiagnostic(diag.Addr())
	}

	watchCtx, stopWatch := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		if !static {
			rules.Watch(watchCtx)
		}
	}()
	h := newHandler(HandlerConfig{Rules: rules, Engine: opts.Engine, RuleSet: opts.RuleSet, StrictRelease: opts.StrictRelease, MaxBody: opts.MaxBody,
		MaxInFlight: opts.MaxInFlight, MaxWorking: opts.MaxWorking, Metrics: metrics, Log: log})
	metrics.watch(h.budget)
	err = serveBoth(ctx, ln, h.api, diag, h.diagnostic, log)
	stopWatch()
	<-watching
	return err
}

// serveBoth serves api on ln and, if diag is not nil, diagnostic on diag,
// each with a server of its own, until ctx ends or either stops; it
// returns once both have shut down.
func serveBoth(ctx context.Context, ln net.Listener, api http.Handler, diag net.Listener, diagnostic http.Handler, log *slog.Logger) error {
	if diag == nil {
		return httpserve.Serve(ctx, ln, api, log)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	diagErr := make(chan error, 1)
	go func() {
		defer stop()
		diagErr <- httpserve.Serve(ctx, diag, diagnostic, log)
	}()
	err := httpserve.Serve(ctx, ln, api, log)
	stop()
	if derr := <-diagErr; derr != nil {
		err = errors.Join(err, fmt.Errorf("the diagnostic address: %w", derr))
	}
	return err
}

// openable is the URL a person opens for a listener: 127.0.0.1 for one on
// every address.
func openable(a net.Addr) string {
	url, _ := httpserve.OpenableURL(a)
	return strings.TrimSuffix(url, "/")
}

// source is the live.Source the options name.
func source(opts Options) (live.Source, error) {
	switch {
	case opts.Rules != "" && opts.Bundle != "":
		return nil, fmt.Errorf("serve takes --rules or --bundle, not both")
	case opts.Rules != "":
		return live.Dir(opts.Rules), nil
	case strings.Contains(opts.Bundle, "://"):
		return live.HTTP(opts.Bundle, live.HTTPOptions{})
	case opts.Bundle != "":
		return live.File(opts.Bundle), nil
	}
	return embedded{live.Static("embedded rules", opts.Embedded)}, nil
}

// embedded is the embedded rules: never watched, never kept.
type embedded struct{ live.Source }

func (embedded) isStatic() {}

// keepFile is where the last good bundle is kept: keep as given, none for
// "off" and for the embedded rules, or by default a file under the user
// cache directory named by a hash of the source, so that two servers of
// different sources keep apart.
func keepFile(keep string, src live.Source, static bool) (string, error) {
	switch {
	case keep == "off" || static && keep == "":
		return "", nil
	case keep != "":
		return keep, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the last good bundle (%v): give --keep FILE, or --keep off", err)
	}
	abs := src.String()
	if p, err := filepath.Abs(abs); err == nil && !strings.Contains(abs, "://") {
		abs = p
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "dlroute", "serve", hex.EncodeToString(sum[:8])+".tar.gz"), nil
}

// logEvent writes one line per activation, refusal and failure.
func logEvent(log *slog.Logger, e live.Event) {
	switch {
	case e.Outcome == live.Activated:
		s := e.Snapshot
		log.Info("rules activated", "revision", s.Revision(), "origin", s.Origin(), "rulesets", strings.Join(s.Manifest().RuleSets, ","),
			"signed_by", strings.Join(s.SignedBy(), ","), "kept", s.Kept(), "seconds", e.Took.Seconds())
		if s.Kept() {
			log.Warn("serving the kept bundle: the source has nothing that passes", "revision", s.Revision(), "kept_at", s.KeptAt().UTC().Format(time.RFC3339),
				"age", e.At.Sub(s.KeptAt()).Round(time.Second).String(), "kept", s.Origin())
		}
		if rb := e.Rollback; rb != nil {
			log.Warn("rolled back, as --allow-rollback lets", "revision", s.Revision(), "sequence", rb.Sequence, "code", rb.Code,
				"from_revision", rb.NewerRevision, "from_sequence", rb.Newer, "from", rb.NewerWhere)
		}
	case e.Outcome == live.Refused:
		r := e.Refusal
		log.Warn("rules refused", "origin", r.Origin, "stage", r.Stage, "code", r.Code, "revision", r.Revision, "reason", r.Reason)
	case e.Outcome == live.Unchanged:
		log.Debug("rules unchanged")
	case e.Outcome == live.Canceled:
		log.Info("rules check canceled: a newer change is checked instead", "origin", e.Refusal.Origin, "stage", e.Refusal.Stage, "revision", e.Refusal.Revision)
	}
	if e.KeepError != nil {
		log.Error("the activated bundle could not be kept on disk", "err", e.KeepError)
	}
	if e.WatchError != nil {
		log.Warn("watching the source failed; it is still checked every interval", "err", e.WatchError)
	}
}

// giveBackCandidate gives the heap a refused or canceled candidate left
// back to the system (freeOSMemory): rules that were refused for their
// size were parsed first, and the Go runtime would otherwise keep that
// heap, sized for them, until a later collection, minutes on an idle
// server.
func giveBackCandidate(e live.Event) {
	if e.Outcome == live.Refused || e.Outcome == live.Canceled {
		freeOSMemory()
	}
}
