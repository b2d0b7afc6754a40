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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestOperatorPath is docs/operating.md's path for an operator: make a key, build and
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
	deadline := time.Now().Add(testenv.Patience(t))
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

// TestServeRollback is issue 12's rollback through serve: with a newer
// signed bundle in force, an older validly signed one, and then a replay
// of the first, are refused with code rollback, in /v1/status, the log
// and /metrics, and the newer keeps deciding. With --allow-rollback a
// restart takes the older one, and says so; with the source gone, a
// restart serves the kept bundle, and says which and how old.
func TestServeRollback(t *testing.T) {
	dir := t.TempDir()
	key, bundlePath, rulesDir, keep := filepath.Join(dir, "rules.key"), filepath.Join(dir, "rules.tar.gz"), filepath.Join(dir, "rules"), filepath.Join(dir, "kept.tar.gz")
	if err := ruletest.WriteDir(rulesDir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "bundle", "keygen", "-o", key)
	build := func(seq, revision string) []byte {
		mustRun(t, "bundle", "build", rulesDir, "-o", bundlePath, "--sign", key, "--revision", revision, "--sequence", seq)
		data, err := os.ReadFile(bundlePath)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first := build("10", "r10")
	serveArgs := []string{"--bundle", bundlePath, "--key", key + ".pub", "--keep", keep, "--interval", "50ms"}
	url, log, stop := startServe(t, serveArgs...)
	ruletest.WriteDir(rulesDir, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	build("20", "r20")
	waitStatus(t, url, "r20 in force", func(st serveStatus) bool { return st.Active.Revision == "r20" })

	build("15", "r15") // older, validly signed
	st := waitStatus(t, url, "r15 refused", func(st serveStatus) bool { return st.LastRefusal.Revision == "r15" })
	if st.LastRefusal.Stage != "verify" || st.LastRefusal.Code != "rollback" || st.Active.Revision != "r20" || st.Active.Sequence != 20 {
		t.Errorf("after r15: /v1/status = %+v; want r15 refused at verify with rollback, r20 (sequence 20) in force", st)
	}
	ruletest.WriteFile(bundlePath, first) // a replay of the first
	st = waitStatus(t, url, "r10's replay refused", func(st serveStatus) bool { return st.LastRefusal.Revision == "r10" })
	if st.LastRefusal.Code != "rollback" || st.Active.Revision != "r20" {
		t.Errorf("after the replay of r10: /v1/status = %+v; want it refused with rollback, r20 in force", st)
	}
	if got := post(t, url, `{"platform":"gpu","platform_version":"nvfork 1.0","local_hardware_id":0}`); !strings.Contains(got, `"revision":"r20"`) {
		t.Errorf("after the refusals, r20 did not decide: %s", got)
	}
	// Each check that finds a refused bundle still at the source refuses
	// it again, and the source is checked every 50 ms here: at least the
	// two, and only rollbacks.
	const rollbacks = `dlroute_rules_refusals_total{code="rollback",stage="verify"} `
	metrics := get(t, url+"/metrics")
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(grepLines(metrics, rollbacks), rollbacks)))
	if err != nil || n < 2 || strings.Count(grepLines(metrics, "dlroute_rules_refusals_total{"), "\n") != 1 {
		t.Errorf("/metrics has not the two rollback refusals, and no other:\n%s", grepLines(metrics, "dlroute_rules_"))
	}
	stop()
	if !strings.Contains(log.String(), `msg="rules refused" origin=`+bundlePath+` stage=verify code=rollback revision=r15`) {
		t.Errorf("the log does not say r15 was refused as a rollback:\n%s", log)
	}

	// Restarted with the replayed r10 at the source and r20 kept: refused,
	// r20 from the kept file; with --allow-rollback, r10.
	url, _, stop = startServe(t, serveArgs...)
	if st := status(t, url); st.Active.Revision != "r20" || !st.Active.Kept || st.LastRefusal.Code != "rollback" {
		t.Errorf("restart with r10 at the source, r20 kept: /v1/status = %+v; want r10 refused, r20 kept", st)
	}
	stop()
	url, log, stop = startServe(t, append(serveArgs, "--allow-rollback")...)
	if st := status(t, url); st.Active.Revision != "r10" || st.Active.Kept {
		t.Errorf("restart with --allow-rollback: /v1/status = %+v; want r10 in force", st)
	}
	stop()
	if !strings.Contains(log.String(), `msg="rolled back, as --allow-rollback lets" revision=r10 sequence=10 code=rollback from_revision=r20 from_sequence=20`) {
		t.Errorf("the log does not say r10 rolled back from r20:\n%s", log)
	}

	// The source gone: the kept r10, with a warning naming it and its age.
	os.Remove(bundlePath)
	_, log, stop = startServe(t, serveArgs...)
	stop()
	if !regexp.MustCompile(`level=WARN msg="serving the kept bundle: the source has nothing that passes" revision=r10 kept_at=\S+ age=\d+s`).MatchString(log.String()) {
		t.Errorf("the log does not warn that the kept r10 is served:\n%s", log)
	}
}

