package machine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// SystemEnv returns the Env of the machine this process runs on: its file
// system from "/", dlopen through purego (no cgo), its environment, and
// commands run with os/exec. Loading libraries is not supported on
// operating systems purego has no dlopen for (Windows); there every
// library probe reports CodeLoadFailed.
func SystemEnv() Env {
	return Env{
		FS:     os.DirFS("/"),
		Open:   openSharedLibrary,
		Getenv: os.Getenv,
		Run:    runCommand,
	}
}

// runCommand is SystemEnv's Env.Run: the command's standard output, or an
// error that ends with the last line it wrote to standard error (Python's
// "ModuleNotFoundError: No module named 'jax'").
func runCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second // a grandchild holding stderr open must not hang us
	out, err := cmd.Output()
	if err != nil {
		if last := lastNonBlankLine(stderr.String()); last != "" {
			return out, fmt.Errorf("%w: %s", err, last)
		}
		return out, err
	}
	return out, nil
}

// lastNonBlankLine is the last non-blank line of s, trimmed.
func lastNonBlankLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
