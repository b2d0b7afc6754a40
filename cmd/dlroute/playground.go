package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/wasmbuild"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/playground"
)

// serveContext is how long `dlroute playground` serves: until an
// interrupt. Tests replace it with a context they cancel.
var serveContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runPlayground(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("playground")
	addr := fs.String("addr", "127.0.0.1:8080", "serve on `HOST:PORT`; loopback unless you mean others to reach it")
	rulesDir := fs.String("rules", "", "serve the rule sets at `PATH` (a directory holding <name>/<version>/, or a bundle) instead of the embedded ones, and follow it: each change that compiles and passes its tests reloads in the open pages")
	static := fs.String("static", "", "write the page, rules.json and dlroute.wasm into `DIR` for any static server, and exit")
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	rules, err := rulesFS(*rulesDir)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	ctx, stop := serveContext()
	defer stop()
	opts := playground.Options{Rules: rules, Source: cmp.Or(*rulesDir, "embedded")}
	// --rules is followed: every change goes through the gate serve uses,
	// and what passes becomes the page's rules. Rules that do not pass at
	// start are served as they are: the page shows each error at its
	// place in the editor, where it can be fixed.
	var pg *playground.Handler
	var follow *live.Rules
	var startRefusal *live.Refusal
	cfg := live.Config{Source: rulesSource(*rulesDir), Observe: func(e live.Event) {
		logRulesEvent(stderr, e)
		if pg != nil {
			pg.Observe(e)
		}
	}}
	if *rulesDir != "" && *static == "" {
		opts.Live = true
		if follow, err = live.Open(ctx, cfg); err == nil {
			opts.Rules, opts.Revision = follow.Current().FS(), follow.Current().Revision()
		} else {
			if !errors.As(err, &startRefusal) {
				startRefusal = &live.Refusal{Origin: *rulesDir, Stage: live.StageFetch, Code: "error", Reason: err.Error()}
			}
			fmt.Fprintf(stderr, "warning: %s does not pass its %s step; the page shows the rules as they are, and loads them once a change passes\n", *rulesDir, startRefusal.Stage)
		}
	} else if _, err := loadCatalog(*rulesDir); err != nil {
		n := len(engine.Errors(err))
		fmt.Fprintf(stderr, "warning: %s does not load (%s); the page shows where\n", cmp.Or(*rulesDir, "the embedded rules directory"), plural(max(n, 1), "error"))
	}
	module, gz, err := wasmbuild.Gzipped(ctx, wasmbuild.Options{Progress: stderr})
	if err != nil {
		printError(stderr, err)
		return 1
	}
	opts.Module, opts.ModuleGzip = module, gz
	if *static != "" {
		if err := playground.WriteSite(*static, opts); err != nil {
			printError(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote the playground to %s; serve that directory with any static server, such as: python3 -m http.server -d %s\n", *static, *static)
		return 0
	}
	pg, err = playground.New(opts)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	if opts.Live {
		if startRefusal != nil {
			pg.Refused(startRefusal)
		}
		go followRules(ctx, cfg, follow)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		printError(stderr, err)
		fmt.Fprintln(stderr, "hint: another process may serve that port; try --addr 127.0.0.1:0 for any free one")
		return 1
	}
	if host, _, _ := net.SplitHostPort(*addr); !isLoopback(host) {
		fmt.Fprintf(stderr, "warning: serving on %s, which is not loopback: anyone who reaches it can use the playground\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "dlroute playground: http://%s/\n", ln.Addr())
	srv := &http.Server{Handler: pg, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(pg.Close) // the pages' event streams would hold the shutdown
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		printError(stderr, err)
		return 1
	}
	return 0
}

// rulesSource is the live source of --rules: a folder or a bundle file.
func rulesSource(path string) live.Source {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return live.File(path)
	}
	return live.Dir(path)
}

// followRules keeps the page's rules those in force at cfg's source until
// ctx ends. rules is what live.Open returned at start; nil, when nothing
// passed then, opens it again after each change until one passes.
// cfg.Observe publishes each activation and tells of each refusal.
func followRules(ctx context.Context, cfg live.Config, rules *live.Rules) {
	if rules == nil {
		if rules = openOnChange(ctx, cfg); rules == nil {
			return
		}
	}
	defer rules.Close()
	rules.Watch(ctx)
}

// openOnChange opens the rules once, after a change of the source (or
// every interval, as Watch checks), a candidate passes; nil when ctx ends
// first.
func openOnChange(ctx context.Context, cfg live.Config) *live.Rules {
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel() // Watch sets up its own
	var changes <-chan struct{}
	if w, ok := cfg.Source.(live.Watcher); ok {
		changes, _ = w.Changes(watchCtx)
	}
	poll := time.NewTicker(cmp.Or(cfg.Interval, live.DefaultInterval))
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
			// An editor writes in steps: wait until the writes stop.
			for settled := false; !settled; {
				select {
				case <-ctx.Done():
					return nil
				case <-changes:
				case <-time.After(live.DefaultSettle):
					settled = true
				}
			}
		case <-poll.C:
		}
		if r, err := live.Open(ctx, cfg); err == nil {
			return r
		}
	}
}

// logRulesEvent tells the person running the playground what became of
// a change to --rules.
func logRulesEvent(w io.Writer, e live.Event) {
	switch e.Outcome {
	case live.Activated:
		s := e.Snapshot
		fmt.Fprintf(w, "rules: %s revision %s is in force (%s), checked in %d ms\n",
			s.Origin(), s.Revision(), strings.Join(s.Manifest().RuleSets, " "), e.Took.Milliseconds())
	case live.Refused:
		fmt.Fprintf(w, "rules: %s\n", e.Refusal.Error())
	}
	if e.WatchError != nil {
		fmt.Fprintf(w, "warning: changes to the rules are not seen as they happen (%v); they are checked every %s instead\n", e.WatchError, live.DefaultInterval)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