// TestServeRefusesNonRegular: a named pipe, or a link to /dev/zero, given
// as the bundle is refused, without a read that waits on a writer or
// never ends, and serve exits.
func TestServeRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo.tar.gz"), filepath.Join(dir, "zero.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, zero} {
		var stderr strings.Builder
		status := make(chan int, 1)
		go func() {
			status <- run([]string{"serve", "--addr", "127.0.0.1:0", "--bundle", path, "--keep", "off"}, nil, io.Discard, &stderr)
		}()
		select {
		case s := <-status:
			if s != 1 || !strings.Contains(stderr.String(), "a bundle is a regular file") {
				t.Errorf("serve --bundle %s: status %d:\n%s; want 1, not_regular", path, s, stderr.String())
			}
		case <-time.After(testenv.Patience(t)):
			t.Fatalf("serve --bundle %s had not exited when the test's time ran out: it reads the file", path)
		}
	}
}

// serveStatus is what the tests read of /v1/status.
type serveStatus struct {
	Active struct {
		Revision string
		Sequence uint64
		Kept     bool
	}
	LastRefusal struct{ Stage, Code, Revision string } `json:"last_refusal"`
}

func status(t *testing.T, url string) serveStatus {
	t.Helper()
	var st serveStatus
	if err := json.Unmarshal([]byte(get(t, url+"/v1/status")), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func waitStatus(t *testing.T, url, what string, ok func(serveStatus) bool) serveStatus {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience(t))
	for {
		st := status(t, url)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s: /v1/status = %+v", what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

func grepLines(s, substr string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// startServe runs `dlroute serve --addr 127.0.0.1:0 args...` until stop,
// which sends SIGTERM (serve is then the only one listening for it) and
// waits for a clean exit.
func startServe(t *testing.T, args ...string) (url string, log *listenLog, stop func()) {
	t.Helper()
	log = &listenLog{listening: make(chan string, 1)}
	exited := make(chan int, 1)
	go func() {
		exited <- run(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), nil, io.Discard, log)
	}()
	select {
	case url = <-log.listening:
	case status := <-exited:
		t.Fatalf("serve %s exited with %d:\n%s", strings.Join(args, " "), status, log)
	}
	return url, log, func() {
		t.Helper()
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		if status := <-exited; status != 0 {
			t.Errorf("after SIGTERM, serve exited with %d:\n%s", status, log)
		}
	}
}

// TestBundleBuildRefusesFutureSequence: `bundle build --sequence` with a
// time far after the clock (2^64-1, the year 9999) is refused with
// sequence_ahead unless forced; serve refuses the forced bundle; and a
// build after it, with no --sequence, is the time now, not the forced
// one plus one.
func TestBundleBuildRefusesFutureSequence(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rules.tar.gz")
	rulesDir := filepath.Join(dir, "rules")
	if err := ruletest.WriteDir(rulesDir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	year9999 := strconv.FormatInt(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 10)
	for _, seq := range []string{"18446744073709551615", year9999} {
		var stderr strings.Builder
		if status := run([]string{"bundle", "build", rulesDir, "-o", out, "--sequence", seq}, nil, io.Discard, &stderr); status != 1 || !strings.Contains(stderr.String(), "error: sequence_ahead") {
			t.Errorf("bundle build --sequence %s: status %d\n%s; want 1, sequence_ahead", seq, status, stderr.String())
		}
	}
	mustRun(t, "bundle", "build", rulesDir, "-o", out, "--sequence", "18446744073709551615", "--force-sequence")
	var stderr strings.Builder
	if status := run([]string{"serve", "--addr", "127.0.0.1:0", "--bundle", out, "--keep", "off"}, nil, io.Discard, &stderr); status != 1 || !strings.Contains(stderr.String(), "sequence_ahead") && !strings.Contains(stderr.String(), "from the future") {
		t.Errorf("serve of a bundle of sequence 2^64-1: status %d\n%s; want 1, refused as from the future", status, stderr.String())
	}
	before := time.Now().Unix()
	mustRun(t, "bundle", "build", rulesDir, "-o", out)
	b, err := bundle.ReadFile(out, bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if seq := b.Manifest.Sequence; seq < uint64(before) || seq > uint64(time.Now().Unix()) {
		t.Errorf("bundle build after the forced one: sequence %d; want the time now, %d", seq, before)
	}
}

// TestServeDiagnosticAddr: `serve --diagnostic-addr` listens on a second
// address, says where, and answers /healthz there; --max-working takes no
// negative number.
func TestServeDiagnosticAddr(t *testing.T) {
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if status := run([]string{"serve", "--rules", dir, "--max-working", "-1"}, nil, io.Discard, &stderr); status != 2 || !strings.Contains(stderr.String(), "error: --max-working -1:") {
		t.Errorf("serve --max-working -1: status %d, %s; want 2 and an error naming the flag", status, stderr.String())
	}

	log := &listenLog{listening: make(chan string, 1)}
	exited := make(chan int, 1)
	go func() {
		exited <- run([]string{"serve", "--addr", "127.0.0.1:0", "--diagnostic-addr", "127.0.0.1:0", "--rules", dir, "--keep", "off"}, nil, io.Discard, log)
	}()
	select {
	case <-log.listening:
	case status := <-exited:
		t.Fatalf("serve exited with %d:\n%s", status, log)
	}
	m := regexp.MustCompile(`msg=listening url=\S+ diagnostic=(http://\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("serve --diagnostic-addr does not say where the diagnostic address listens:\n%s", log)
	}
	resp, err := http.Get(m[1] + "/healthz")
	if err != nil {
		t.Fatalf("/healthz on the diagnostic address: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("/healthz on the diagnostic address: %d %s; want 200", resp.StatusCode, body)
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	if status := <-exited; status != 0 {
		t.Errorf("after SIGTERM, serve exited with %d:\n%s", status, log)
	}
}
