package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
)

// TestRefusalsEchoNoFile: in a watched folder, a link to a file outside
// it is refused as outside_root and its target is never read; a file
// inside that does not parse is refused with its position and code. In
// neither case does a line of the file reach /v1/status, which anyone
// may read, or the log.
func TestRefusalsEchoNoFile(t *testing.T) {
	const secret = "db_password: hunter2-0xSECRET"
	outside := filepath.Join(t.TempDir(), "credentials.yaml")
	if err := os.WriteFile(outside, []byte(secret+"\n  : ["), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, live.Dir(dir), HandlerConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	watching := make(chan struct{})
	go func() { defer close(watching); srv.rules.Watch(ctx) }()
	t.Cleanup(func() { cancel(); <-watching })

	tests := filepath.Join(dir, "jax", "v3", "tests.yaml")
	for _, c := range []struct {
		name, code string
		make       func() error
		reasonHas  string
	}{
		// Each put in place by a rename, so that the folder is never seen
		// without the file.
		{"a link out of the folder", string(live.CodeOutsideRoot), func() error {
			link := filepath.Join(dir, "jax", "v3", ".link")
			if err := os.Symlink(outside, link); err != nil {
				return err
			}
			return os.Rename(link, tests)
		}, "tests.yaml"},
		{"a file that does not parse", "yaml_syntax", func() error {
			return ruletest.WriteFile(tests, []byte(secret+"\n  : ["))
		}, "/jax/v3/tests.yaml:"},
	} {
		refusals := srv.status(t).Refusals
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(testenv.Patience(t))
		for srv.status(t).Refusals == refusals && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		_, body := srv.get(t, "/v1/status")
		st := srv.status(t)
		if st.LastRefusal == nil || string(st.LastRefusal.Code) != c.code || !strings.Contains(st.LastRefusal.Reason, c.reasonHas) {
			t.Fatalf("%s: /v1/status is %s; want a refusal %s that says %q", c.name, body, c.code, c.reasonHas)
		}
		for what, text := range map[string]string{"/v1/status": body, "the log": srv.log.String()} {
			if strings.Contains(text, "hunter2") {
				t.Errorf("%s: %s shows the file's line:\n%s", c.name, what, text)
			}
		}
	}
}
