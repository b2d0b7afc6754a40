package live_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/live"
	"github.com/dlroute/dlroute/rules"
)

func TestGateAdmit(t *testing.T) {
	testenv.ContentOnly(t)
	t.Parallel() // CPU-bound, beside TestHTTPSource's wait
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	base := ruletest.Rules()
	good := archive(t, base)
	signed := archive(t, base, private)
	prepareFails := func(context.Context, *live.Snapshot) (io.Closer, error) { return nil, errors.New("the module is gone") }

	tests := []struct {
		name      string
		gate      live.Gate
		c         *live.Candidate
		stage     live.Stage // "" for admitted
		code      string
		reasonHas string
	}{
		{"the embedded rules", live.Gate{}, &live.Candidate{Origin: "rules", Dir: rules.FS}, "", "", ""},
		{"a bundle", live.Gate{}, &live.Candidate{Origin: "b.tar.gz", Archive: good}, "", "", ""},
		{"a signed bundle, with the key", live.Gate{Keys: []string{public}}, &live.Candidate{Origin: "b.tar.gz", Archive: signed}, "", "", ""},
		{"an unsigned bundle, with a key", live.Gate{Keys: []string{public}}, &live.Candidate{Origin: "b.tar.gz", Archive: good}, live.StageVerify, "unsigned", "not signed"},
		{"a directory, with a key", live.Gate{Keys: []string{public}}, &live.Candidate{Origin: "rules", Dir: rules.FS}, live.StageVerify, "unsigned", "not signed"},
		{"a file changed", live.Gate{}, &live.Candidate{Origin: "b.tar.gz", Archive: withChangedFile(t, good)}, live.StageVerify, "digest_mismatch", "jax/v3/rules.yaml"},
		{"truncated", live.Gate{}, &live.Candidate{Origin: "b.tar.gz", Archive: good[:len(good)/3]}, live.StageVerify, "truncated", "truncated"},
		{"a path with ../", live.Gate{}, &live.Candidate{Origin: "b.tar.gz", Archive: withMember(t, good, "../../etc/cron.d/x", []byte("x"))}, live.StageVerify, "bad_path", "../../etc/cron.d/x"},
		{"an import left out", live.Gate{}, &live.Candidate{Origin: "rules", Dir: ruletest.Without(base, "jax/v3")}, live.StageCompile, "import", "rules/exchange/v1/rules.yaml:11:8: import\n"},
		{"a typo", live.Gate{}, &live.Candidate{Origin: "rules", Dir: ruletest.WithTypo(base)}, live.StageCompile, "cel_type", "rules/jax/v3/rules.yaml:"},
		{"a failing test", live.Gate{}, &live.Candidate{Origin: "rules", Dir: ruletest.WithCase(base, "nvfork")}, live.StageTest, "test_failure", "rules/jax/v3/tests.yaml:"},
		{"prepare fails", live.Gate{Prepare: prepareFails}, &live.Candidate{Origin: "rules", Dir: rules.FS}, live.StagePrepare, "prepare_failed", "the module is gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.gate.Admit(context.Background(), tt.c)
			if tt.stage == "" {
				if err != nil {
					t.Fatalf("Admit(%s) = %v, want admitted", tt.name, err)
				}
				if want := len(s.Catalog().RuleSets()); len(s.Manifest().RuleSets) != want || want < 2 {
					t.Errorf("Admit(%s) rule sets = %v, want the %d versions compiled", tt.name, s.Manifest().RuleSets, want)
				}
				return
			}
			r := refusal(t, err)
			if r.Stage != tt.stage || string(r.Code) != tt.code || !strings.Contains(r.Reason, tt.reasonHas) {
				t.Errorf("Admit(%s) refused at %s with %s: %q; want %s, %s, a reason that says %q", tt.name, r.Stage, r.Code, r.Reason, tt.stage, tt.code, tt.reasonHas)
			}
			if s != nil {
				t.Errorf("Admit(%s) returned a snapshot with its refusal", tt.name)
			}
		})
	}
}

func TestGateSignedBy(t *testing.T) {
	testenv.ContentOnly(t)
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	s, err := live.Gate{Keys: []string{public}}.Admit(context.Background(), &live.Candidate{Origin: "b", Archive: archive(t, rules.FS, private)})
	if err != nil {
		t.Fatal(err)
	}
	name, _ := bundle.CheckPublicKey(public)
	if got := s.SignedBy(); !slices.Equal(got, []string{name}) {
		t.Errorf("SignedBy() = %v, want [%s]", got, name)
	}
}
