package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// slowMatrix is ruletest.Matrix, the fewest rules with a matrix, with
// twenty slow rules first in jax@v3, for every platform (twenty is about
// as many as one decision's cost budget allows): each of jax@v3's
// decisions goes through all of them (about 100 ms natively), so their
// matrix takes 1.6 s natively and 20 s under -race, after a load of
// 0.1 s. A test that cuts it short waits for none of that. They are
// made, and their load checked, once per test binary (slowRules): the
// tests that use them only read them.
func slowMatrix(t *testing.T) fstest.MapFS {
	t.Helper()
	rules, err := slowRules()
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

var slowRules = sync.OnceValues(func() (fstest.MapFS, error) {
	rules := ruletest.WithSlowRules(ruletest.Matrix(), 20)
	const rulesFile = "jax/v3/rules.yaml"
	guard := []byte("platform == '" + ruletest.SlowPlatform + "' && ")
	rules[rulesFile] = &fstest.MapFile{Data: bytes.ReplaceAll(rules[rulesFile].Data, guard, []byte("true && "))}
	if _, err := engine.Load(rules, engine.Options{SkipTests: true}); err != nil {
		return nil, fmt.Errorf("the slow rules do not load: %w", err)
	}
	return rules, nil
})

// TestInteropDeadline: a matrix that would take seconds is cut at
// Options.InteropTimeout, and interop.json says why, with no grid.
func TestInteropDeadline(t *testing.T) {
	const timeout = 50 * time.Millisecond
	h, err := New(Options{Rules: slowMatrix(t), Source: "rules", Revision: "slow", Live: true, Module: []byte("\x00asm\x01\x00\x00\x00"), InteropTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/interop.json", nil))
	var doc interopDoc
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("interop.json: %d %v", w.Code, err)
	}
	if w.Code != 200 || !strings.Contains(doc.Error, "took longer than "+timeout.String()) || len(doc.Rows) != 0 || doc.Revision != "slow" {
		t.Fatalf("interop.json of a matrix of seconds: %d, revision %q, error %q, %d rows; want 200, revision slow, cut at %v, no rows",
			w.Code, doc.Revision, doc.Error, len(doc.Rows), timeout)
	}
}

// TestPublishStopsTheMatrixBefore: a publish stops the deciding of the
// matrix of the rules it replaces, which nobody will ask for (its
// timeout here is an hour), and interop.json is the new rules'.
func TestPublishStopsTheMatrixBefore(t *testing.T) {
	site := &interopSite{timeout: time.Hour}
	site.publish(slowMatrix(t), rulesState{revision: "slow"})
	slow := site.current
	site.publish(ruletest.Matrix(), rulesState{revision: "fixed"})
	for _, c := range []struct {
		what     string
		get      func() (*resource, error)
		revision string
		error    string
	}{
		{"the replaced rules' matrix", func() (*resource, error) { return slow.get(site.timeout) }, "slow", "newer rules were published"},
		{"interop.json", site.get, "fixed", ""},
	} {
		r, err := c.get()
		if err != nil {
			t.Fatal(err)
		}
		var doc interopDoc
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Revision != c.revision || !strings.Contains(doc.Error, c.error) || (c.error == "") != (len(doc.Rows) > 0) {
			t.Errorf("%s: revision %q, error %q, %d rows; want revision %s, error %q", c.what, doc.Revision, doc.Error, len(doc.Rows), c.revision, c.error)
		}
	}
}
