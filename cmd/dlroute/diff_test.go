package main

import (
	"fmt"
	"strings"
	"testing"
)

// The main use of diff: an edited copy of the rules against the embedded
// ones. A new marker changes the gpu inputs with that marker, and only them.
func TestDiffEditedRulesDir(t *testing.T) {
	dir, rulesFile, ref := copyAllRules(t)
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
	dir, rulesFile, ref := copyAllRules(t)
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

// The matrix's part of the report, on the edit that motivates it: a
// marker row makes JAX's GPU array whose platform_version is "<unknown>"
// a CUDA array, and every consumer it stopped at __dlpack_device__ now
// takes it as it takes a CUDA array. A doc edit changes no cell.
func TestDiffMatrixMarkerEdit(t *testing.T) {
	dir, rulesFile, ref := copyAllRules(t)
	insertAfter(t, rulesFile, "gpu_markers:", "rows:", "- {marker: unknown, device: kDLCUDA, pinned_host: kDLCUDAHost}")

	args := []string{"diff", "--examples", "0", ref, dir + ":" + ref}
	stdout, stderr, status := runDlroute(t, args...)
	_, matrix, _ := strings.Cut(stdout, "\ninterop matrix, ")
	header := fmt.Sprintf("%s -> %s:%s beside every other library's newest version: 1122 cells compared, 5 change\n", ref, dir, ref)
	torch := "  jax gpu <unknown> device into torch\n" +
		"    - BufferError: Unknown GPU platform for __dlpack__: <unknown>; remedy: jax.device_put(x, jax.devices(\"cpu\")[0])\n" +
		"    + in place (kDLCUDA, 0)\n"
	if !strings.HasPrefix(matrix, header) || !strings.Contains(matrix, torch) || stderr != "" || status != 1 {
		t.Fatalf("dlroute %s\ngot status %d, stderr %q, stdout:\n%s\nwant status 1, the matrix's part starting:\ninterop matrix, %s\nand holding:\n%s", strings.Join(args, " "), status, stderr, stdout, header, torch)
	}
	for _, into := range []string{"cupy", "jax-import", "paddle", "torch", "warp"} {
		if !strings.Contains(matrix, "  jax gpu <unknown> device into "+into+"\n    - BufferError: Unknown GPU platform") {
			t.Errorf("dlroute %s: no change of jax's unknown platform into %s:\n%s", strings.Join(args, " "), into, matrix)
		}
	}

	// jax-export is no library of its own: its two sides compare the
	// matrices of the two rules directories, each library's newest
	// version. Its inputs are refused here (exit 2), and the matrix is
	// still compared.
	args = []string{"diff", "--max-inputs", "1", "jax-export", dir + ":jax-export"}
	stdout, stderr, status = runDlroute(t, args...)
	header = fmt.Sprintf("interop matrix, the embedded rules -> %s (every library's newest version): 1122 cells compared, 5 change\n", dir)
	if !strings.HasPrefix(stdout, header) || !strings.Contains(stdout, torch) || !strings.HasPrefix(stderr, "error: the rules of jax-export@") || status != 2 {
		t.Errorf("dlroute %s\ngot status %d, stderr %q, stdout:\n%s\nwant status 2, the domain's error, and stdout starting:\n%s", strings.Join(args, " "), status, stderr, stdout, header)
	}

	dir, rulesFile, ref = copyAllRules(t)
	insertAfter(t, rulesFile, "gpu_markers:", "doc: >-", "Markers are tried in order.")
	stdout, stderr, status = runDlroute(t, "diff", ref, dir+":"+ref)
	want := fmt.Sprintf("\ninterop matrix, %s -> %s:%s beside every other library's newest version: 1111 cells compared, none changes\n", ref, dir, ref)
	if !strings.HasSuffix(stdout, want) || stderr != "" || status != 0 {
		t.Errorf("dlroute diff %s %s:%s after a doc edit\ngot status %d, stderr %q, stdout:\n%s\nwant status 0, stdout ending:%s", ref, dir, ref, status, stderr, stdout, want)
	}
}
