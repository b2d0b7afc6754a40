package main

import (
	"fmt"
	"strings"
	"testing"
)

// The main use of diff: an edited copy of the rules against the embedded
// ones. A new marker changes the gpu inputs with that marker, and only them.
func TestDiffEditedRulesDir(t *testing.T) {
	dir, rulesFile, ref := copyRules(t)
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}")

	args := []string{"diff", "--examples", "100", ref, dir + ":" + ref}
	stdout, stderr, status := runDlroute(t, args...)
	header := fmt.Sprintf("%s -> %s:%s: 320 inputs derived from the rules, 8 decide differently, in 3 groups\n", ref, dir, ref)
	if !strings.HasPrefix(stdout, header) || stderr != "" || status != 1 {
		t.Fatalf("dlroute %s\ngot status %d, stderr %q, stdout:\n%s\nwant status 1, stdout starting:\n%s", strings.Join(args, " "), status, stderr, stdout, header)
	}
	if !strings.Contains(stdout, `  platform_version:  ["cuda","rocm","oneapi","nvfork","<unknown>"]`) {
		t.Errorf("dlroute %s: the domain lacks nvfork:\n%s", strings.Join(args, " "), stdout)
	}
	inputs := 0
	for line := range strings.Lines(stdout) {
		if strings.HasPrefix(line, "  {") {
			inputs++
			if !strings.Contains(line, `"platform":"gpu","platform_version":"nvfork"`) {
				t.Errorf("dlroute %s: an input without the new marker changed: %s", strings.Join(args, " "), line)
			}
		}
	}
	if inputs != 8 {
		t.Errorf("dlroute %s: %d example inputs, want all 8:\n%s", strings.Join(args, " "), inputs, stdout)
	}

	// --rules DIR reads both sides from DIR.
	if stdout, stderr, status := runDlroute(t, "diff", "--rules", dir, ref, ref); status != 0 || stderr != "" || !strings.Contains(stdout, "none decides differently") {
		t.Errorf("dlroute diff --rules DIR %s %s: got status %d, stderr %q, stdout:\n%s", ref, ref, status, stderr, stdout)
	}
}

// A rule that fails at run time is a difference to report, not an error
// of diff.
func TestDiffEvalError(t *testing.T) {
	dir, rulesFile, ref := copyRules(t)
	line := insertAfter(t, rulesFile, "rules:", "rules:",
		"- id: divides-by-zero",
		"  when: platform == 'boom' && 1 / (shards - 1) > 0",
		"  device: {type: kDLCPU, id: 0}") + 1

	args := []string{"diff", "--examples", "1", ref, dir + ":" + ref}
	stdout, stderr, status := runDlroute(t, args...)
	group := "unsupported-platform (BufferError) -> eval_error: 32 inputs\n"
	failure := fmt.Sprintf(`+ {"eval_error":{"code":"eval_error","message":"division by zero","position":{"file":%q,"line":%d,"column":11}`, rulesFile, line)
	if !strings.Contains(stdout, group) || !strings.Contains(stdout, failure) || stderr != "" || status != 1 {
		t.Errorf("dlroute %s\ngot status %d, stderr %q, stdout:\n%s\nwant status 1, and in stdout:\n%s    %s", strings.Join(args, " "), status, stderr, stdout, group, failure)
	}
}
