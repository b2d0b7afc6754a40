package live

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		failures int
		want     time.Duration
	}{
		{0, 10 * time.Second},
		{1, 20 * time.Second},
		{2, 40 * time.Second},
		{3, 80 * time.Second},
		{4, 80 * time.Second},
		{100, 80 * time.Second},
	} {
		for range 20 {
			got := backoff(10*time.Second, 80*time.Second, tt.failures)
			if got < tt.want*9/10 || got > tt.want*11/10 {
				t.Errorf("backoff(10s, 80s, %d) = %s, want %s give or take a tenth", tt.failures, got, tt.want)
			}
		}
	}
}
