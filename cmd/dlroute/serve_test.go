//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/ruletest"
)

// TestOperatorPath is README's path for an operator: make a key, build and
// sign a bundle, serve it, add a marker, rebuild the bundle, see the
// running server pick it up, and stop it with SIGTERM.
func TestOperatorPath(t *testing.T) {
	dir := t.TempDir()
	key, bundlePath, rulesDir := filepath.Join(dir, "rules.key"), filepath.Join(dir, "rules.tar.gz"), filepath.Join(dir, "rules")
	if err := ruletest.WriteDir(rulesDir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "bundle", "keygen", "-o", key)
	mustRun(t, "bundle", "build", rulesDir, "-o", bundlePath, "--sign", key, "--revision", "2026-12-01.1")
	if out := mustRun(t, "bundle", "verify", bundlePath, "--key", key+".pub"); !strings.Contains(out, "signature: verified, by dlroute-rules+") {
		t.Errorf("bundle verify said:\n%s", out)
	}

	// A byte changed in the bundle is caught.
	data, _ := os.ReadFile(bundlePath)
	tampered, _ := ruletest.SetMember(data, "jax/v3/rules.yaml", bytes.Replace(ruletest.Rules()["jax/v3/rules.yaml"].Data, []byte("rocm"), []byte("rocn"), 1))
	os.WriteFile(filepath.Join(dir, "tampered.tar.gz"), tampered, 0o644)
	var stderr strings.Builder
	if status := run([]string{"bundle", "verify", filepath.Join(dir, "tampered.tar.gz"), "--key", key + ".pub"}, nil, io.Discard, &stderr); status != 1 ||
		!strings.Contains(stderr.String(), "jax/v3/rules.yaml: the file's sha256 is") {
		t.Errorf("bundle verify of a tampered bundle: status %d, %s", status, stderr.String())
	}

	log := &listenLog{listening: make(chan string, 1)}
	exited := make(chan int, 1)
	go func() {
		exited <- run([]string{"serve", "--addr", "127.0.0.1:0", "--bundle", bundlePath, "--key", key + ".pub", "--keep", filepath.Join(dir, "kept.tar.gz")}, nil, io.Discard, log)
	}()
	var url string
	select {
	case url = <-log.listening:
	case status := <-exited:
		t.Fatalf("serve exited with %d:\n%s", status, log)
	}
	nvfork := `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`
	if got := post(t, url, nvfork); !strings.Contains(got, `"Unknown GPU platform for __dlpack__: nvfork 1.0"`) || !strings.Contains(got, `"revision":"2026-12-01.1"`) {
		t.Fatalf("before the edit: %s", got)
	}

	ruletest.WriteDir(rulesDir, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	mustRun(t, "bundle", "build", rulesDir, "-o", bundlePath, "--sign", key, "--revision", "2026-12-01.2")
	deadline := time.Now().Add(30 * time.Second)
	for revision(t, url) != "2026-12-01.2" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := post(t, url, nvfork); got != `{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3","revision":"2026-12-01.2"}`+"\n" {
		t.Errorf("after the new bundle: %s", got)
	}

	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	if status := <-exited; status != 0 || !strings.Contains(log.String(), `msg="shutting down: finishing the requests in flight"`) {
		t.Errorf("after SIGTERM, serve exited with %d:\n%s", status, log)
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr strings.Builder
	if status := run(args, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("dlroute %s: status %d\n%s%s", strings.Join(args, " "), status, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url+"/v1/resolve", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

func revision(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Active struct{ Revision string } }
	json.NewDecoder(resp.Body).Decode(&st)
	return st.Active.Revision
}

// listenLog is serve's stderr: it says where serve listens once it does.
type listenLog struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	listening chan string
	sent      bool
}

var listeningURL = regexp.MustCompile(`msg=listening url=(http://\S+)`)

func (l *listenLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if m := listeningURL.FindSubmatch(l.buf.Bytes()); m != nil && !l.sent {
		l.sent = true
		l.listening <- string(m[1])
	}
	return len(p), nil
}

func (l *listenLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
