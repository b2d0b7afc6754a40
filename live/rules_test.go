package live_test

import (
	"context"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

const unknownGPU = "Unknown GPU platform for __dlpack__: nvfork 1.0"

func TestOfferActivates(t *testing.T) {
	observe, events := observer()
	r := openStatic(t, ruletest.Rules(), live.Config{Observe: observe})
	a := r.Current()
	waitFor(t, events, "the first activation", func(e live.Event) bool { return e.Outcome == live.Activated })
	if d := decide(t, a, "nvfork 1.0"); d.Error == nil || d.Error.Message != unknownGPU {
		t.Fatalf("before: nvfork decided %v, want %q", d, unknownGPU)
	}

	b := archive(t, ruletest.WithMarker(ruletest.Rules(), "nvfork"))
	if err := r.Offer(context.Background(), &live.Candidate{Origin: "b.tar.gz", Archive: b}); err != nil {
		t.Fatalf("Offer(b): %v", err)
	}
	e := waitFor(t, events, "b's activation", func(e live.Event) bool { return e.Outcome == live.Activated })
	s := r.Current()
	if s == a || e.Snapshot != s || s.Revision() != revisionOf(t, b) || s.Origin() != "b.tar.gz" {
		t.Fatalf("after Offer(b): revision %s from %s, want %s from b.tar.gz", s.Revision(), s.Origin(), revisionOf(t, b))
	}
	if d := decide(t, s, "nvfork 1.0"); d.DeviceType != "kDLCUDA" {
		t.Errorf("after: nvfork decided %v, want kDLCUDA", d)
	}
	if d := decide(t, a, "nvfork 1.0"); d.Error == nil {
		t.Errorf("the replaced snapshot changed its decision: %v", d)
	}

	// The same bundle again changes nothing.
	if err := r.Offer(context.Background(), &live.Candidate{Origin: "b again", Archive: b}); err != nil {
		t.Fatalf("Offer(b) again: %v", err)
	}
	st := r.Status()
	if st.Activations != 2 || st.LastCheck.Outcome != live.Unchanged || st.Active.Revision != s.Revision() || st.Active.Origin != "b.tar.gz" {
		t.Errorf("Status() = %d activations, last check %s, active %s from %s; want 2, unchanged, %s from b.tar.gz",
			st.Activations, st.LastCheck.Outcome, st.Active.Revision, st.Active.Origin, s.Revision())
	}
}

// TestRefusalsKeepServing offers each bad candidate of the issue: every
// one is refused with its stage and code, in the status and to the
// observer, and the last good rules decide as before.
func TestRefusalsKeepServing(t *testing.T) {
	private, public, _ := bundle.GenerateKey("dlroute-rules")
	_, otherPublic, _ := bundle.GenerateKey("someone-else")
	good := ruletest.WithMarker(ruletest.Rules(), "nvfork")
	signed := archive(t, good, private)
	observe, events := observer()
	src := &offerSource{c: &live.Candidate{Origin: "good", Archive: signed}}
	r, err := live.Open(context.Background(), live.Config{Source: src, Gate: live.Gate{Keys: []string{public}}, Observe: observe})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	rev := r.Current().Revision()

	tampered := withChangedFile(t, signed)
	tests := []struct {
		name  string
		data  []byte
		stage live.Stage
		code  string
	}{
		{"a file whose digest does not match", tampered, live.StageVerify, "digest_mismatch"},
		{"no signature, with a key set", archive(t, good), live.StageVerify, "unsigned"},
		{"signed by another key", archive(t, good, mustPrivate(t, otherPublic)), live.StageVerify, "unknown_signer"},
		{"a bad signature", withMember(t, signed, bundle.ManifestPath, tamperManifest(t, signed)), live.StageVerify, "bad_signature"},
		{"a truncated archive", signed[:len(signed)-100], live.StageVerify, "truncated"},
		{"a path that escapes its folder", withMember(t, signed, "jax/../../escape", []byte("x")), live.StageVerify, "bad_path"},
		{"a version whose tests fail", archive(t, ruletest.WithCase(ruletest.Rules(), "nvfork"), private), live.StageTest, "test_failure"},
		{"a version that does not compile", archive(t, ruletest.WithTypo(good), private), live.StageCompile, "cel_type"},
		{"an import left out", archive(t, ruletest.Without(good, "jax/v3"), private), live.StageCompile, "import"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src.c = &live.Candidate{Origin: tt.name, Archive: tt.data}
			ref := refusal(t, r.Check(context.Background()))
			if ref.Stage != tt.stage || string(ref.Code) != tt.code {
				t.Fatalf("Check(%s) refused at %s with %s (%s); want %s, %s", tt.name, ref.Stage, ref.Code, ref.Reason, tt.stage, tt.code)
			}
			e := waitFor(t, events, "the refusal", func(e live.Event) bool { return e.Outcome == live.Refused })
			if e.Refusal != ref {
				t.Errorf("the observer saw %v, want %v", e.Refusal, ref)
			}
			st := r.Status()
			if st.LastRefusal != ref || st.Refusals != i+1 || st.Active.Revision != rev {
				t.Errorf("Status() = last refusal %v, %d refusals, active %s; want %v, %d, %s", st.LastRefusal, st.Refusals, st.Active.Revision, ref, i+1, rev)
			}
			if s := r.Current(); s.Revision() != rev || decide(t, s, "nvfork 1.0").DeviceType != "kDLCUDA" {
				t.Errorf("after the refusal, %s decides nvfork as %v; want %s deciding kDLCUDA", s.Revision(), decide(t, s, "nvfork 1.0"), rev)
			}
		})
	}
}

