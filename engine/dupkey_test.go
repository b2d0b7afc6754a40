package engine_test

import (
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// TestDecodeInputRefusesKeysTwice: a key given twice is found however it
// is spelt, and a line without one decodes.
func TestDecodeInputRefusesKeysTwice(t *testing.T) {
	rs := ruleSet(t, loadEmbedded(t, engine.Options{}), "jax")
	for line, want := range map[string]string{
		`{"platform":"gpu","platform":"cpu","platform_version":"cuda"}`:      `input has "platform" twice`,
		`{"platform":"gpu","platform_version":"cuda","\u0070latform":"cpu"}`: `input has "platform" twice`,
		`{"platform":"gpu","platform_version":"a,\"platform\":1"}`:           "",
	} {
		_, err := rs.DecodeInput([]byte(line))
		got := ""
		if err != nil {
			got = err.(*engine.Error).Message
		}
		if got != want {
			t.Errorf("DecodeInput(%s) got %q, want %q", line, got, want)
		}
	}
}
