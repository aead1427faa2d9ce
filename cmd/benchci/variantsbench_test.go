package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/benchci/benchci/internal/variants"
)

// BenchmarkVariantVerdicts measures the verdict across variants on the
// simulator: N times (BENCHCI_VARIANT_RUNS, default 20), each with its
// own workload seed, a suite of two identical variants and a 30% slower
// third runs interleaved capacity searches. It reports how often the two
// identical ones were a tie (ties_identical), how often the slower one
// ranked below the others for real (slower_below), and how often its
// capacity ratio was also within 10% of 1/1.3 (slower_ratio). That ratio
// is the truth only where capacity is saturation; under Poisson arrivals
// and a tight TTFT SLO it is not (the threshold does not scale with the
// step time), so slower_ratio measures the workload as much as benchci.
// A repetition takes about two minutes:
//
//	go test -run XXX -bench VariantVerdicts -benchtime 1x ./cmd/benchci
func BenchmarkVariantVerdicts(b *testing.B) {
	n := runsFromEnv("BENCHCI_VARIANT_RUNS", 20)
	dir := b.TempDir()
	for b.Loop() {
		ties, below, ranked := 0, 0, 0
		for i := range n {
			path := writeSuite(b, dir, fmt.Sprintf("trio%d", i), fmt.Sprintf(`
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(20), arrival: b.arrival.poisson(), seed: %d },
  sweep: b.sweep.capacity(min=10, max=100, precision=0.05, duration='4s', warmup='500ms'),
  slos: [b.slo.p90('ttft', '<', '30ms')],
  variants: {
    a: {}, b: {},
    slow: { sim: { step_base: '2.6ms', decode_per_seq: '650us', prefill_per_token: '13us' } },
  },
  order: 'interleaved',`, 100+i))
			var out, errOut bytes.Buffer
			results := filepath.Join(dir, "r"+strconv.Itoa(i))
			if code := run(context.Background(), &out, &errOut, []string{"run", "--progress=false", "--results", results, path}); code != 0 {
				b.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			data, err := os.ReadFile(filepath.Join(results, fmt.Sprintf("trio%d.variants.json", i)))
			var r variants.Report
			if err != nil || json.Unmarshal(data, &r) != nil {
				b.Fatal(err)
			}
			caps := map[string]float64{}
			for _, v := range r.Variants {
				caps[v.Name] = v.Capacity.Rate
			}
			v := r.Verdicts[0]
			last := v.Standings[len(v.Standings)-1]
			tie := slices.Contains(v.Tied, "a") && slices.Contains(v.Tied, "b")
			ratio := caps["slow"] / max(caps["a"], caps["b"])
			real := last.Variant == "slow" && last.Real
			if tie {
				ties++
			}
			if real {
				below++
			}
			if real && ratio > 0.9/1.3 && ratio < 1.1/1.3 {
				ranked++
			}
			b.Logf("seed %d: capacities a %.1f b %.1f slow %.1f (ratio %.3f): %s", 100+i, caps["a"], caps["b"], caps["slow"], ratio, v.Answer)
		}
		b.ReportMetric(float64(ties), "ties_identical")
		b.ReportMetric(float64(below), "slower_below")
		b.ReportMetric(float64(ranked), "slower_ratio")
		b.ReportMetric(float64(n), "runs")
	}
}
