package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// `dlroute playground --rules DIR` follows DIR through the gate serve
// uses: what passes becomes the page's rules, what does not is refused
// with its reason, and the page keeps deciding with the rules it has.

// TestPlaygroundFollowsRules checks the server's side with no browser:
// rules.json, the events a page hears, and the log in the terminal.
func TestPlaygroundFollowsRules(t *testing.T) {
	dir, rulesFile, _ := copyRules(t)
	url, log := servePlaygroundLog(t, "--rules", dir)
	rev0 := servedRules(t, url).Revision
	if rev0 == "" || !strings.Contains(log.String(), "rules: "+dir+" revision "+rev0+" is in force") {
		t.Fatalf("at start: rules.json revision %q; log %q", rev0, log.String())
	}
	events := listenEvents(t, url)
	if e := events.next(t); e.name != "rules" || !strings.Contains(e.data, rev0) {
		t.Fatalf("the first event: %+v; want the rules served, %s", e, rev0)
	}

	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA}")
	e := events.next(t)
	served := servedRules(t, url)
	if e.name != "rules" || served.Revision == rev0 || !strings.Contains(e.data, served.Revision) || !strings.Contains(served.Files["jax/v3/rules.yaml"], "marker: nvfork") {
		t.Fatalf("after a marker is saved: event %+v, rules.json revision %s; want a new revision with the marker", e, served.Revision)
	}
	if !strings.Contains(log.String(), "revision "+served.Revision+" is in force") {
		t.Errorf("the log does not name the new revision: %q", log.String())
	}

	typo := strings.Replace(readFile(t, rulesFile), "platform_version.contains(m.marker)", "platform_versoin.contains(m.marker)", 1)
	writeFile(t, rulesFile, typo)
	if e := events.next(t); e.name != "refused" || !strings.Contains(e.data, `"stage":"compile"`) || !strings.Contains(e.data, "platform_versoin") {
		t.Fatalf("after a typo is saved: %+v; want a refusal at compile naming the typo", e)
	}
	if now := servedRules(t, url).Revision; now != served.Revision {
		t.Errorf("the refused typo changed rules.json to %s", now)
	}
	if want := "rules: refused " + dir; !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "rules.yaml:") {
		t.Errorf("the log does not say the typo was refused and where: %q", log.String())
	}

	// An editor that saves by writing a new file and renaming it over the
	// old one (vim, most IDEs): the fix is seen, and withdraws the refusal.
	tmp := rulesFile + ".swp"
	writeFile(t, tmp, strings.Replace(typo, "platform_versoin", "platform_version", 1))
	if err := os.Rename(tmp, rulesFile); err != nil {
		t.Fatal(err)
	}
	if e := events.next(t); e.name != "rules" || !strings.Contains(e.data, served.Revision) {
		t.Fatalf("after the fix was saved by a rename: %+v; want the rules in force, %s, announced again", e, served.Revision)
	}
}

// TestPlaygroundStartsFromRulesThatFail: rules that do not pass at start
// are served as they are, the page is told why, and the first change
// that passes is published.
func TestPlaygroundStartsFromRulesThatFail(t *testing.T) {
	dir, rulesFile, _ := copyRules(t)
	good := readFile(t, rulesFile)
	writeFile(t, rulesFile, strings.Replace(good, "platform_version.contains(m.marker)", "platform_versoin.contains(m.marker)", 1))
	url, log := servePlaygroundLog(t, "--rules", dir)
	if !strings.Contains(log.String(), "does not pass its compile step; the page shows the rules as they are") {
		t.Errorf("the start's warning: %q", log.String())
	}
	if !strings.Contains(servedRules(t, url).Files["jax/v3/rules.yaml"], "platform_versoin") {
		t.Fatalf("rules.json does not hold the rules as they are")
	}
	events := listenEvents(t, url)
	if e := events.next(t); e.name != "rules" {
		t.Fatalf("first event %+v, want rules", e)
	}
	if e := events.next(t); e.name != "refused" {
		t.Fatalf("second event %+v, want the start's refusal", e)
	}
	writeFile(t, rulesFile, good)
	if e := events.next(t); e.name != "rules" || strings.Contains(servedRules(t, url).Files["jax/v3/rules.yaml"], "platform_versoin") {
		t.Fatalf("after the fix: %+v; want the fixed rules published", e)
	}
}

