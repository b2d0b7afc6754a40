package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/ctest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/libdlroute/internal/capi"
	"github.com/dlroute/dlroute/rules"
)

// TestContract runs testdata/contract.c: what a C caller may do to the
// library (NULL pointers, made-up and closed handles, small buffers,
// threads, fork), each answered by a status, never a crash or a hang.
func TestContract(t *testing.T) {
	prog := ctest.Program(t, ".", "testdata/contract.c")
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
	defer cancel()
	out, err := exec.CommandContext(ctx, prog).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("contract.c hung (killed when the test's time ran out); it wrote:\n%s", out)
	}
	if err != nil {
		t.Fatalf("contract.c: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, " passed, 0 failed") {
		t.Fatalf("contract.c ended with %q:\n%s", last, out)
	}
}

// TestExample runs the C example, example/route.c, on the seed's input
// and others, and wants for each line what the engine answers for it.
func TestExample(t *testing.T) {
	prog := ctest.Program(t, ".", "example/route.c")
	inputs := []string{
		`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0}`,
		`{"platform":"gpu","platform_version":"rocm 60300","memory_kind":"pinned_host","local_hardware_id":1}`,
		`{"platform":"cpu","platform_version":"cpu","local_hardware_id":null}`,
		`{"platform":7}`,
		`not json`,
	}
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"jax", "jax@v1", "exchange"} {
		rs, err := cat.RuleSet(ref)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		for _, in := range inputs {
			out, err := rs.ResolveJSON(context.Background(), []byte(in))
			want.Write(contract.Line(1, out, err))
			want.WriteByte('\n')
		}
		cmd := exec.Command(prog, ref)
		cmd.Stdin = strings.NewReader(strings.Join(inputs, "\n") + "\n")
		got, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("route %s: exit status %d (%v), want 1 (two lines are not inputs)", ref, code, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("route %s:\n got %s\nwant %s", ref, got, want.Bytes())
		}
	}
}

// TestHeaderLimits: dlroute.h's limits and status are capi's, which
// enforces them.
func TestHeaderLimits(t *testing.T) {
	header, err := os.ReadFile("dlroute.h")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"DLROUTE_MAX_INPUT_LEN": capi.MaxInputLen,
		"DLROUTE_MAX_OPEN":      capi.MaxOpenRules,
		"DLROUTE_DEADLINE_MS":   capi.Deadline.Milliseconds(),
		"DLROUTE_TOO_MANY_OPEN": int64(capi.StatusTooManyOpen),
		"DLROUTE_INTERNAL":      int64(capi.StatusInternal),
		"DLROUTE_FORKED":        int64(capi.StatusForked),
	}
	for name, v := range want {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)\b`).FindSubmatch(header)
		if m == nil || string(m[1]) != strconv.FormatInt(v, 10) {
			t.Errorf("dlroute.h: %s is %q; capi's is %d", name, m, v)
		}
	}
}
