package attack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestServeUnderAttack runs each of issue 35's ten attacks (All) against
// a `dlroute serve` process of its own, built here without -race as a
// user builds it, and checks what a user sees: the attack refused or
// bounded as its Outcome says, /healthz and the last good rules answering
// throughout (a 503 busy, to be retried, aside), the operator's fix in
// force, and serve's peak resident memory under MaxPeakRSS. How long
// /healthz took is BenchmarkServeUnderAttack's figure, not a verdict.
func TestServeUnderAttack(t *testing.T) {
	testenv.Short(t, "building dlroute and attacking ten serve processes")
	if runtime.GOOS != "linux" {
		t.Skip("serve's peak memory is read from Linux's /proc")
	}
	bin := buildDlroute(t)
	for _, a := range All() {
		t.Run(a.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
			defer cancel()
			res, err := Run(ctx, a, bin, t.TempDir())
			t.Logf("%s: peak RSS %d MB; /healthz %+v, on the diagnostic address %+v; good rules %+v; answers %v; fix in force after %v",
				a.Name, res.PeakRSS>>20, res.Health, res.DiagnosticHealth, res.Good, res.Answers, res.Fix)
			if err != nil {
				t.Fatalf("%s (issue 35: %s): want %s: %v", a.Name, a.Break, a.Outcome, err)
			}
			if res.PeakRSS <= 0 || res.PeakRSS > MaxPeakRSS {
				t.Errorf("%s: serve's peak RSS was %d MB; want at most %d MB (MaxPeakRSS)", a.Name, res.PeakRSS>>20, MaxPeakRSS>>20)
			}
			for _, h := range []struct {
				where string
				p     Probes
			}{{"", res.Health}, {" on the diagnostic address", res.DiagnosticHealth}} {
				if h.p.N == 0 || h.p.Failed > 0 || h.p.Busy > 0 {
					t.Errorf("%s: /healthz%s answered %d times, failed %d (%s); want every probe answered 200", a.Name, h.where, h.p.N, h.p.Failed, h.p.LastFailure)
				}
			}
			if res.Good.N == 0 || res.Good.Failed > 0 {
				t.Errorf("%s: the good rules were asked %d times and failed %d (%s); want each answered, or refused as busy", a.Name, res.Good.N, res.Good.Failed, res.Good.LastFailure)
			}
		})
	}
}

// BenchmarkServeUnderAttack runs each attack once per iteration against
// a new serve and reports serve's peak RSS and RSS after the attack, the
// slowest /healthz (on the API's address and on the diagnostic one) and
// good decision during it, and how long the
// operator's fix took to be in force, and the CPU serve used meanwhile:
// BENCHMARKS.md's figures.
//
//	go test ./cmd/dlroute/internal/serve/attack -run '^$' -bench ServeUnderAttack -benchtime 1x
func BenchmarkServeUnderAttack(b *testing.B) {
	bin := buildDlroute(b)
	for _, a := range All() {
		b.Run(a.Name, func(b *testing.B) {
			var worst Result
			for range b.N {
				res, err := Run(context.Background(), a, bin, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				worst.PeakRSS = max(worst.PeakRSS, res.PeakRSS)
				worst.RSSAfter = max(worst.RSSAfter, res.RSSAfter)
				worst.Health.Worst = max(worst.Health.Worst, res.Health.Worst)
				worst.DiagnosticHealth.Worst = max(worst.DiagnosticHealth.Worst, res.DiagnosticHealth.Worst)
				worst.Good.Worst = max(worst.Good.Worst, res.Good.Worst)
				worst.Fix = max(worst.Fix, res.Fix)
				worst.CPU = max(worst.CPU, res.CPU)
			}
			b.ReportMetric(float64(worst.PeakRSS>>20), "peak-MB")
			b.ReportMetric(float64(worst.RSSAfter>>20), "after-MB")
			b.ReportMetric(float64(worst.Health.Worst.Milliseconds()), "healthz-worst-ms")
			b.ReportMetric(float64(worst.DiagnosticHealth.Worst.Milliseconds()), "diag-healthz-worst-ms")
			b.ReportMetric(float64(worst.Good.Worst.Milliseconds()), "good-worst-ms")
			b.ReportMetric(float64(worst.Fix.Milliseconds()), "fix-ms")
			b.ReportMetric(float64(worst.CPU.Milliseconds()), "serve-cpu-ms")
		})
	}
}

// TestServeStartsWithNoGoodRules: serve started on rules that both
// engines refuse (2,000 guarded slow rules: issue 35's fifth break, which
// once killed only `--engine wasm`) exits 1 and says why, the same on
// both: the code, each position with its source line and a hint, and no
// guest stack.
func TestServeStartsWithNoGoodRules(t *testing.T) {
	testenv.Short(t, "building dlroute and its module")
	bin := buildDlroute(t)
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, ruletest.WithSlowRules(ruletest.Rules(), 2000)); err != nil {
		t.Fatal(err)
	}
	said := map[string]string{}
	for _, engine := range []string{"native", "wasm"} {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
		out, err := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--keep", "off", "--engine", engine, "--rules", dir).CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("serve --engine %s of rules that do not load: %v\n%s\nwant exit status 1", engine, err, out)
		}
		var why []string // the lines that say why, less the log's time and any line on building the module
		for line := range strings.Lines(string(out)) {
			if _, rest, ok := strings.Cut(line, " level="); ok && strings.HasPrefix(line, "time=") {
				line = "level=" + rest
			}
			if !strings.HasPrefix(line, "building ") {
				why = append(why, line)
			}
		}
		said[engine] = strings.Join(why, "")
		if !strings.Contains(said[engine], "code=decision_cost") || !strings.Contains(said[engine], "error: "+dir+"/jax/v3/rules.yaml:") ||
			!strings.Contains(said[engine], "\nhint: ") || strings.Contains(said[engine], "goroutine ") || len(why) > 20 {
			t.Errorf("serve --engine %s said:\n%s\nwant decision_cost at a position in jax/v3/rules.yaml, a hint, and no stack", engine, out)
		}
	}
	if said["native"] != said["wasm"] {
		t.Errorf("serve refuses the rules differently natively:\n%s\nand with --engine wasm:\n%s", said["native"], said["wasm"])
	}
}

// buildDlroute builds the dlroute command, once for the test binary:
// the binary a user runs, without the test binary's -race.
func buildDlroute(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "dlroute-attack-")
		if err != nil {
			built.err = err
			return
		}
		built.dir, built.path = dir, filepath.Join(dir, "dlroute")
		if out, err := exec.Command("go", "build", "-o", built.path, "github.com/dlroute/dlroute/cmd/dlroute").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

var built struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	if ChildMain() {
		return
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
