package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// TestReleaseLength: the release of a ref is at most engine.MaxReleaseLen
// bytes. One past it is refused with CodeTooLong, a message that quotes
// only its start and a hint, before it is read as a release, so no
// answer can carry it; one at the limit is still read as a release (here
// a build of 0.11.0, answered with a warning that quotes it whole).
func TestReleaseLength(t *testing.T) {
	cat := loadEmbedded(t, engine.Options{})
	atLimit := "0.11.0+" + strings.Repeat("a", engine.MaxReleaseLen-len("0.11.0+"))
	if rs, w, err := cat.Lookup("jax==" + atLimit); err != nil || rs.Ref() != "jax@v3" || w != nil {
		t.Errorf("Lookup(a %d-byte release) = %v, %v, %v; want jax@v3 with no warning (a local label is the release's code)", len(atLimit), rs, w, err)
	}
	devAtLimit := "0.11.0.dev1+" + strings.Repeat("a", engine.MaxReleaseLen-len("0.11.0.dev1+"))
	if rs, w, err := cat.Lookup("jax==" + devAtLimit); err != nil || rs.Ref() != "jax@v3" || w == nil || w.Release != devAtLimit {
		t.Errorf("Lookup(a %d-byte development build) = %v, %v, %v; want jax@v3 with a warning", len(devAtLimit), rs, w, err)
	}
	for _, release := range []string{
		atLimit + "a",                           // 129 bytes
		"0.11.0+" + strings.Repeat("a", 60_000), // the attack
		strings.Repeat("9", 200),                // no release either way: the length is said first
	} {
		ref := "jax==" + release
		rs, w, err := cat.Lookup(ref)
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.CodeTooLong || rs != nil || w != nil {
			t.Errorf("Lookup(a %d-byte release) = %v, %v, %v; want code %s", len(release), rs, w, err, engine.CodeTooLong)
			continue
		}
		if len(e.Message) > 200 || !strings.Contains(e.Message, "at most 128") || e.Hint == "" {
			t.Errorf("Lookup(a %d-byte release): message %q (%d bytes), hint %q; want a short message naming the limit, and a hint", len(release), e.Message, len(e.Message), e.Hint)
		}
		if _, err := cat.RuleSet(ref); !errors.As(err, &e) || e.Code != engine.CodeTooLong {
			t.Errorf("RuleSet(a %d-byte release) = %v; want code %s", len(release), err, engine.CodeTooLong)
		}
	}
}
