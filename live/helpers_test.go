package live_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// archive packs fsys, unsigned unless keys are given.
func archive(t testing.TB, fsys fs.FS, signers ...string) []byte {
	t.Helper()
	data, _, err := ruletest.Bundle(fsys, bundle.BuildOptions{SignerKeys: signers})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// revisionOf is the revision of an archive.
func revisionOf(t testing.TB, data []byte) string {
	t.Helper()
	b, err := bundle.Read(data, bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b.Manifest.Revision
}

// withMember sets a member of an archive, replacing its body or adding
// it at the end, and leaves the manifest as it was.
func withMember(t testing.TB, data []byte, name string, body []byte) []byte {
	t.Helper()
	out, err := ruletest.SetMember(data, name, body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readMember returns the body of one member of an archive.
func readMember(t testing.TB, data []byte, name string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("no member %s: %v", name, err)
		}
		if hdr.Name == name {
			body, _ := io.ReadAll(tr)
			return body
		}
	}
}

// withChangedFile changes a byte of jax/v3/rules.yaml in an archive and
// leaves its manifest as it was.
func withChangedFile(t testing.TB, data []byte) []byte {
	t.Helper()
	rulesYAML := ruletest.Rules()["jax/v3/rules.yaml"].Data
	return withMember(t, data, "jax/v3/rules.yaml", bytes.Replace(rulesYAML, []byte("cuda"), []byte("cudb"), 1))
}

// decide is how s decides a gpu whose platform_version is version.
func decide(t testing.TB, s *live.Snapshot, version string) engine.Decision {
	t.Helper()
	rs, err := s.Catalog().RuleSet("jax@v3")
	if err != nil {
		t.Fatal(err)
	}
	d, err := rs.Resolve(context.Background(), engine.Input{"platform": "gpu", "platform_version": version, "local_hardware_id": 0})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// openStatic opens rules whose source offers fsys.
func openStatic(t testing.TB, fsys fs.FS, cfg live.Config) *live.Rules {
	t.Helper()
	cfg.Source = live.Static("rules", fsys)
	r, err := live.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// refusal is err's *live.Refusal, or fails the test.
func refusal(t testing.TB, err error) *live.Refusal {
	t.Helper()
	var r *live.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("error = %v (%T), want a *live.Refusal", err, err)
	}
	return r
}

// observer collects events on a channel, for waits with a deadline.
func observer() (func(live.Event), chan live.Event) {
	ch := make(chan live.Event, 100)
	return func(e live.Event) { ch <- e }, ch
}

// waitFor returns the first event that ok accepts, or fails the test
// when its time runs out (testenv.Patience).
func waitFor(t testing.TB, events <-chan live.Event, what string, ok func(live.Event) bool) live.Event {
	t.Helper()
	deadline := time.After(testenv.Patience(t))
	for {
		select {
		case e := <-events:
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no event: %s", what)
		}
	}
}
