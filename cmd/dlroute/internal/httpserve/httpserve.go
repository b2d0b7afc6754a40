// Package httpserve is the HTTP server both `dlroute serve` and `dlroute
// playground` run: its limits, a graceful shutdown, and the addresses a
// person is shown.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// The HTTP server's limits. A client that sends its headers slower than
// ReadHeaderTimeout, or a request slower than ReadTimeout, is cut off; a
// batch must be answered within WriteTimeout.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 64 << 10
	// ShutdownTimeout bounds how long Serve waits, once ctx ends, for the
	// requests in flight.
	ShutdownTimeout = 30 * time.Second
)

// Serve answers h's requests on ln until ctx ends, then shuts down
// gracefully: it stops accepting, finishes the requests in flight (for at
// most ShutdownTimeout), and returns nil, or the error that stopped it.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing the requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// IsLoopback reports whether addr ("127.0.0.1:8181", "[::1]:0",
// "localhost:8181") listens on loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// OpenableURL is a URL a person can open in a browser for a listener at
// addr: the address itself, or, for one that listens on all interfaces
// (0.0.0.0 or [::], which a browser cannot open), loopback at its port,
// with everywhere set.
func OpenableURL(addr net.Addr) (url string, everywhere bool) {
	if tcp, ok := addr.(*net.TCPAddr); ok && (tcp.IP == nil || tcp.IP.IsUnspecified()) {
		return fmt.Sprintf("http://127.0.0.1:%d/", tcp.Port), true
	}
	return "http://" + addr.String() + "/", false
}
