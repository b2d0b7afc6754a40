package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// TestRunPicksUpAnEdit is the operator's path on a directory: serve a
// rules folder, add a marker to it, and see the running server decide with
// it, with no restart; then stop it.
func TestRunPicksUpAnEdit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rules")
	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Addr: "127.0.0.1:0", Rules: dir, Keep: filepath.Join(t.TempDir(), "kept.tar.gz"),
			Log: slog.New(slog.DiscardHandler), Listening: func(a net.Addr) { addr <- a }})
	}()
	var url string
	select {
	case a := <-addr:
		url = "http://" + a.String()
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	nvfork := `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`
	resolve := func() string {
		resp, err := http.Post(url+"/v1/resolve", "application/json", strings.NewReader(nvfork))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if got := resolve(); !strings.Contains(got, "Unknown GPU platform") {
		t.Fatalf("before the edit: %s", got)
	}
	ruletest.WriteDir(dir, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	waitUntil(t, "the edit is in force", func() bool { return strings.Contains(resolve(), `"device_type":"kDLCUDA"`) })

	stop()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after its context ended, want nil", err)
	}
}

// TestRunServesDiagnosticAddr: Options.DiagnosticAddr listens beside the
// API and answers /healthz, /v1/status and /metrics, and none of the API;
// both stop when ctx ends.
func TestRunServesDiagnosticAddr(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	api, diag := make(chan net.Addr, 1), make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Addr: "127.0.0.1:0", DiagnosticAddr: "127.0.0.1:0", Embedded: ruletest.Rules(), Log: slog.New(slog.DiscardHandler),
			Listening: func(a net.Addr) { api <- a }, ListeningDiagnostic: func(a net.Addr) { diag <- a }})
	}()
	var apiURL, diagURL string
	for apiURL == "" || diagURL == "" {
		select {
		case a := <-api:
			apiURL = "http://" + a.String()
		case a := <-diag:
			diagURL = "http://" + a.String()
		case err := <-done:
			t.Fatalf("Run: %v", err)
		}
	}
	if apiURL == diagURL {
		t.Fatalf("the API and the diagnostic address are both %s", apiURL)
	}
	for _, path := range []string{"/healthz", "/v1/status", "/metrics"} {
		if r := ask(t, http.MethodGet, diagURL+path, ""); r.status != http.StatusOK {
			t.Errorf("GET %s on the diagnostic address: %d %.200s %v; want 200", path, r.status, r.body, r.err)
		}
	}
	if r := ask(t, http.MethodPost, diagURL+"/v1/resolve", cudaInput); r.status != http.StatusNotFound {
		t.Errorf("POST /v1/resolve on the diagnostic address: %d %.200s %v; want 404", r.status, r.body, r.err)
	}
	if r := ask(t, http.MethodPost, apiURL+"/v1/resolve", cudaInput); r.status != http.StatusOK {
		t.Errorf("POST /v1/resolve on the API: %d %.200s %v; want 200", r.status, r.body, r.err)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after its context ended, want nil", err)
	}
	if _, err := http.Get(diagURL + "/healthz"); err == nil {
		t.Errorf("the diagnostic address still answers after Run returned")
	}
}

// TestRunRefusesABusyDiagnosticAddr: a diagnostic address that cannot be
// listened on stops Run at start, and says which address it was.
func TestRunRefusesABusyDiagnosticAddr(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = Run(context.Background(), Options{Addr: "127.0.0.1:0", DiagnosticAddr: taken.Addr().String(), Embedded: ruletest.Rules(), Log: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "the diagnostic address") {
		t.Fatalf("Run with a diagnostic address in use: %v; want an error that names the diagnostic address", err)
	}
}