// offerSource offers whatever candidate the test put in it.
type offerSource struct{ c *live.Candidate }

func (o *offerSource) Fetch(context.Context) (*live.Candidate, error) { return o.c, nil }
func (o *offerSource) String() string                                 { return "test source" }

// mustPrivate makes a new key with the public key's name: a signature by
// it names the same signer with another key.
func mustPrivate(t testing.TB, public string) string {
	t.Helper()
	name, _ := bundle.CheckPublicKey(public)
	private, _, err := bundle.GenerateKey(name[:len(name)-9])
	if err != nil {
		t.Fatal(err)
	}
	return private
}

// tamperManifest returns a signed archive's manifest with one byte of its
// text changed.
func tamperManifest(t testing.TB, data []byte) []byte {
	t.Helper()
	b, err := bundle.Read(data, bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := readMember(t, data, bundle.ManifestPath)
	i := len(b.Manifest.Revision) // somewhere in the text
	for m[i] == '\n' || m[i] == ' ' {
		i++
	}
	m[i] ^= 1
	return m
}

// Rules from New have nothing in force until a check activates one. A
// refusal the same as the check before's is marked Repeated, as a folder
// left broken is at every poll; a different one, or one after something
// else, is not.
func TestNewAndRepeatedRefusals(t *testing.T) {
	ctx := context.Background()
	broken := ruletest.WithTypo(ruletest.Rules())
	observe, events := observer()
	r, err := live.New(live.Config{Source: live.Static("rules", broken), Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	if r.Current() != nil || r.Acquire() != nil {
		t.Fatalf("rules from New have something in force")
	}
	for i, want := range []bool{false, true, true} {
		if err := r.Check(ctx); err == nil {
			t.Fatalf("check %d of the typo passed", i)
		}
		if e := waitFor(t, events, "a refusal", func(e live.Event) bool { return e.Outcome == live.Refused }); e.Repeated != want {
			t.Errorf("check %d of the same typo: Repeated %v, want %v", i, e.Repeated, want)
		}
	}
	other := &live.Candidate{Origin: "rules", Dir: ruletest.WithTypo(ruletest.WithMarker(ruletest.Rules(), "nvfork"))}
	if err := r.Offer(ctx, other); err == nil {
		t.Fatalf("the other typo passed")
	}
	if e := waitFor(t, events, "the other refusal", func(e live.Event) bool { return e.Outcome == live.Refused }); e.Repeated {
		t.Errorf("a refusal of other files is marked Repeated")
	}
	if err := r.Offer(ctx, &live.Candidate{Origin: "rules", Dir: ruletest.Rules()}); err != nil || r.Current() == nil {
		t.Fatalf("good rules offered to rules from New: %v, in force %v", err, r.Current() != nil)
	}
	if err := r.Check(ctx); err == nil {
		t.Fatalf("the typo passed")
	}
	if e := waitFor(t, events, "the refusal after an activation", func(e live.Event) bool { return e.Outcome == live.Refused }); e.Repeated {
		t.Errorf("a refusal after an activation is marked Repeated")
	}
}
