package machine

import (
	"context"
	"fmt"
	"sync"
)

// PlatformVersion returns a Host.PlatformVersion that answers from
// this machine: it runs Probe once, on first use, and gives each device's
// PlatformVersion by its index. A device the probes did not find is an
// error that says which probes were tried.
func PlatformVersion(env Env, opts ProbeOptions) func(ctx context.Context, device int) (string, error) {
	var (
		once     sync.Once
		devices  []Device
		attempts []Attempt
	)
	return func(ctx context.Context, device int) (string, error) {
		once.Do(func() { devices, attempts = Probe(ctx, env, opts) })
		for _, d := range devices {
			if d.Index == device {
				return d.PlatformVersion, nil
			}
		}
		return "", fmt.Errorf("no device %d on this machine (probes: %v)", device, attempts)
	}
}
