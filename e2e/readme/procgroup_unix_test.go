//go:build unix

package readme_test

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts cmd and everything it starts (a server a README
// block sends to the background) in a process group of their own.
func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup stops that whole group with SIGTERM, as a person's Ctrl-C would.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
