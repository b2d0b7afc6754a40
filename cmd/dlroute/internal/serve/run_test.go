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
