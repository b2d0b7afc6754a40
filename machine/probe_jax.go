package machine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// DefaultJAXTimeout bounds the JAX probe's Python run when
// ProbeOptions.JAXTimeout is 0: importing jax and starting its backends
// takes seconds, a GPU backend sometimes tens of them.
const DefaultJAXTimeout = time.Minute

// jaxScript prints one JSON line: JAX's version and, per local device,
// the platform and the exact client.platform_version JAX's
// __dlpack_device__ tests.
const jaxScript = `import json, jax
print(json.dumps({"jax": jax.__version__, "devices": [
    {"id": d.id, "local_hardware_id": getattr(d, "local_hardware_id", None),
     "platform": d.platform, "platform_version": d.client.platform_version}
    for d in jax.local_devices()]}))`

// jaxAnswer is what jaxScript prints.
type jaxAnswer struct {
	JAX     string `json:"jax"`
	Devices []struct {
		ID              int    `json:"id"`
		LocalHardwareID *int   `json:"local_hardware_id"`
		Platform        string `json:"platform"`
		PlatformVersion string `json:"platform_version"`
	} `json:"devices"`
}

// probeJAX runs Python and asks JAX: the exact strings, for the backend
// JAX picks by default (JAX_PLATFORMS in the environment changes it).
// A device without a local_hardware_id (PJRT does not know it) gets JAX's
// device id as its Index.
func probeJAX(ctx context.Context, env Env, opts ProbeOptions) ([]Device, error) {
	python := opts.Python
	if python == "" {
		python = "python3"
	}
	if env.Run == nil {
		return nil, &ProbeError{Code: CodeNotInstalled, Source: python, Message: "this Env runs no commands (Env.Run is nil)"}
	}
	timeout := opts.JAXTimeout
	if timeout <= 0 {
		timeout = DefaultJAXTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := env.Run(runCtx, python, "-c", jaxScript)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return nil, &ProbeError{Code: CodeNotInstalled, Source: python, Message: "not found", err: err}
	case err != nil && ctx.Err() == nil && runCtx.Err() != nil:
		return nil, &ProbeError{Code: CodeCommandFailed, Source: python, Message: fmt.Sprintf("JAX did not answer within %v", timeout), err: err}
	case err != nil:
		return nil, &ProbeError{Code: CodeCommandFailed, Source: python, Message: err.Error(), err: err}
	}
	// Only the last line: a plugin may print to stdout while JAX starts.
	line := lastNonBlankLine(string(bytes.TrimSpace(out)))
	var answer jaxAnswer
	if err := json.Unmarshal([]byte(line), &answer); err != nil {
		return nil, &ProbeError{Code: CodeBadOutput, Source: python, Message: fmt.Sprintf("JAX's answer is not JSON: %q", clipText(line, 200)), err: err}
	}
	if len(answer.Devices) == 0 {
		return nil, &ProbeError{Code: CodeNoDevices, Source: python, Message: "jax.local_devices() is empty"}
	}
	devices := make([]Device, len(answer.Devices))
	for i, d := range answer.Devices {
		index := d.ID
		if d.LocalHardwareID != nil {
			index = *d.LocalHardwareID
		}
		devices[i] = Device{
			Index:           index,
			Platform:        d.Platform,
			PlatformVersion: d.PlatformVersion,
			Probe:           ProbeJAX,
			Detail:          fmt.Sprintf("jax %s, device id %d: the exact client.platform_version", answer.JAX, d.ID),
		}
	}
	return devices, nil
}

// clipText cuts s to at most n bytes, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
