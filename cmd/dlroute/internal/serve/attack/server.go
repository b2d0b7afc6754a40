// Package attack reproduces, against a real `dlroute serve` process, the
// ten ways issue 35 found to kill, starve or freeze a host (All), and
// measures what a user of the host sees while each runs: serve's peak
// resident memory, how /healthz answers on the API's address and on the
// diagnostic one (asked from a process of its own, as a load balancer
// asks), whether the last good rules keep deciding, and how long the
// operator's fix takes to be in force. The bodies attack's clients run in
// a process of lower priority (ClientNice), as if from another machine.
//
// Run is one attack against a fresh server. TestServeUnderAttack holds
// each Result to its bounds (MaxPeakRSS, no failed probe), against the
// dlroute binary it builds; BenchmarkServeUnderAttack reports the figures
// BENCHMARKS.md gives. The latencies are figures, never verdicts: a busy
// machine makes them long, not wrong.
package attack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// Server is a `dlroute serve` process the attacks run against.
type Server struct {
	// URL is where it listens, http://127.0.0.1:PORT; DiagnosticURL is
	// its diagnostic address (--diagnostic-addr), where only /healthz,
	// /v1/status and /metrics are answered.
	URL, DiagnosticURL string
	cmd                *exec.Cmd
	log                *testenv.Buffer
	// exited is closed once the process has exited; err is then its
	// exit error.
	exited chan struct{}
	err    error
}

var listening = regexp.MustCompile(`msg=listening url=(http://\S+) diagnostic=(http://\S+)`)

// Start runs `bin serve --addr 127.0.0.1:0 --diagnostic-addr 127.0.0.1:0
// args...`, with env added to
// this process's environment, and returns once it listens, or the error
// it exited with and its log. ctx bounds the wait for it to listen, not
// its life: Stop ends it.
func Start(ctx context.Context, bin string, env []string, args ...string) (*Server, error) {
	s := &Server{log: &testenv.Buffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--diagnostic-addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.log
	s.cmd.Stdout = s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	for {
		if m := listening.FindStringSubmatch(s.log.String()); m != nil {
			s.URL, s.DiagnosticURL = m[1], m[2]
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("serve %s exited before it listened (%v):\n%s", strings.Join(args, " "), s.err, s.log)
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("serve %s did not listen: %w\n%s", strings.Join(args, " "), ctx.Err(), s.log)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Log is what serve has written to its stderr so far.
func (s *Server) Log() string { return s.log.String() }

// Running reports whether the process has not exited.
func (s *Server) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// PeakRSS is the most resident memory the process has held since it
// started (VmHWM in /proc/PID/status), in bytes: Linux only.
func (s *Server) PeakRSS() (int64, error) { return procStatus(s.cmd.Process.Pid, "VmHWM") }

// RSS is the resident memory the process holds now (VmRSS), in bytes.
func (s *Server) RSS() (int64, error) { return procStatus(s.cmd.Process.Pid, "VmRSS") }

// CPU is the processor time the process has used so far, user and
// system (utime and stime in /proc/PID/stat, in Linux's USER_HZ of 100
// ticks a second).
func (s *Server) CPU() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command's name, in parentheses, may hold spaces: count the
	// fields after it. utime and stime are fields 14 and 15.
	_, rest, _ := bytes.Cut(data, []byte(") "))
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", s.cmd.Process.Pid, data)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100), errors.Join(err1, err2)
}

// Stop sends SIGTERM, as an operator would, and waits for the exit; past
// a minute it kills the process. It returns the exit error, if any.
func (s *Server) Stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		<-s.exited
		return errors.New("serve had not exited a minute after SIGTERM")
	}
	return s.err
}

// procStatus reads a field of /proc/PID/status given in kB, in bytes.
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("%s: %w (a process's memory is read from Linux's /proc)", field, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
