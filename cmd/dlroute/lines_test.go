package main

// Inputs to resolve --json too large, or too binary, for a transcript.

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

const (
	cudaInput    = `{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}`
	cudaDecision = `{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}`
	cpuInput     = `{"platform":"cpu","platform_version":"cpu"}`
	cpuDecision  = `{"device_type":"kDLCPU","device_type_code":1,"device_id":0,"rule":"cpu","ruleset":"jax@v3"}`
)

// gpuInputOfLen is a GPU input line of n bytes, its platform_version
// padded with x.
func gpuInputOfLen(n int) (line string, versionLen int) {
	const prefix, suffix = `{"platform":"gpu","platform_version":"`, `","local_hardware_id":0}`
	versionLen = n - len(prefix) - len(suffix)
	return prefix + strings.Repeat("x", versionLen) + suffix, versionLen
}

func TestResolveJSONLines(t *testing.T) {
	mib, mibVersion := gpuInputOfLen(1 << 20)
	atLimit, atLimitVersion := gpuInputOfLen(maxLineLen)
	overLimit, _ := gpuInputOfLen(maxLineLen + 10)
	stringTooLong := func(line, n int) string {
		return fmt.Sprintf(`{"input_error":{"line":%d,"code":"too_long","message":"input platform_version is %d bytes long; the limit is %d"}}`, line, n, engine.MaxStringLen)
	}
	badUTF8 := `{"platform":"gpu","platform_version":"cuda` + "\xff\xfe" + ` 12030","local_hardware_id":0}`
	tests := []struct {
		name   string
		stdin  string
		want   []string
		status int
	}{
		{"a 1 MiB platform_version", mib + "\n" + cudaInput + "\n",
			[]string{stringTooLong(1, mibVersion), cudaDecision}, 1},
		{"a line of exactly maxLineLen bytes is read, and its field refused", cpuInput + "\n" + atLimit + "\r\n" + cudaInput + "\n",
			[]string{cpuDecision, stringTooLong(2, atLimitVersion), cudaDecision}, 1},
		{"a line over maxLineLen", cpuInput + "\n" + overLimit + "\n" + cudaInput + "\n",
			[]string{cpuDecision, fmt.Sprintf(`{"input_error":{"line":2,"code":"too_long","message":"line is longer than %d bytes"}}`, maxLineLen), cudaDecision}, 1},
		{"a last line over maxLineLen, without newline", cpuInput + "\n" + overLimit,
			[]string{cpuDecision, fmt.Sprintf(`{"input_error":{"line":2,"code":"too_long","message":"line is longer than %d bytes"}}`, maxLineLen)}, 1},
		{"invalid UTF-8", cudaInput + "\n" + badUTF8 + "\n" + cpuInput + "\n",
			[]string{cudaDecision, fmt.Sprintf(`{"input_error":{"line":2,"code":"invalid_utf8","message":"input is not valid UTF-8 (at byte %d)"}}`, strings.Index(badUTF8, "\xff")), cpuDecision}, 1},
		{"a NUL byte", "\x00\n" + cpuInput + "\n",
			[]string{`{"input_error":{"line":1,"code":"json_syntax","message":"invalid character '\\x00' looking for beginning of value (at byte 1)"}}`, cpuDecision}, 1},
		{"CRLF line endings", cudaInput + "\r\n" + cpuInput + "\r\n",
			[]string{cudaDecision, cpuDecision}, 0},
		{"an empty CRLF line", cudaInput + "\r\n\r\n" + cpuInput + "\r\n",
			[]string{cudaDecision, `{"input_error":{"line":2,"code":"json_syntax","message":"empty input; want a JSON object"}}`, cpuDecision}, 1},
		{"a last line without newline", cudaInput + "\n" + cpuInput,
			[]string{cudaDecision, cpuDecision}, 0},
		{"a last line with CR and no LF", cpuInput + "\r",
			[]string{cpuDecision}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			status := run([]string{"resolve", "--json"}, strings.NewReader(tt.stdin), &stdout, &stderr)
			got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("resolve --json wrote %d lines, want %d:\n%s", len(got), len(tt.want), abbreviate(stdout.String()))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("line %d: got %s\nwant %s", i+1, abbreviate(got[i]), tt.want[i])
				}
			}
			if status != tt.status || stderr.Len() > 0 {
				t.Errorf("status %d, stderr %q; want status %d, no stderr", status, stderr.String(), tt.status)
			}
		})
	}
}

// abbreviate keeps a failure message short when a test line is megabytes.
func abbreviate(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s...(%d bytes)...%s", s[:150], len(s), s[len(s)-150:])
	}
	return s
}

// A process that writes one line and waits for its answer before writing the
// next must get each answer without closing stdin.
func TestResolveJSONAnswersEachLineInTime(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		var stderr strings.Builder
		done <- run([]string{"resolve", "--json"}, inR, outW, &stderr)
		outW.Close()
	}()
	answers := bufio.NewScanner(outR)
	for _, exchange := range [][2]string{{cudaInput, cudaDecision}, {"{", `{"input_error":{"line":2,"code":"json_syntax","message":"unexpected EOF"}}`}, {cpuInput, cpuDecision}} {
		go io.WriteString(inW, exchange[0]+"\n")
		answered := make(chan bool)
		go func() { answered <- answers.Scan() }()
		select {
		case ok := <-answered:
			if !ok || answers.Text() != exchange[1] {
				t.Fatalf("after %s: got %q (%v), want %s", exchange[0], answers.Text(), answers.Err(), exchange[1])
			}
		case <-time.After(testenv.Patience(t)):
			t.Fatalf("after %s: no answer while stdin stays open", exchange[0])
		}
	}
	inW.Close()
	if status := <-done; status != 1 {
		t.Errorf("status %d after a bad line, want 1", status)
	}
}
