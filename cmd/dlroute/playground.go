package main

import (
	"cmp"
	"context"
	"fmt"
	"github.com/dlroute/dlroute/cmd/dlroute/internal/httpserve"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
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
	static := fs.String("static", "", "write the page, rules.json, interop.json and dlroute.wasm into `DIR` for any static server, and exit")
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
	var follow *follower
	if *rulesDir != "" && *static == "" {
		follow = startFollowing(ctx, *rulesDir, stderr) // checked while the module builds
		opts.Live = true
	} else if *rulesDir != "" {
		// A static site of a rules directory: the page shows each error
		// at its place in the editor. (The embedded rules load: their
		// tests say so.)
		if _, err := loadCatalog(*rulesDir); err != nil {
			n := len(engine.Errors(err))
			fmt.Fprintf(stderr, "warning: %s does not load (%s); the page shows where\n", *rulesDir, plural(max(n, 1), "error"))
		}
	}
	module, gz, err := wasmbuild.Gzipped(ctx, wasmbuild.Options{Progress: stderr})
	if err != nil {
		printError(stderr, err)
		return 1
	}
	opts.Module, opts.ModuleGzip = module, gz
	// The page decides with the decision module and the rules' plans from
	// the start; it fetches the compiler module when the person edits.
	if opts.Decision, err = decisionwasm.Bytes(); err != nil {
		printError(stderr, err)
		return 1
	}
	if follow != nil {
		if s := follow.start(ctx, *rulesDir); s != nil {
			opts.Rules, opts.Revision = s.FS(), s.Revision()
		}
	}
	if *static != "" {
		if err := playground.WriteSite(*static, opts); err != nil {
			printError(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote the playground to %s; serve that directory with any static server, such as: python3 -m http.server -d %s\n", *static, *static)
		return 0
	}
	pg, err := playground.New(opts)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	if follow != nil {
		follow.run(pg, opts.Revision)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		printError(stderr, err)
		fmt.Fprintln(stderr, "hint: another process may serve that port; try --addr 127.0.0.1:0 for any free one")
		return 1
	}
	url, everywhere := httpserve.OpenableURL(ln.Addr())
	switch {
	case everywhere:
		fmt.Fprintf(stderr, "warning: listening on all interfaces (%s), not only loopback: anyone who reaches this machine can use the playground\n", ln.Addr())
	case !httpserve.IsLoopback(*addr):
		fmt.Fprintf(stderr, "warning: serving on %s, which is not loopback: anyone who reaches it can use the playground\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "dlroute playground: %s\n", url)
	go func() {
		<-ctx.Done()
		pg.Close() // the pages' event streams would hold the shutdown
	}()
	// The server's errors, as warnings; its own progress is not news here.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := httpserve.Serve(ctx, ln, pg, log); err != nil {
		printError(stderr, err)
		return 1
	}
	return 0
}