// TestPlaygroundFollowsBundle: --rules FILE follows a bundle that
// `dlroute bundle build` replaces.
func TestPlaygroundFollowsBundle(t *testing.T) {
	dir, rulesFile, _ := copyRules(t)
	archive := filepath.Join(t.TempDir(), "rules.tar.gz")
	if _, stderr, status := runDlroute(t, "bundle", "build", dir, "-o", archive, "--revision", "one"); status != 0 {
		t.Fatalf("bundle build: %s", stderr)
	}
	url, _ := servePlaygroundLog(t, "--rules", archive)
	if rev := servedRules(t, url).Revision; rev != "one" {
		t.Fatalf("rules.json revision %q, want the bundle's, one", rev)
	}
	events := listenEvents(t, url)
	events.next(t)
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA}")
	if _, stderr, status := runDlroute(t, "bundle", "build", dir, "-o", archive, "--revision", "two"); status != 0 {
		t.Fatalf("bundle build: %s", stderr)
	}
	if e := events.next(t); e.name != "rules" || !strings.Contains(e.data, `"revision":"two"`) || !strings.Contains(servedRules(t, url).Files["jax/v3/rules.yaml"], "nvfork") {
		t.Fatalf("after the bundle was rebuilt: %+v; want revision two with the marker", e)
	}
}

type servedDoc struct {
	Revision string            `json:"revision"`
	Live     bool              `json:"live"`
	Files    map[string]string `json:"files"`
}

func servedRules(t *testing.T, url string) servedDoc {
	t.Helper()
	resp, err := http.Get(url + "rules.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc servedDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Live {
		t.Errorf("rules.json of --rules does not say live")
	}
	return doc
}

type sse struct{ name, data string }

type eventStream chan sse

// listenEvents reads the page's event stream until the test ends.
func listenEvents(t *testing.T, url string) eventStream {
	t.Helper()
	resp, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /events: %s", resp.Status)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ch := make(eventStream, 16)
	go func() {
		defer close(ch)
		lines := bufio.NewScanner(resp.Body)
		lines.Buffer(nil, 1<<20)
		var cur sse
		for lines.Scan() {
			line := lines.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				cur.name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				cur.data = v
			} else if line == "" && cur.name != "" {
				ch <- cur
				cur = sse{}
			}
		}
	}()
	return ch
}

func (ch eventStream) next(t *testing.T) sse {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatalf("the event stream ended")
		}
		return e
	case <-time.After(testenv.Patience(t)):
		t.Fatalf("no event when the test's time ran out")
	}
	return sse{}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// servePlaygroundLog runs `dlroute playground --addr 127.0.0.1:0 ARGS...`
// until the test ends, and returns its URL and what the command writes to
// stderr. The command builds the WebAssembly module, which the quick
// loop never does. (The browser tests, in e2e/playground, run the
// binary.)
func servePlaygroundLog(t *testing.T, args ...string) (string, *testenv.Buffer) {
	t.Helper()
	testenv.Short(t, "dlroute playground builds the WebAssembly module; it")
	ctx, cancel := context.WithCancel(context.Background())
	saved := serveContext
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	pr, pw := io.Pipe()
	var stderr testenv.Buffer
	done := make(chan int, 1)
	go func() {
		status := run(append([]string{"playground", "--addr", "127.0.0.1:0"}, args...), nil, pw, &stderr)
		pw.Close()
		done <- status
	}()
	t.Cleanup(func() {
		cancel()
		if status := <-done; status != 0 {
			t.Errorf("dlroute playground exited %d: %s", status, stderr.String())
		}
		serveContext = saved
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("dlroute playground printed no address: %s", stderr.String())
	}
	go io.Copy(io.Discard, pr)
	url, ok := strings.CutPrefix(lines.Text(), "dlroute playground: ")
	if !ok {
		t.Fatalf("dlroute playground printed %q", lines.Text())
	}
	return url, &stderr
}
