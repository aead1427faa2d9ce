package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkGateCatchRate measures the gate suite (suites/gate.jsonnet) as
// a detector: one baseline run, then N runs of the same simulator, which
// must not regress, and N runs with the engine step 10% slower, which
// must. It reports false_regressions and caught, each out of N
// (BENCHCI_GATE_RUNS, default 20). A run takes about 25 s, so the whole
// measurement takes 2N+1 of them:
//
//	go test -run XXX -bench GateCatchRate -benchtime 1x ./cmd/benchci
func BenchmarkGateCatchRate(b *testing.B) {
	n := 20
	if v, err := strconv.Atoi(os.Getenv("BENCHCI_GATE_RUNS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	suite := filepath.Join("..", "..", "suites", "gate.jsonnet")
	runOnce := func(name string, extra ...string) string {
		var out, errOut bytes.Buffer
		args := append([]string{"run", "--progress=false", "--baselines", filepath.Join(dir, "none"), "--results", filepath.Join(dir, name)}, extra...)
		if code := run(context.Background(), &out, &errOut, append(args, suite)); code != 0 {
			b.Fatalf("%s: exit %d\n%s\n%s", name, code, out.String(), errOut.String())
		}
		return filepath.Join(dir, name, "gate.json")
	}
	regressed := func(base, cand string) bool {
		var out, errOut bytes.Buffer
		run(context.Background(), &out, &errOut, []string{"compare", "--format", "json", base, cand})
		var r struct {
			Rows []struct{ Metric, Verdict string }
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Rows) == 0 {
			b.Fatalf("compare: %v\n%s\n%s", err, out.String(), errOut.String())
		}
		for _, row := range r.Rows {
			if row.Verdict == "regression" || row.Verdict == "missing" {
				b.Logf("%s: %s %s", filepath.Base(filepath.Dir(cand)), row.Metric, row.Verdict)
				return true
			}
		}
		return false
	}
	for b.Loop() {
		base := runOnce("base")
		var falseRegs, caught int
		for i := range n {
			if regressed(base, runOnce("same"+strconv.Itoa(i))) {
				falseRegs++
			}
			if regressed(base, runOnce("slow"+strconv.Itoa(i), "--tla-str", "step_base=19.8ms")) {
				caught++
			}
		}
		b.ReportMetric(float64(falseRegs), "false_regressions")
		b.ReportMetric(float64(caught), "caught")
		b.ReportMetric(float64(n), "runs_each")
	}
}
